/**
 * What every MySQL/MariaDB connector shares: the version label and the classification of errors (server
 * errno, client-library and network codes) into retryable / reconnect / fatal.
 */
import { CONNECTION_LOST_CODES, DbError } from './errors.ts';

/** `MariaDB 10.11.6` or `MySQL 8.0.36` from the server's version string. */
export function formatMysqlVersion(v: string): string {
  return /mariadb/i.test(v) ? `MariaDB ${v.replace(/-MariaDB.*$/i, '')}` : `MySQL ${v}`;
}

/** Deadlock, lock wait timeout, record changed: sysbench's default `--mysql-ignore-errors`. */
const MYSQL_RETRYABLE = new Set([1213, 1205, 1020]);
/** Server gone or lost, connection killed, server shutdown, idle-timeout disconnects. */
const MYSQL_RECONNECT = new Set([
  2002, 2003, 2006, 2013, 2055, 1927, 1053, 4031, 1152, 1158, 1159, 1160, 1161,
]);

/** Classify a mysql2 or mariadb error; the code kept is the server's errno (e.g. `1213`) or the network code. */
export function classifyMysql(e: unknown): DbError {
  if (e instanceof DbError) return e;
  const err = e as {
    errno?: unknown;
    code?: unknown;
    sqlState?: unknown;
    message?: unknown;
    fatal?: unknown;
  };
  const message = String(err?.message ?? e)
    .replace(/^\(conn[^)]*\)\s*/, '')
    .replace(/\n?sql:.*$/s, '');
  const sqlState = typeof err?.sqlState === 'string' ? err.sqlState : undefined;
  const errno = typeof err?.errno === 'number' ? err.errno : undefined;
  const name = typeof err?.code === 'string' ? err.code : undefined;
  if (name !== undefined && CONNECTION_LOST_CODES.has(name))
    return new DbError('reconnect', name, message, sqlState);
  // Server errors carry an errno below 2000 (server) or 2000-2999 (client library); mariadb uses 45000+ locally.
  if (errno !== undefined && errno > 0 && errno < 10000) {
    const code = String(errno);
    if (MYSQL_RETRYABLE.has(errno)) return new DbError('retryable', code, message, sqlState);
    if (MYSQL_RECONNECT.has(errno)) return new DbError('reconnect', code, message, sqlState);
    return new DbError('fatal', code, message, sqlState);
  }
  if (err?.fatal === true) return new DbError('reconnect', name ?? 'CONNECTION_LOST', message, sqlState);
  return new DbError(
    'fatal',
    name ?? (errno !== undefined ? String(errno) : 'MYSQL_ERROR'),
    message,
    sqlState,
  );
}
