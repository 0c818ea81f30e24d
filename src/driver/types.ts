/**
 * The one interface every back-end implements. Drivers know nothing of workloads; the engine and the
 * workloads see only `Connection`.
 */

/** Back-end family, as chosen by the URL scheme. */
export type DriverName = 'sqlite' | 'mysql' | 'postgres';

/**
 * MySQL/MariaDB client of the load connections: a library (`mysql2`, `mariadb`) or dbsmack's own lean
 * wire-protocol client (`dbsmack`). All are offered because the connector is part of what is measured.
 */
export type MysqlConnector = 'mysql2' | 'mariadb' | 'dbsmack';

/** PostgreSQL client of the load connections: node-postgres (`pg`) or dbsmack's own lean client (`dbsmack`). */
export type PostgresConnector = 'pg' | 'dbsmack';

/** A parsed, resolved connection target. Holds the password; never serialise it, use `redactedUrl`. */
export interface Target {
  driver: DriverName;
  /** The URL with the password replaced by `***`; safe to print and store. */
  redactedUrl: string;
  /** SQLite: file path (or `:memory:`). */
  path?: string;
  host?: string;
  port?: number;
  /** Unix socket path (MySQL) or socket directory (PostgreSQL). */
  socket?: string;
  user?: string;
  password?: string;
  database?: string;
  /** Driver-specific options from the query string (e.g. `connector`, `busy_timeout`, `sslmode`). */
  params: Record<string, string>;
}

/** A server-side prepared statement bound to one connection. */
export interface PreparedStatement {
  /** Run with parameters; resolves to rows returned (for a query) or affected (for DML). */
  run(params?: readonly unknown[]): Promise<number>;
  /**
   * The same, synchronously, for an in-process back-end (SQLite) whose library is synchronous anyway: the
   * engine calls it when present and so skips a promise and an async frame per statement. Throws a
   * classified `DbError`.
   */
  runSync?(params?: readonly unknown[]): number;
  /**
   * One execution encoded for `Connection.runBatch` (native I/O core only); undefined when the parameters
   * do not fit, which `run` then reports.
   */
  encode?(params?: readonly unknown[]): Uint8Array | undefined;
  close(): Promise<void>;
}

/** A row as returned by `Connection.all`: column name to value. */
export type Row = Record<string, unknown>;

/** One client connection. Every method rejects with a classified `DbError`. */
export interface Connection {
  readonly driver: DriverName;
  /** Server version string, read once at connect time. */
  readonly serverVersion: string;
  /** Run a statement with the text protocol (parameters bound client-side where the driver needs it). */
  query(sql: string, params?: readonly unknown[]): Promise<number>;
  /**
   * The same, synchronously, where the back-end runs in-process and its library is synchronous anyway
   * (SQLite with one client a thread, as `PreparedStatement.runSync`). Throws a classified `DbError`.
   */
  querySync?(sql: string, params?: readonly unknown[]): number;
  /** Prepare a statement on the server (or in-process for SQLite). */
  /**
   * Prepare `sql` on the server. `paramTypes`: its parameters' declared types (PostgreSQL type names, see
   * `StatementOptions.paramTypes`), where the back-end declares them (dbsmack's PostgreSQL clients).
   */
  prepare(sql: string, paramTypes?: readonly string[]): Promise<PreparedStatement>;
  /** Run a statement and return its rows (setup, probes; not the hot path). */
  all(sql: string, params?: readonly unknown[]): Promise<Row[]>;
  begin(): Promise<void>;
  commit(): Promise<void>;
  rollback(): Promise<void>;
  close(): Promise<void>;
  /**
   * Close at once, without a goodbye and without waiting for a request in flight, which then never settles
   * (the engine has given up on its client). Connections of the native I/O core have it; for the others
   * `close` serves.
   */
  abort?(): void;
  /** Backend process id (PostgreSQL) or connection/thread id (MySQL); undefined for SQLite. */
  readonly sessionId?: number;
  /**
   * The time of the request that completed last (µs), when the connection measures it closer to the wire
   * than its caller can: the native I/O core times each statement where its bytes are sent and received.
   * Read right after a request settles.
   */
  readonly timedUs?: number | undefined;
  /**
   * Run the executions a batch holds (`PreparedStatement.encode`) one after another, each when the one
   * before is answered, in one call into the native I/O core: see statement-batch.ts. Only connections on
   * the native core have it.
   */
  runBatch?(batch: import('./statement-batch.ts').StatementBatch, text?: boolean): Promise<void>;
  /**
   * One text query (as `query(sql)` sends it) encoded for `runBatch` with `text` set: a batch is either
   * all executions or all text queries. Only connections on the native core have it.
   */
  encodeQuery?(sql: string): Uint8Array;
  /**
   * This connection's own connect and handshake, in milliseconds: from its socket's connect call to the
   * end of the handshake (MySQL's OK after authentication, PostgreSQL's ReadyForQuery; SQLite: opening the
   * file and setting WAL). Measured by the driver, the only one to see those moments: a caller timing its
   * own call would also count loading the connector and the other connections of a batch. What
   * super-smack's `connect:` line reports (it timed `mysql_real_connect` in each client's own process).
   */
  readonly connectMs?: number | undefined;
}

export interface ConnectOptions {
  /** Give up connecting after this many milliseconds. */
  connectTimeoutMs: number;
  /**
   * A benchmark client's connection (the engine's load clients). Only these use the `?connector=` the
   * URL names (or the fastest by default); set-up, probes and admin connections always use the library
   * client, whose typed rows they read (but see `info`).
   */
  load?: boolean;
  /**
   * A short connection that reads only text and counts (the run's server version and settings; a workload's
   * check that says so, `Workload.textCheck`), in the main thread: it goes over dbsmack's own client,
   * without the native core, when the load clients use that client, so that the main thread does not load
   * a library client for it (mysql2 costs about 40-100 ms of CPU to load, pg 30 ms). Otherwise it is like
   * any other non-load connection.
   */
  info?: boolean;
  /**
   * This connection's thread runs other clients too (an SQLite load worker with several clients). A
   * library that blocks its thread (better-sqlite3) must then never wait inside a call: a client waiting
   * for a lock would stall the others of its thread, the lock's holder among them.
   */
  sharedThread?: boolean;
}

export interface Driver {
  readonly name: DriverName;
  connect(target: Target, options: ConnectOptions): Promise<Connection>;
}
