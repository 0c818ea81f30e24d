/**
 * Connection targets from `client` blocks, for the back-end `-d` picks. Used only when `--db` is not given;
 * `--db URL` overrides every client block.
 */
import { existsSync, mkdirSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { DriverName, Target } from '../../driver/types.ts';
import { parseTarget } from '../../driver/url.ts';
import { UsageError } from '../../errors.ts';
import type { ClientDef } from './model.ts';

/** `-d` values, as super-smack spells them. */
export const DB_TYPES: Record<string, DriverName> = { sqlite: 'sqlite', mysql: 'mysql', pg: 'postgres' };

/** Default data directory: `dbsmack` in the user's cache directory. */
export function defaultDataDir(env: NodeJS.ProcessEnv = process.env): string {
  const base =
    env.XDG_CACHE_HOME ||
    (process.platform === 'darwin'
      ? path.join(os.homedir(), 'Library', 'Caches')
      : process.platform === 'win32'
        ? (env.LOCALAPPDATA ?? path.join(os.homedir(), 'AppData', 'Local'))
        : path.join(os.homedir(), '.cache'));
  return path.join(base, 'dbsmack');
}

/** Make the data directory (and its parents: it is a cache); one that cannot be made is a user error. */
export function ensureDir(dir: string): void {
  try {
    mkdirSync(dir, { recursive: true });
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    throw new UsageError(
      `cannot use the data directory ${dir}: ${code === 'EEXIST' || code === 'ENOTDIR' ? 'a part of it is a file, not a directory' : (e as Error).message}`,
      'give another directory with -D DIR',
    );
  }
}

/**
 * The target of a client block. SQLite: the file `DB.sqlite` in the data directory. MySQL: the socket when
 * it names an existing file (libmysqlclient's reading of host "localhost"), else host and port. PostgreSQL:
 * host and port (the socket property is MySQL's, as in the original).
 */
export function clientTarget(c: ClientDef, driver: DriverName, datadir: string): Target {
  if (driver === 'sqlite') {
    ensureDir(datadir);
    return parseTarget(`sqlite:${path.join(datadir, `${c.db}.sqlite`)}`);
  }
  const auth = `${encodeURIComponent(c.user)}${c.pass ? `:${encodeURIComponent(c.pass)}` : ''}@`;
  const port = c.port.trim() !== '' && Number(c.port) !== 0 ? `:${Number(c.port)}` : '';
  const host = c.host.includes(':') ? `[${c.host}]` : c.host || 'localhost';
  if (driver === 'mysql') {
    const sock = c.socket && existsSync(c.socket) ? `?socket=${encodeURIComponent(c.socket)}` : '';
    return parseTarget(`mysql://${auth}${host}${port}/${encodeURIComponent(c.db)}${sock}`);
  }
  return parseTarget(`postgres://${auth}${host}${port}/${encodeURIComponent(c.db)}`);
}
