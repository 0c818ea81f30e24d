/**
 * One classification of PostgreSQL errors for both clients (`pg` and dbsmack's lean one): by the network's
 * errno for a lost connection, else by SQLSTATE where the server gave one, else by the library's message.
 */
import { CONNECTION_LOST_CODES, DbError } from './errors.ts';

const PG_RETRYABLE = new Set(['40001', '40P01', '55P03']);
const PG_RECONNECT = new Set(['57P01', '57P02', '57P03', '53300']);

/** Classify an error carrying a SQLSTATE or errno `code` and a `message` (node-postgres's or the lean client's). */
export function classifyPostgres(e: unknown): DbError {
  if (e instanceof DbError) return e;
  const err = e as { code?: unknown; message?: unknown };
  const message = typeof err?.message === 'string' ? err.message : String(e);
  const code = typeof err?.code === 'string' ? err.code : undefined;
  // The network's errno names first: some look like a SQLSTATE (EPIPE, five capitals; Node's write error
  // carries no syscall to tell), and taken for one it made a reconnect that met a restarting server's closed
  // socket a fatal error, and the client aborted.
  if (code !== undefined && CONNECTION_LOST_CODES.has(code)) return new DbError('reconnect', code, message);
  if (code !== undefined && /^[0-9A-Z]{5}$/.test(code)) {
    if (PG_RETRYABLE.has(code)) return new DbError('retryable', code, message, code);
    if (PG_RECONNECT.has(code) || code.startsWith('08')) return new DbError('reconnect', code, message, code);
    return new DbError('fatal', code, message, code);
  }
  if (/Connection terminated|not queryable|connection error|Connection ended/i.test(message)) {
    return new DbError('reconnect', 'CONNECTION_LOST', message);
  }
  if (/timeout expired/i.test(message)) return new DbError('reconnect', 'ETIMEDOUT', message);
  return new DbError('fatal', code ?? 'PG_ERROR', message);
}
