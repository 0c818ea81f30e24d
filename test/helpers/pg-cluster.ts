/**
 * A throw-away PostgreSQL cluster (initdb of the installed server, as the `postgres` OS user when the tests
 * run as root) on a free port, for tests that need what the shared server must not be put through: its own
 * pg_hba.conf, or a restart. A missing initdb or postgres user skips the test with the reason, and fails it
 * under CI=true, as `needServer` does.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import type { TestContext } from 'node:test';

export interface PgCluster {
  port: number;
  /** A postgres:// URL for `user` (password percent-encoded) on database postgres. */
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

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = net.createServer();
    srv.once('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const port = (srv.address() as net.AddressInfo).port;
      srv.close(() => resolve(port));
    });
  });
}

/** As needServer does: a missing part skips the test with the reason, and fails it under CI=true. */
function skipOrFail(t: TestContext, why: string): void {
  if (process.env.CI === 'true') throw new Error(`CI=true and ${why}`);
  t.skip(why);
  process.stderr.write(`# skipped: ${why}\n`);
}

/** Start a private cluster whose pg_hba.conf holds `hba` (default: trust for every local TCP login). */
export async function startPgCluster(t: TestContext, hba?: string[]): Promise<PgCluster | undefined> {
  const initdb = initdbPath();
  if (initdb === undefined) {
    skipOrFail(t, 'no PostgreSQL server binaries (initdb) installed');
    return undefined;
  }
  const bin = path.dirname(initdb);
  const asRoot = process.getuid?.() === 0;
  if (asRoot && spawnSync('id', ['postgres']).status !== 0) {
    skipOrFail(t, 'running as root without a postgres OS user to run the server');
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
  const port = await freePort();
  const pgCtl = path.join(bin, 'pg_ctl');
  const options = `-p ${port} -k ${dir} -c listen_addresses=127.0.0.1 -c fsync=off`;
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
    port,
    url: (user, pw) =>
      `postgres://${user}${pw === undefined ? '' : `:${encodeURIComponent(pw)}`}@127.0.0.1:${port}/postgres`,
    restart: () =>
      run(pgCtl, ['-D', data, '-w', '-m', 'fast', '-l', path.join(dir, 'log'), '-o', options, 'restart']),
    stop,
  };
}
