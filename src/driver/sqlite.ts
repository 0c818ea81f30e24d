import Database from 'better-sqlite3';
import { DbError } from './errors.ts';
import type { Connection, ConnectOptions, Driver, PreparedStatement, Row, Target } from './types.ts';

/**
 * SQLite through better-sqlite3. The library is synchronous, so one connection blocks its thread: the
 * engine gives SQLite clients their own worker threads (up to a bound, see `defaultWorkers`) so that they
 * really run at the same time. Runs in WAL mode with a busy timeout (`?busy_timeout=MS`, default 5000).
 *
 * When several clients share a thread (`sharedThread`), SQLite's own busy handler would sleep the whole
 * thread while the lock's holder, perhaps a client of that same thread, cannot run to release it: every
 * such conflict would cost the full busy timeout. Those connections wait for a lock asynchronously instead
 * (`busyWait`: SQLite answers SQLITE_BUSY at once, the statement is retried after a short sleep that lets
 * the thread's other clients run, until the busy timeout), and offer no synchronous `runSync`.
 */
export const sqliteDriver: Driver = {
  name: 'sqlite',
  async connect(target: Target, options: ConnectOptions): Promise<Connection> {
    const file = target.path ?? ':memory:';
    let db: Database.Database | undefined;
    const t0 = performance.now();
    try {
      db = new Database(file);
      const raw = Number(target.params.busy_timeout ?? 5000);
      const busy = Number.isFinite(raw) ? Math.max(0, Math.trunc(raw)) : 5000;
      db.pragma(`busy_timeout = ${options.sharedThread ? 0 : busy}`);
      if (file !== ':memory:') await enableWal(db, busy);
      const sync = target.params.synchronous;
      if (sync !== undefined) {
        if (!/^(off|normal|full|extra|[0-3])$/i.test(sync)) {
          throw new DbError('fatal', 'BAD_OPTION', `invalid synchronous=${sync} (off|normal|full|extra)`);
        }
        db.pragma(`synchronous = ${sync}`);
      }
      const conn = new SqliteConnection(db, options.sharedThread ? busy : undefined);
      conn.connectMs = performance.now() - t0;
      return conn;
    } catch (e) {
      db?.close();
      throw classifySqlite(e);
    }
  },
};

const isBusy = (e: unknown): boolean => /^SQLITE_(BUSY|LOCKED)/.test((e as { code?: string })?.code ?? '');

/**
 * Run FN, and while SQLite answers busy, again after a sleep (1 ms, doubling up to 20 ms) until BUSY_MS
 * have passed: SQLite's busy handler, but one that lets the thread's other clients run while it waits.
 */
async function busyWait<T>(busyMs: number, fn: () => T): Promise<T> {
  const deadline = Date.now() + busyMs;
  for (let delay = 1; ; delay = Math.min(delay * 2, 2)) {
    try {
      return fn();
    } catch (e) {
      if (!isBusy(e) || Date.now() >= deadline) throw classifySqlite(e);
    }
    await new Promise((r) => setTimeout(r, delay));
  }
}

/**
 * Switch to WAL. Several clients opening a new file at once race for the exclusive lock this needs, and
 * SQLite answers that race with SQLITE_BUSY at once rather than through the busy handler: retry within the
 * busy timeout.
 */
async function enableWal(db: Database.Database, busyMs: number): Promise<void> {
  const deadline = Date.now() + busyMs;
  for (let delay = 5; ; delay = Math.min(delay * 2, 100)) {
    try {
      db.pragma('journal_mode = WAL');
      return;
    } catch (e) {
      const code = (e as { code?: string }).code ?? '';
      if (!/^SQLITE_(BUSY|LOCKED)/.test(code) || Date.now() >= deadline) throw e;
    }
    await new Promise((r) => setTimeout(r, delay));
  }
}

class SqliteConnection implements Connection {
  readonly driver = 'sqlite' as const;
  readonly serverVersion: string;
  connectMs: number | undefined;
  private readonly db: Database.Database;
  /** Cache for text-protocol queries: SQLite compiles every statement anyway. */
  private readonly cache = new Map<string, Database.Statement>();
  /** Set when the thread is shared: how long to wait for a lock, asynchronously (see `busyWait`). */
  private readonly sharedBusyMs: number | undefined;

