/**
 * What a failed run, prepare or cleanup is to the user: a failure to start or to set up becomes the user
 * error it is, with its exit code and a hint (`cannot connect …`, `the tables exist already …`).
 */

import { DbError } from '../driver/errors.ts';
import type { Target } from '../driver/types.ts';
import { AdminConnectError } from '../engine/admin.ts';
import type { StartError } from '../engine/engine.ts';
import { ConnectError, EXIT, UsageError, UserError } from '../errors.ts';

/**
 * Server codes of a refused login, on every connector: MySQL/MariaDB 1045 (wrong password), 1698 (MariaDB:
 * no password given, or a unix_socket account reached over another user), 1044 (no access to that
 * database), 1251/2059 (authentication method not supported); PostgreSQL 28P01 (wrong password) and 28000
 * (no such role, or refused by pg_hba.conf).
 */
export const AUTH_FAILURE_CODES: ReadonlySet<string> = new Set([
  '1045',
  '1698',
  '1044',
  '1251',
  '2059',
  '28P01',
  '28000',
]);
/** An unknown database: MySQL 1049, PostgreSQL 3D000. */
const UNKNOWN_DATABASE_CODES: ReadonlySet<string> = new Set(['1049', '3D000']);

export function connectHint(code: string): string | undefined {
  if (code === 'ECONNREFUSED') return 'is the server running and listening on that host and port?';
  if (code === 'ENOENT') return 'no such socket: is the server running, and is the socket path right?';
  if (code === 'ENOTFOUND' || code === 'EAI_AGAIN') return 'the host name does not resolve';
  if (code === 'ETIMEDOUT') return 'the server did not answer in time (--connect-timeout)';
  if (AUTH_FAILURE_CODES.has(code)) return 'check the user name and password';
  if (UNKNOWN_DATABASE_CODES.has(code)) return 'the database does not exist: create it first';
  if (code === '1040' || code === '53300')
    return "the server has no connection left: lower --clients or raise the server's max_connections";
  if (code === 'SQLITE_CANTOPEN') return 'check that the directory exists and is writable';
  return undefined;
}

/** Turn a failure to start into the user error it is. */
export function startErrorToUserError(e: StartError, target: Target): UserError {
  const err = e.error;
  if (e.userError) return e.userError;
  if (e.phase === 'connect') {
    return new ConnectError(
      `cannot connect to ${target.redactedUrl}: ${err.message}`,
      err.code,
      connectHint(err.code),
    );
  }
  if (e.phase === 'load')
    return new UserError(`cannot load the workload: ${err.message}`, undefined, EXIT.input);
  return new UserError(
    `client ${e.clientId ?? '?'} failed to set up on ${target.redactedUrl}: ${err.code}: ${err.message}`,
    undefined,
    EXIT.runFailed,
  );
}

/** Is this error a failure to connect (exit 3), whatever phase it came from? */
function isConnectFailure(e: DbError): boolean {
  return (
    e.kind === 'reconnect' ||
    AUTH_FAILURE_CODES.has(e.code) ||
    UNKNOWN_DATABASE_CODES.has(e.code) ||
    e.code === 'SQLITE_CANTOPEN'
  );
}

/** "Table exists": MySQL 1050, PostgreSQL 42P07 (duplicate table), SQLite's message. */
function isTableExists(e: DbError): boolean {
  return (
    e.code === '1050' ||
    e.code === '42P07' ||
    (e.code.startsWith('SQLITE') && /already exists/i.test(e.message))
  );
}

/** What an admin failure is reported with: the command's action, and for `prepare` the cleanup to run. */
export interface AdminErrorContext {
  /** The command whose work failed: `prepare`, `cleanup`, `run`, `sweep`. */
  action: string;
  /** The `dbsmack cleanup …` command line for the same workload and target, for "tables exist". */
  cleanup?: string;
}

/**
 * Turn an error of prepare, cleanup or a run's set-up (its `check`, a smack file's tables) into the user
 * error it is: a connection that could not be opened is "cannot connect" (exit 3, with the hint);
 * `prepare` over tables that exist names `cleanup` (exit 2); anything else names the command (exit 4).
 */
export function adminError(e: unknown, target: Target, ctx: AdminErrorContext): never {
  if (e instanceof UserError) throw e;
  const connectFailed = e instanceof AdminConnectError;
  const err = e instanceof AdminConnectError ? e.error : e;
  if (err instanceof DbError) {
    if (connectFailed || isConnectFailure(err)) {
      throw new ConnectError(
        `cannot connect to ${target.redactedUrl}: ${err.message}`,
        err.code,
        connectHint(err.code),
      );
    }
    if (ctx.cleanup !== undefined && isTableExists(err)) {
      throw new UsageError(
        `${ctx.action}: the tables exist already in ${target.redactedUrl} (${err.code}: ${err.message})`,
        `drop them first with \`${ctx.cleanup}\`, or run the workload on them as they are`,
      );
    }
    throw new UserError(
      `${ctx.action} failed on ${target.redactedUrl}: ${err.code}: ${err.message}`,
      undefined,
      EXIT.runFailed,
    );
  }
  throw e;
}
