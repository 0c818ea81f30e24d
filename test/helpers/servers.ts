/**
 * Real servers for integration tests. A test that needs one it cannot reach is skipped with the reason
 * printed; under CI=true it fails instead, so a missing server never passes silently (preconditions.ts).
 *
 * Every test file gets databases of its own: `MYSQL_URL` and `PG_URL` name a database made for this test
 * process on each server, beside the database of `DBSMACK_TEST_MYSQL_URL`/`DBSMACK_TEST_PG_URL` (default
 * `test`), created on the first `needServer` and dropped when the file's tests end. Fixed table names
 * (sbtest1, http_auth, …) therefore never meet another test file, another `npm test` running at the same
 * time, or a benchmark's tables; a test that kills sessions kills only those in its own database.
 */
import { readFileSync } from 'node:fs';
import { after, type TestContext } from 'node:test';
import { loadDriver } from '../../src/driver/index.ts';
import type { Connection, DriverName, Target } from '../../src/driver/types.ts';
import { parseTarget } from '../../src/driver/url.ts';
import { isLocalTarget } from '../../src/probe/server-process.ts';
import { missing } from './preconditions.ts';

type ServerName = Exclude<DriverName, 'sqlite'>;

/** The servers' URLs as configured: their databases hold the per-file databases' names' prefix. */
export const BASE_URLS: Record<ServerName, string> = {
  mysql: process.env.DBSMACK_TEST_MYSQL_URL ?? 'mysql://root@127.0.0.1:3306/test',
  postgres: process.env.DBSMACK_TEST_PG_URL ?? 'postgres://root@127.0.0.1:5432/test',
};