  /** `Connection.querySync`: only where the thread is this connection's alone (no `busyWait`). */
  readonly querySync: ((sql: string, params?: readonly unknown[]) => number) | undefined;

  constructor(db: Database.Database, sharedBusyMs?: number) {
    this.db = db;
    this.sharedBusyMs = sharedBusyMs;
    this.querySync =
      sharedBusyMs === undefined
        ? (sql, params) => {
            try {
              return runSqlite(this.stmt(sql), params);
            } catch (e) {
              throw classifySqlite(e);
            }
          }
        : undefined;
    this.serverVersion = `SQLite ${(db.prepare('select sqlite_version() as v').get() as { v: string }).v}`;
  }

  private stmt(sql: string): Database.Statement {
    let s = this.cache.get(sql);
    if (s === undefined) {
      s = this.db.prepare(sql);
      if (this.cache.size > 1000) this.cache.clear();
      this.cache.set(sql, s);
    }
    return s;
  }

  async query(sql: string, params?: readonly unknown[]): Promise<number> {
    if (this.sharedBusyMs !== undefined)
      return busyWait(this.sharedBusyMs, () => runSqlite(this.stmt(sql), params));
    try {
      return runSqlite(this.stmt(sql), params);
    } catch (e) {
      throw classifySqlite(e);
    }
  }

  async prepare(sql: string): Promise<PreparedStatement> {
    let s: Database.Statement;
    try {
      s = this.db.prepare(sql);
      // Rows as arrays: the hot path only counts them.
      if (s.reader) s.raw(true);
    } catch (e) {
      throw classifySqlite(e);
    }
    const busyMs = this.sharedBusyMs;
    if (busyMs !== undefined) {
      // a shared thread: no synchronous path, a lock is waited for without blocking the thread
      return {
        run: (params?: readonly unknown[]): Promise<number> => busyWait(busyMs, () => runSqlite(s, params)),
        async close(): Promise<void> {},
      };
    }
    const runSync = (params?: readonly unknown[]): number => {
      try {
        return runSqlite(s, params);
      } catch (e) {
        throw classifySqlite(e);
      }
    };
    return {
      runSync,
      async run(params?: readonly unknown[]): Promise<number> {
        return runSync(params);
      },
      async close(): Promise<void> {},
    };
  }

  async all(sql: string, params?: readonly unknown[]): Promise<Row[]> {
    const once = (): Row[] => {
      const s = this.stmt(sql);
      if (!s.reader) {
        s.run(...((params ?? []) as unknown[]));
        return [];
      }
      return s.all(...((params ?? []) as unknown[])) as Row[];
    };
    if (this.sharedBusyMs !== undefined) return busyWait(this.sharedBusyMs, once);
    try {
      return once();
    } catch (e) {
      throw classifySqlite(e);
    }
  }

  async begin(): Promise<void> {
    // IMMEDIATE takes the write lock up front, so a read-then-write transaction cannot deadlock on upgrade;
    // waiting for it is covered by the busy timeout.
    await this.query('BEGIN IMMEDIATE');
  }
  async commit(): Promise<void> {
    await this.query('COMMIT');
  }
  async rollback(): Promise<void> {
    if (this.db.inTransaction) await this.query('ROLLBACK');
  }
  async close(): Promise<void> {
    if (this.db.open) this.db.close();
  }
}

function runSqlite(s: Database.Statement, params: readonly unknown[] | undefined): number {
  // No spread of an empty array: the common parameterless statement calls the binding directly.
  if (params === undefined || params.length === 0) return s.reader ? s.all().length : s.run().changes;
  const args = params as unknown[];
  if (s.reader) return s.all(...args).length;
  return s.run(...args).changes;
}

/** SQLITE_BUSY and SQLITE_LOCKED (including their extended codes) are retryable; the rest are fatal. */
export function classifySqlite(e: unknown): DbError {
  if (e instanceof DbError) return e;
  const code =
    typeof (e as { code?: unknown })?.code === 'string' ? (e as { code: string }).code : 'SQLITE_ERROR';
  const message = e instanceof Error ? e.message : String(e);
  if (code.startsWith('SQLITE_BUSY') || code.startsWith('SQLITE_LOCKED')) {
    return new DbError('retryable', code, message);
  }
  if (code === 'SQLITE_CANTOPEN') return new DbError('fatal', code, `cannot open database file: ${message}`);
  return new DbError('fatal', code, message);
}
