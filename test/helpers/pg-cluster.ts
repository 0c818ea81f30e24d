/**
 * A throw-away PostgreSQL cluster (initdb of the installed server, as the `postgres` OS user when the tests
 * run as root), listening on a Unix socket in its own directory only (no TCP port to choose, none to collide
 * with), for tests that need what the shared server must not be put through: its own pg_hba.conf, or a
 * restart. A missing initdb or postgres user skips the test with the reason, and fails it under CI=true,
 * through the precondition helper.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { TestContext } from 'node:test';
import { missing } from './preconditions.ts';

export interface PgCluster {
  /** The directory of the cluster's socket. */
  socketDir: string;
  /** A postgres:// URL for `user` (password percent-encoded) on database postgres, through the socket; it
   * has a query string already (`?host=`), so add parameters with `&`. */
  url(user: string, password?: string): string;
  /** Restart the server (fast shutdown: sessions are terminated), waiting until it accepts connections. */
  restart(): void;
  stop(): void;
}

/** initdb of the installed PostgreSQL, or undefined. */
function initdbPath(): string | undefined {
  try {
    for (const v of readdirSync('/usr/lib/postgresql').sort().reverse()) {
      const p = `/usr/lib/postgresql/${v}/bin/initdb`;
      if (existsSync(p)) return p;
    }
  } catch {}
  return undefined;
}

/** Start a private cluster whose pg_hba.conf holds `hba` (`local …` lines; default: trust for every login). */
export async function startPgCluster(t: TestContext, hba?: string[]): Promise<PgCluster | undefined> {
  const initdb = initdbPath();
  if (initdb === undefined) {
    missing(t, 'no PostgreSQL server binaries (initdb) installed');
    return undefined;
  }
  const bin = path.dirname(initdb);
  const asRoot = process.getuid?.() === 0;
  if (asRoot && spawnSync('id', ['postgres']).status !== 0) {
    missing(t, 'running as root without a postgres OS user to run the server');
    return undefined;
  }
  const run = (cmd: string, args: string[]): void => {
    const r = asRoot
      ? spawnSync('runuser', ['-u', 'postgres', '--', cmd, ...args], { encoding: 'utf8' })
      : spawnSync(cmd, args, { encoding: 'utf8' });
    assert.equal(r.status, 0, `${path.basename(cmd)} failed: ${r.stderr}`);
  };
  const dir = mkdtempSync(path.join(os.tmpdir(), 'dbsmack-pgcluster-'));
  const data = path.join(dir, 'data');
  if (asRoot) spawnSync('chown', ['postgres', dir]);
  // Only names the socket file in `dir`.
  const port = 5432;
  const pgCtl = path.join(bin, 'pg_ctl');
  const options = `-p ${port} -k ${dir} -c listen_addresses='' -c fsync=off`;
  let started = false;
  const stop = (): void => {
    if (started) run(pgCtl, ['-D', data, '-m', 'immediate', 'stop']);
    started = false;
    rmSync(dir, { recursive: true, force: true });
  };
  try {
    run(initdb, ['-D', data, '-U', 'postgres', '--auth=trust', '--no-sync']);
    if (hba !== undefined) writeFileSync(path.join(data, 'pg_hba.conf'), [...hba, ''].join('\n'));
    run(pgCtl, ['-D', data, '-w', '-l', path.join(dir, 'log'), '-o', options, 'start']);
    started = true;
  } catch (e) {
    stop();
    throw e;
  }
  return {
    socketDir: dir,
    url: (user, pw) =>
      `postgres://${user}${pw === undefined ? '' : `:${encodeURIComponent(pw)}`}@:${port}/postgres?host=${dir}`,
    restart: () =>
      run(pgCtl, ['-D', data, '-w', '-m', 'fast', '-l', path.join(dir, 'log'), '-o', options, 'restart']),
    stop,
  };
}
