/**
 * Finding the server's own processes on this host, from what the server tells about itself (MariaDB/MySQL:
 * its pid file; PostgreSQL: the backend pids of the run's connections and their parent, the postmaster) or
 * from `--server-pid`. A server on another host, or in another pid namespace, is reported, not guessed at.
 */
import { readFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import type { Connection, Target } from '../driver/types.ts';
import type { ProfileNote } from '../metrics/profile-types.ts';
import { childPids, processInfo } from './proc-tasks.ts';

export interface ServerProcess {
  /** The main process: mariadbd/mysqld, or the postmaster. */
  pid: number;
  command: string;
  foundBy: 'pid_file' | 'backend_pid' | 'server_pid';
  /** PostgreSQL forks a process per backend: its children belong to the server too. */
  withChildren: boolean;
}

export type Located = { server: ServerProcess } | { note: ProfileNote };

const WHAT = 'server threads';

/** Whether the target is reached on this machine (loopback, a local socket, or one of our own addresses). */
export function isLocalTarget(target: Target): boolean {
  if (target.driver === 'sqlite' || target.socket !== undefined) return true;
  const host = (target.host ?? 'localhost').replace(/^\[|\]$/g, '').toLowerCase();
  if (
    host === 'localhost' ||
    host === '::1' ||
    host.startsWith('127.') ||
    host === os.hostname().toLowerCase()
  )
    return true;
  for (const addrs of Object.values(os.networkInterfaces())) {
    for (const a of addrs ?? []) if (a.address.toLowerCase() === host) return true;
  }
  return false;
}

/** All pids that make up the server now (the main one, and for PostgreSQL its children). */
export async function serverPids(s: ServerProcess): Promise<number[]> {
  return s.withChildren ? [s.pid, ...(await childPids(s.pid))] : [s.pid];
}

/**
 * Locate the server. `conn` is a connection of our own (not one of the run's), used to ask the server;
 * `sessionIds` are the run's backend pids (PostgreSQL).
 */
export async function locateServer(
  target: Target,
  conn: Connection | undefined,
  sessionIds: readonly number[],
  serverPid: number | undefined,
): Promise<Located> {
  if (serverPid !== undefined) {
    const p = await processInfo(serverPid);
    if (p === undefined) {
      return { note: { what: WHAT, why: `--server-pid ${serverPid}: no such process on this host` } };
    }
    return {
      server: { pid: serverPid, command: p.comm, foundBy: 'server_pid', withChildren: p.comm === 'postgres' },
    };
  }
  if (target.driver === 'sqlite') {
    return {
      note: {
        what: WHAT,
        why: 'SQLite runs inside dbsmack: there is no server process',
        hint: "dbsmack's own CPU time is in client_cpu",
      },
    };
  }
  if (!isLocalTarget(target)) {
    return {
      note: {
        what: WHAT,
        why: `the server (${target.host}) is not on this host, so its /proc cannot be read`,
        hint: 'run dbsmack on the server host, or give --server-pid when the address is local after all',
      },
    };
  }
  if (conn === undefined)
    return { note: { what: WHAT, why: 'could not connect to ask the server for its pid' } };
  return target.driver === 'mysql' ? locateMysql(conn) : locatePostgres(conn, sessionIds);
}

async function locateMysql(conn: Connection): Promise<Located> {
  let file: string;
  try {
    const [row] = await conn.all('SELECT @@pid_file AS pid_file, @@datadir AS datadir');
    file = String(row?.pid_file ?? '');
    if (!path.isAbsolute(file)) file = path.join(String(row?.datadir ?? ''), file);
  } catch (e) {
    return { note: { what: WHAT, why: `cannot read @@pid_file: ${(e as Error).message}` } };
  }
  let pid: number;
  try {
    pid = Number.parseInt((await readFile(file, 'utf8')).trim(), 10);
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    return {
      note: {
        what: WHAT,
        why: `the server's pid file ${file} cannot be read here (${code}): the server is in another container or host, or the file is not ours to read`,
        hint: 'give the server pid with --server-pid',
      },
    };
  }
  const p = Number.isInteger(pid) ? await processInfo(pid) : undefined;
  if (p === undefined || !/mysqld|mariadbd/.test(p.comm)) {
    return {
      note: {
        what: WHAT,
        why: `pid file ${file} names pid ${pid}, which is not a running mysqld/mariadbd here`,
        hint: 'give the server pid with --server-pid',
      },
    };
  }
  return { server: { pid, command: p.comm, foundBy: 'pid_file', withChildren: false } };
}

async function locatePostgres(conn: Connection, sessionIds: readonly number[]): Promise<Located> {
  let backend = sessionIds.find((n) => n > 0);
  if (backend === undefined) {
    try {
      const [row] = await conn.all('SELECT pg_backend_pid() AS pid');
      backend = Number(row?.pid);
    } catch (e) {
      return { note: { what: WHAT, why: `cannot ask pg_backend_pid(): ${(e as Error).message}` } };
    }
  }
  const b = await processInfo(backend);
  if (b === undefined || !b.cmdline.startsWith('postgres')) {
    return {
      note: {
        what: WHAT,
        why: `backend pid ${backend} is not a PostgreSQL process on this host (another host, or another pid namespace)`,
        hint: 'give the postmaster pid with --server-pid',
      },
    };
  }
  const pm = await processInfo(b.ppid);
  if (pm === undefined || pm.comm !== 'postgres') {
    return { note: { what: WHAT, why: `the parent of backend ${backend} is not the postmaster` } };
  }
  return { server: { pid: b.ppid, command: 'postgres', foundBy: 'backend_pid', withChildren: true } };
}