/** `url` with its database replaced by `db` (user information, host and parameters kept). */
export function withDatabase(url: string, db: string): string {
  const cut = url.search(/[?#]/);
  const head = cut < 0 ? url : url.slice(0, cut);
  const rest = cut < 0 ? '' : url.slice(cut);
  return `${head.replace(/^([a-z][a-z0-9+.-]*:\/\/(?:.*@)?[^/]*)(?:\/.*)?$/i, '$1')}/${db}${rest}`;
}

/** The marker in the name of a per-file database: `<base>_dbsmack_t<pid>_<file>`. */
const MARK = /_dbsmack_t(\d+)_[a-z0-9_]*$/;

function ownDatabase(base: string): string {
  // The test file this process runs (node's test runner runs each file in a process of its own).
  const file = (process.argv[1] ?? 'x').replace(/^.*\//, '').replace(/\.test\.[cm]?[jt]s$|\.[cm]?[jt]s$/, '');
  const head = `${base.toLowerCase().replace(/[^a-z0-9_]/g, '_')}_dbsmack_t${process.pid}_`;
  const slug = file.toLowerCase().replace(/[^a-z0-9]+/g, '_');
  return (head + slug).slice(0, 63);
}

const baseDb = (url: string): string => parseTarget(url).database ?? 'test';

/** The database of this test process on each server. */
export const TEST_DATABASES: Record<ServerName, string> = {
  mysql: ownDatabase(baseDb(BASE_URLS.mysql)),
  postgres: ownDatabase(baseDb(BASE_URLS.postgres)),
};

export const MYSQL_URL = withDatabase(BASE_URLS.mysql, TEST_DATABASES.mysql);
export const PG_URL = withDatabase(BASE_URLS.postgres, TEST_DATABASES.postgres);

export const SERVER_URLS: Record<ServerName, string> = {
  mysql: MYSQL_URL,
  postgres: PG_URL,
};

/** Open a library connection (not the load connector) to a target. */
export async function connectTo(target: Target, connectTimeoutMs = 5000): Promise<Connection> {
  return (await loadDriver(target.driver)).connect(target, { connectTimeoutMs });
}

const quote = (driver: ServerName, name: string): string =>
  driver === 'mysql' ? `\`${name}\`` : `"${name}"`;

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** Databases of earlier test processes on this host that died before dropping them (a killed run). */
async function dropStale(driver: ServerName, c: Connection, base: string): Promise<void> {
  const rows =
    driver === 'mysql'
      ? await c.all('SELECT SCHEMA_NAME AS name FROM information_schema.SCHEMATA')
      : await c.all('SELECT datname AS name FROM pg_database');
  const prefix = `${base.toLowerCase().replace(/[^a-z0-9_]/g, '_')}_dbsmack_t`;
  for (const r of rows) {
    const name = String(r.name);
    const m = MARK.exec(name);
    if (!name.startsWith(prefix) || !m || alive(Number(m[1]))) continue;
    await c
      .query(`DROP DATABASE IF EXISTS ${quote(driver, name)}${driver === 'postgres' ? ' WITH (FORCE)' : ''}`)
      .catch(() => {});
  }
}

const made: { driver: ServerName; base: Target; name: string }[] = [];

after(async () => {
  for (const m of made.splice(0)) {
    const c = await connectTo(m.base).catch(() => undefined);
    if (!c) continue;
    try {
      if (m.driver === 'mysql') {
        // A session of a killed client may still hold a table: wait a bounded time for its locks.
        await c.query('SET SESSION lock_wait_timeout = 20');
        await c.query(`DROP DATABASE IF EXISTS ${quote('mysql', m.name)}`);
      } else await c.query(`DROP DATABASE IF EXISTS ${quote('postgres', m.name)} WITH (FORCE)`);
    } catch (e) {
      process.stderr.write(`# could not drop the test database ${m.name}: ${(e as Error).message}\n`);
    } finally {
      await c.close();
    }
  }
});

/** Create this process's database on `driver`; undefined when it is there, else why it cannot be. */
async function createOwn(driver: ServerName): Promise<string | undefined> {
  const base = parseTarget(BASE_URLS[driver]);
  let c: Connection;
  try {
    c = await connectTo(base, 3000);
  } catch (e) {
    return `${base.redactedUrl} is not reachable: ${(e as Error).message}`;
  }
  const name = TEST_DATABASES[driver];
  try {
    if (isLocalTarget(base)) await dropStale(driver, c, baseDb(BASE_URLS[driver]));
    await c.query(
      driver === 'mysql'
        ? `CREATE DATABASE IF NOT EXISTS ${quote(driver, name)}`
        : `CREATE DATABASE ${quote(driver, name)}`,
    );
    made.push({ driver, base, name });
  } catch (e) {
    return `the tests make a database of their own per file, and ${base.redactedUrl} refused CREATE DATABASE ${name}: ${(e as Error).message}`;
  } finally {
    await c.close();
  }
  return probe(SERVER_URLS[driver]);
}

const reachable = new Map<string, Promise<string | undefined>>();

/** Resolves to undefined when the server answers at `url`, or to the reason it does not. */
function probe(url: string): Promise<string | undefined> {
  return (async () => {
    const target = parseTarget(url);
    try {
      await (await connectTo(target, 3000)).close();
      return undefined;
    } catch (e) {
      return `${target.redactedUrl} is not reachable: ${(e as Error).message}`;
    }
  })();
}

/**
 * The target of this file's database on a server, or undefined after skipping the test (fails under
 * CI=true). With `url`, that URL's server as it is (no database of its own is made).
 * Usage: `const target = await needServer(t, 'mysql'); if (!target) return;`
 */
export async function needServer(
  t: TestContext,
  driver: ServerName,
  url?: string,
): Promise<Target | undefined> {
  const key = url ?? `own:${driver}`;
  let p = reachable.get(key);
  if (p === undefined) {
    p = url === undefined ? createOwn(driver) : probe(url);
    reachable.set(key, p);
  }
  const why = await p;
  if (why === undefined) return parseTarget(url ?? SERVER_URLS[driver]);
  missing(t, why);
  return undefined;
}

/**
 * The pid of the server process behind this file's database, when it runs on this host in this pid
 * namespace (MariaDB: its pid file; PostgreSQL: the parent of our backend); otherwise undefined after
 * skipping the test (fails under CI=true). For the tests that read the server's threads in /proc.
 */
export async function needLocalServerPid(t: TestContext, driver: ServerName): Promise<number | undefined> {
  const c = await connectTo(parseTarget(SERVER_URLS[driver]));
  let why: string;
  try {
    if (driver === 'mysql') {
      const [row] = await c.all('SELECT @@pid_file AS f');
      const file = String(row?.f);
      try {
        const pid = Number(readFileSync(file, 'utf8').trim());
        if (/mysqld|mariadbd/.test(procStat(pid)?.comm ?? '')) return pid;
        why = `the pid ${pid} in the server's pid file ${file} is no MariaDB process of this host`;
      } catch (e) {
        why = `the server's pid file ${file} cannot be read (${(e as NodeJS.ErrnoException).code}): it is not on this host`;
      }
    } else {
      const [row] = await c.all('SELECT pg_backend_pid() AS pid');
      const backend = procStat(Number(row?.pid));
      const postmaster = backend && procStat(backend.ppid);
      if (backend?.comm === 'postgres' && postmaster?.comm === 'postgres') return backend.ppid;
      why = `our backend ${String(row?.pid)} is no PostgreSQL process of this host's /proc: the server is elsewhere`;
    }
  } finally {
    await c.close();
  }
  missing(t, why);
  return undefined;
}

function procStat(pid: number): { comm: string; ppid: number } | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const close = stat.lastIndexOf(')');
    return {
      comm: stat.slice(stat.indexOf('(') + 1, close),
      ppid: Number(stat.slice(close + 2).split(' ')[1]),
    };
  } catch {
    return undefined;
  }
}

/**
 * Run `fn` holding a lock of the MySQL/MariaDB server named `name` (GET_LOCK), for a test that changes a
 * state of the whole server and puts it back (performance-schema instruments, the scheduling of the server's
 * threads, a global variable): another test run on the same server that holds the same lock waits, rather
 * than saving this run's changed value as the original and restoring it afterwards.
 */
export async function withServerLock<T>(name: string, fn: () => Promise<T>, timeoutS = 300): Promise<T> {
  const c = await connectTo(parseTarget(SERVER_URLS.mysql));
  try {
    const [row] = await c.all('SELECT GET_LOCK(?, ?) AS got', [name, timeoutS]);
    if (Number(row?.got) !== 1) {
      throw new Error(
        `gave up after ${timeoutS} s waiting for the server lock ${name} (another test run holds it)`,
      );
    }
    return await fn();
  } finally {
    await c.query('SELECT RELEASE_LOCK(?)', [name]).catch(() => {});
    await c.close();
  }
}

/** The lock of the tests that change server-wide state of MariaDB (instruments, thread scheduling). */
export const SERVER_STATE_LOCK = 'dbsmack_tests_server_state';
