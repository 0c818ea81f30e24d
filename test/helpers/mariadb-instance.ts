/**
 * A throw-away MariaDB server of a test's own (mariadb-install-db into a temporary datadir, mariadbd on a Unix
 * socket there with networking off), for tests that restart a server: the shared one on 3306 is never
 * touched. The commands that stop and start it are given as shell lines, as an experiment plan names them.
 * A missing mariadbd or mariadb-install-db skips the test with the reason (fails under CI=true).
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { TestContext } from 'node:test';
import { missing } from './preconditions.ts';
import { waitFor } from './wait.ts';

export interface MariaDbInstance {
  dir: string;
  socket: string;
  /** mysql:// URL of database `mysql` through the socket. */
  url: string;
  /** Shell line that starts the server in the background with these extra options. */
  startCommand(extra: string): string;
  /** Shell line that stops it (and waits until it is down); does nothing when it is not running. */
  stopCommand: string;
  /** The server's pid while it runs. */
  pid(): number | undefined;
  /** Stop it and remove its directory. */
  destroy(): Promise<void>;
}

const q = (s: string): string => `'${s.replace(/'/g, `'\\''`)}'`;

export async function startMariaDb(t: TestContext, extra = ''): Promise<MariaDbInstance | undefined> {
  const mariadbd = ['/usr/sbin/mariadbd', '/usr/bin/mariadbd'].find((p) => existsSync(p));
  const install = spawnSync('which', ['mariadb-install-db'], { encoding: 'utf8' }).stdout.trim();
  if (!mariadbd || !install) {
    missing(t, 'no MariaDB server binaries (mariadbd, mariadb-install-db) installed');
    return undefined;
  }
  const dir = mkdtempSync(path.join(os.tmpdir(), 'dbsmack-mariadb-'));
  const data = path.join(dir, 'data');
  const socket = path.join(dir, 'mysqld.sock');
  const pidFile = path.join(dir, 'mysqld.pid');
  const asRoot = process.getuid?.() === 0;
  execFileSync(
    install,
    [
      '--no-defaults',
      `--datadir=${data}`,
      ...(asRoot ? ['--user=root'] : []),
      '--auth-root-authentication-method=normal',
      '--skip-test-db',
      '--skip-name-resolve',
    ],
    { stdio: 'pipe', timeout: 120_000 },
  );
  const startCommand = (more: string): string =>
    `${mariadbd} --no-defaults --datadir=${q(data)} --socket=${q(socket)} --pid-file=${q(pidFile)} ` +
    `--skip-networking --log-error=${q(path.join(dir, 'error.log'))} --innodb-buffer-pool-size=16M ` +
    `${asRoot ? '--user=root ' : ''}${more} >/dev/null 2>&1 &`;
  const stopCommand = `if [ -S ${q(socket)} ]; then mariadb-admin --no-defaults --socket=${q(socket)} -uroot shutdown; fi`;
  const pid = (): number | undefined => {
    try {
      const p = Number(readFileSync(pidFile, 'utf8').trim());
      process.kill(p, 0);
      return p;
    } catch {
      return undefined;
    }
  };
  const inst: MariaDbInstance = {
    dir,
    socket,
    url: `mysql://root@localhost/mysql?socket=${encodeURIComponent(socket)}`,
    startCommand,
    stopCommand,
    pid,
    destroy: async () => {
      spawnSync('sh', ['-c', stopCommand], { timeout: 60_000 });
      const p = pid();
      if (p !== undefined) process.kill(p, 'SIGKILL');
      await waitFor('the private MariaDB to exit', () => pid() === undefined, {
        timeoutMs: 30_000,
        everyMs: 100,
      });
      rmSync(dir, { recursive: true, force: true });
    },
  };
  spawnSync('sh', ['-c', startCommand(extra)]);
  await waitFor('the private MariaDB to take connections', () => existsSync(socket) && pid() !== undefined, {
    timeoutMs: 60_000,
    everyMs: 100,
  });
  return inst;
}
