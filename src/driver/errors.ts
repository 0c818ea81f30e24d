import { brandInstances } from '../errors.ts';
import { redactSecrets } from './redact.ts';

/**
 * How the engine must react to an error:
 * - `retryable`: deadlock, serialization failure, lock wait timeout, SQLite busy: roll back and re-run the event;
 * - `reconnect`: the connection is gone: re-establish it with back-off, then re-run the event;
 * - `fatal`: anything else: stop the run, unless `--ignore-errors` names the code.
 * A workload's client may decide otherwise for the errors of its events (`ClientHandler.onError`: the
 * sysbench workloads restart on what sysbench's drivers ignore, 23505 on PostgreSQL for one).
 */
export type ErrorKind = 'retryable' | 'reconnect' | 'fatal';

/** A classified database error with the server's own code kept (`1213`, `40P01`, `SQLITE_BUSY`, `ECONNREFUSED`). */
export class DbError extends Error {
  readonly kind: ErrorKind;
  readonly code: string;
  /** SQLSTATE where the server gave one. */
  readonly sqlState: string | undefined;
  override readonly name = 'DbError';
  /**
   * Whether a DbError records the JavaScript stack it was made on (`--debug` turns it on). Off otherwise: a
   * DbError is the server's answer or a connection's fate, told by its code and message, and under
   * contention a run makes thousands a second, where collecting the stack (V8 rebuilds the frames of
   * optimised code to do it) was about half of what the client spent on each failed statement.
   */
  static stacks = false;

  constructor(kind: ErrorKind, code: string, message: string, sqlState?: string) {
    // the message first: nothing that can throw runs while the limit is lowered
    const text = redactSecrets(message);
    const limit = Error.stackTraceLimit;
    if (!DbError.stacks) Error.stackTraceLimit = 0;
    super(text);
    Error.stackTraceLimit = limit;
    this.kind = kind;
    this.code = code;
    this.sqlState = sqlState;
  }

  /** A plain object that survives `postMessage` and JSON. */
  toJSON(): SerializedDbError {
    return { kind: this.kind, code: this.code, message: this.message, sqlState: this.sqlState };
  }

  static fromJSON(e: SerializedDbError): DbError {
    return new DbError(e.kind, e.code, e.message, e.sqlState);
  }

  /** True when `codes` (from `--ignore-errors`) names this error by its code or SQLSTATE, or is `all`. */
  matches(codes: ReadonlySet<string>): boolean {
    return (
      codes.has('all') || codes.has(this.code) || (this.sqlState !== undefined && codes.has(this.sqlState))
    );
  }
}

// `instanceof DbError` holds for a DbError of the package's own files too (a workload module's)
brandInstances(DbError, Symbol.for('dbsmack.DbError'));

export interface SerializedDbError {
  kind: ErrorKind;
  code: string;
  message: string;
  sqlState: string | undefined;
}

/** Network-level errno codes that mean the connection is gone (or never came). */
export const CONNECTION_LOST_CODES: ReadonlySet<string> = new Set([
  'ECONNRESET',
  'EPIPE',
  'ECONNREFUSED',
  'ECONNABORTED',
  'ETIMEDOUT',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'ENOTFOUND',
  'EAI_AGAIN',
  'ENOENT',
  'PROTOCOL_CONNECTION_LOST',
  'ER_SOCKET_UNEXPECTED_CLOSE',
  'ER_CONNECTION_ALREADY_CLOSED',
  'ER_CMD_CONNECTION_CLOSED',
  'ER_GET_CONNECTION_TIMEOUT',
]);

/** Anything thrown that is not a DbError becomes a fatal one, keeping its message (redacted). */
export function asDbError(err: unknown): DbError {
  if (err instanceof DbError) return err;
  if (err instanceof Error) {
    const code = (err as { code?: unknown }).code;
    return new DbError('fatal', typeof code === 'string' ? code : 'ERROR', err.message);
  }
  return new DbError('fatal', 'ERROR', String(err));
}
