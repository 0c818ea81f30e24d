/**
 * The workload model. A workload produces *events* (a super-smack round, a sysbench transaction, a user
 * function); each event runs *statements* on one connection through a `ClientContext`, and the engine times
 * both. This is also the public API users write their own workloads against (see `define.ts`).
 */

import type { DbError } from '../driver/errors.ts';
import type { PARAM_TYPE_OIDS } from '../driver/pg-wire-encode.ts';
import type { Connection, DriverName, Row, Target } from '../driver/types.ts';
import type { StatementKind } from '../metrics/kinds.ts';

/** A declared statement; create with `ctx.statement()`, run with `ctx.run()`. */
export interface Statement {
  readonly id: number;
  /** The statement type its latency is recorded under (e.g. `point_select`). */
  readonly type: string;
  readonly sql: string;
  readonly kind: StatementKind;
  /** Server-side prepared (default) or sent as text each time. */
  readonly prepared: boolean;
  /** The parameters' declared types (`StatementOptions.paramTypes`). */
  readonly paramTypes?: readonly ParamType[] | undefined;
}

/**
 * A parameter's type as a statement declares it to PostgreSQL (`StatementOptions.paramTypes`): the server
 * then parses the parameter's text as this type, instead of inferring one from the SQL.
 */
export type ParamType = keyof typeof PARAM_TYPE_OIDS;

export interface StatementOptions {
  /** Prepare on the server once per connection (default true). */
  prepare?: boolean;
  /** Override the read/write/other classification guessed from the first SQL keyword. */
  kind?: StatementKind;
  /**
   * Prepared statements on PostgreSQL (dbsmack's own clients): the parameters' types, declared in the
   * Parse message as sysbench declares its own (`int8` for integers, `varchar` for strings), so that the
   * server plans the statement as it plans theirs; the first ones only, if fewer. Without them the server
   * infers each from the SQL. Other back-ends ignore them.
   */
  paramTypes?: readonly ParamType[];
}

/** Seeded per-client random numbers. */
export interface Random {
  /** Uniform float in [0, 1). */
  next(): number;
  /** Uniform integer in [min, max], both inclusive. */
  int(min: number, max: number): number;
}

/** Per-client API handed to a workload inside its worker. Every call is timed by the engine. */
export interface ClientContext {
  /** 0-based index of this client among all clients of the run. */
  readonly clientId: number;
  /** Number of clients in the run. */
  readonly clients: number;
  readonly driver: DriverName;
  /** The workload's options, parsed and defaulted. */
  readonly options: Readonly<Record<string, unknown>>;
  readonly random: Random;
  /** The run's seed (`--rand-seed`, or drawn from the clock), the same for every client. */
  readonly seed: number;
  /** Declare a statement (usually in `client()`); prepared lazily on first use and again after a reconnect. */
  statement(type: string, sql: string, options?: StatementOptions): Statement;
  /** Run a declared statement; resolves to rows returned or affected. */
  run(stmt: Statement, params?: readonly unknown[]): Promise<number>;
  /**
   * Run declared statements in order, one at a time, each timed and recorded as `run` records it; rejects
   * with the first error (the statements after it are not run). On the native I/O core the prepared ones go
   * to the core as one request, so the client wakes once for all of them instead of once for each: for the
   * statements of an event that do not depend on each other's results (sysbench's transactions). Items
   * with `sql` (all of them, or none) run as text queries, as `querySequence` runs its queries.
   */
  runSequence(statements: readonly SingleStatement[]): Promise<void>;
  /**
   * Run text queries in order, one at a time, each recorded under its type as `query` records it; rejects
   * with the first error (the ones after it do not run). On the native I/O core they go as one request, as
   * `runSequence`'s do: for queries of an event that do not depend on each other's results (pgbench's
   * scripts under `-M simple`).
   */
  querySequence(queries: readonly AdhocQuery[]): Promise<void>;
  /**
   * Where the last `runSequence` or `querySequence` ended: after it rejects, the index of the statement
   * whose prepare or run failed (those before it ran); after it resolves, the number of statements.
   */
  readonly sequenceIndex: number;
  /** Run ad-hoc SQL with the text protocol, recorded under `type`. */
  query(type: string, sql: string, params?: readonly unknown[]): Promise<number>;
  /** Run SQL and return its rows, recorded under `type`. */
  all(type: string, sql: string, params?: readonly unknown[]): Promise<Row[]>;
  begin(): Promise<void>;
  commit(): Promise<void>;
  rollback(): Promise<void>;
  /** Pause this client (not counted as statement latency). */
  sleep(ms: number): Promise<void>;
  /** 1 on an event's first try; 2, 3 … when the engine runs it again after a retryable error or a reconnect. */
  readonly attempt: number;
  /**
   * True once the run is stopping (Ctrl-C, a fatal error, --exit-on-abort) and the engine has cancelled this
   * client's statement in flight on the server: the error that statement ends with is the stop's, not a
   * failure to report (the engine neither counts it nor applies the error policy to it).
   */
  readonly cancelled: boolean;
  /**
   * `--rate`: when the event in progress was due, in the microseconds of `metrics/clock.ts`'s `nowUs()`
   * (its latency runs from then); 0 in the closed loop.
   */
  readonly scheduledUs: number;
  /** Add to a counter of the workload's own, summed over the measured part (RunResult `counters`). */
  count(name: string, n?: number): void;
  /**
   * Record the time of a step that is not a statement (a pgbench meta-command, a whole script): RunResult
   * `steps`, with a histogram like a statement type's, but not counted as queries.
   */
  step(name: string, us: number): void;
}

/** What `client()` returns: the per-client event function and an optional close hook. */
export interface ClientHandler {
  /**
   * One event (sysbench's transaction). What its promise resolves to is ignored, so an event of one
   * statement may return `ctx.run(…)` itself and save an async frame.
   */
  // biome-ignore lint/suspicious/noConfusingVoidType: a synchronous event function returns nothing (void)
  event(): Promise<unknown> | void;
  /**
   * Says that every event is exactly one declared statement with per-event parameters: `single()` draws the
   * event's statement and parameters (the same draws, in the same order, as `event()`, which must then be
   * `ctx.run(statement, params)` of them; `oneStatement()` builds both from one function). With it the
   * engine may run many events in one call into the native I/O core (a batch: closed loop only, statements
   * still one at a time on the connection, each timed and recorded; see the README's I/O path). Without
   * it, or where batches do not apply, `event()` runs. A `single()` that throws must leave its state as
   * before the draw: that event then runs through `event()`.
   */
  single?(): SingleStatement;
  /**
   * As `single`, for events that are always the same number of declared statements, `sequenceLength`, run
   * one after the other with nothing between them (a pgbench script of \set commands then BEGIN, four
   * statements, END): `sequence()` draws the event's statements and parameters, the same draws as `event()`,
   * which must then be `ctx.runSequence` of them. Batched, no event starts after the batch's deadline, but
   * the statements of one that started all run (a transaction is not cut in its middle). Not with `single`.
   * The engine does not see a transaction its statements open (`ctx.begin` is not called): a handler whose
   * events do gives `singleFailed` too, and closes it after a failure (pgbench's runner does), or says
   * `sequenceTransaction`.
   */
  sequence?(): readonly SingleStatement[];
  sequenceLength?: number;
  /**
   * With `sequence`: each event is one transaction, its first statement opening it (BEGIN) and its last
   * ending it (COMMIT). When a statement after the first fails, the engine rolls the transaction back before
   * the error policy, as it does for an `event()` that failed after `ctx.begin()`: in a batch, and when
   * `event()` runs it as `ctx.runSequence` (or `ctx.querySequence`) of the drawn statements. sysbench's OLTP
   * transactions say so.
   */
  sequenceTransaction?: boolean;
  /**
   * With `single` or `sequence`: a batched event's statement failed with `error` (statement `at` of the
   * event, 0 for `single`), and the last `unrun` events drawn after it will not run. Undo those draws (the
   * events after this one draw the same again) and keep the failed event's draw for a retry (an `event()`
   * with `attempt` > 1 replays it, as pgbench's retries replay the same random numbers); return the error
   * `event()` would have thrown for it. The statements of a `sequence` event before `at` ran: a transaction
   * they opened is still open, and the next `event()` runs first (a `sequence()` that throws sends it
   * there) and closes it. Without it, the drawn events run next in order, a retry is the next draw
   * (sysbench's workloads), and the error is taken as it is.
   */
  singleFailed?(error: DbError, unrun: number, at: number): unknown;
  /**
   * This client's own number of events when the run is limited by rounds (a smack client type's
   * `set_num_rounds`); the client stops at the smaller of this and the run's `--rounds`.
   */
  rounds?: number;
  /**
   * This client's own error policy, as sysbench's database drivers have one: called with each error an
   * event throws, except lost connections (always re-established, then the event is run again). Return
   * `restart` to roll back and run the event again from the start (up to `--max-tries` tries, then it counts
   * as a failed event), `skip` to count it as a failed event and go on with the next one (not after the
   * deadline when the error is retryable: the event is then dropped, as a restart would be), `stop` to end the run (unless
   * `--ignore-errors` names it), or undefined for the engine's own policy (deadlocks, serialization
   * failures, lock waits and SQLite busy restart; anything else stops). Restarted and skipped errors are the
   * run's ignored errors.
   */
  onError?(error: DbError): ErrorAction | undefined;
  /** The engine gave up on the event (out of tries after restarts, or skipped): it counts as failed. */
  failed?(error: DbError): void;
  /**
   * A fatal error ends only this client, which is counted as aborted, and the others go on (pgbench's rule);
   * without it a fatal error stops the run.
   */
  abortOnError?: boolean;
  /** Open a new connection for every event (pgbench -C); closing and opening it are timed apart from the event. */
  connectPerEvent?: boolean;
  close?(): Promise<void> | void;
}

/** One text query of `ClientContext.querySequence`: recorded under `type`. */
export interface AdhocQuery {
  readonly type: string;
  readonly sql: string;
}

/** What `ClientHandler.single` draws for one event (`sequence`, for each statement): the statement and its parameters. */
export interface SingleStatement {
  readonly statement: Statement;
  readonly params?: readonly unknown[] | undefined;
  /**
   * A text query to send instead of executing `statement` (pgbench's `-M simple`: the script's SQL with the
   * values put in), recorded under the statement's type as `ctx.query` records it. A handler's draws are all
   * text queries or none.
   */
  readonly sql?: string;
}

/** What the engine does after an error in an event (see `ClientHandler.onError`). */
export type ErrorAction = 'restart' | 'skip' | 'stop';

/** Context for `prepare` and `cleanup`, which run once in the main thread. */
export interface AdminContext {
  readonly target: Target;
  readonly driver: DriverName;
  readonly options: Readonly<Record<string, unknown>>;
  /** Parallelism the user asked for (`--threads`/`--clients`). */
  readonly threads: number;
  /** Whether the user gave `--db`: a workload's own connection settings (smack client blocks) are then ignored. */
  readonly targetOverridden?: boolean;
  /** A connection opened for the admin work. */
  readonly conn: Connection;
  /** Run `fn` on `n` connections at once (e.g. loading tables in parallel), each with its own connection. */
  parallel(n: number, fn: (conn: Connection, index: number) => Promise<void>): Promise<void>;
  /** Progress messages; they go to stderr. */
  log(message: string): void;
}

export type OptionType = 'int' | 'number' | 'bool' | 'string';

/** A workload option, given on the command line as `--name value` (dashes or underscores). */
export interface OptionSpec {
  type: OptionType;
  default: number | boolean | string | undefined;
  description: string;
  /** Allowed values for a string option. */
  choices?: readonly string[];
  /** What the help shows as the default when `default` does not say it (one worked out at run time). */
  defaultText?: string;
  /** Smallest and largest allowed values of a numeric option. */
  min?: number;
  max?: number;
}

/** A workload: built in, compiled from a `.smack` file, or exported by a user's module. */
export interface Workload {
  name: string;
  description?: string;
  options?: Record<string, OptionSpec>;
  /**
   * The positional arguments it takes (a smack file's `$1 $2 …`), for its help. A workload without this
   * takes none: words after it on the command line are refused.
   */
  positionals?: readonly { name: string; description: string }[];
  /** Run defaults the workload brings (a smack file's `create_threads` and `set_num_rounds`). */
  defaults?: { clients?: number; rounds?: number };
  /** Per-client connection override (a smack `client` block's host/user/db), applied unless `--db` is given. */
  targetFor?(clientId: number, base: Target): Target;
  /** Create tables and load data (`dbsmack prepare`; also before `run` when `prepareOnRun` is set). */
  prepare?(ctx: AdminContext): Promise<void>;
  /** The target when `--db` is not given (a smack file's client block for `-d`). */
  defaultTarget?(): Target;
  /** Split the finished result into client types (a smack file's client blocks); stored as `groups`. */
  groupsOf?(
    result: import('../metrics/run-result.ts').RunResult,
  ): import('../metrics/run-result.ts').RunGroup[];
  /** Run `prepare` at the start of every `run` (a smack file creates and fills its tables itself). */
  prepareOnRun?: boolean;
  cleanup?(ctx: AdminContext): Promise<void>;
  /**
   * Checked before `run` starts (not before `prepare`): throw a `UsageError` when the data is not there,
   * saying which `dbsmack prepare` command makes it.
   */
  check?(ctx: AdminContext): Promise<void>;
  /**
   * Its `check` reads no typed values (whether a table is there, a count): its connection may then be of
   * the load clients' connector when that is dbsmack's own, so that the main thread loads no library
   * client before a run (mysql2 costs about 0.1 s of CPU to load, pg less). Rows then hold numbers for
   * integer and float columns and text for everything else.
   */
  textCheck?: boolean;
  /**
   * Error codes (server error numbers or SQLSTATEs) this workload expects and counts as ignored errors
   * instead of stopping the run, like `--ignore-errors` (sysbench's duplicate keys under `--skip-trx`).
   */
  ignoreErrors?(options: Readonly<Record<string, unknown>>): readonly string[];
  /**
   * Whether every statement of its events only reads (no write, no row lock: kinds.ts `onlyReads` guesses
   * it from SQL), under these options; undefined or false when it may write or is not known before its
   * clients run. A hint for the run's layout, never for counting: on PostgreSQL with the native I/O core, up
   * to 8 clients that only read get a load thread each (4 on an AMD CPU, as writers: capacity.ts
   * `soloIoMaxClients`), as a client whose statements wait in the server (commits, locks) costs more CPU
   * that way than in a shared loop.
   */
  readOnly?(options: Readonly<Record<string, unknown>>): boolean;
  /** Add the workload's own figures to the finished result (pgbench's per-script statistics). */
  extendResult?(result: import('../metrics/run-result.ts').RunResult): void;
  /**
   * A text layout of its own for `--format text`, by name (the layouts live in the report layer):
   * `barrel`, super-smack's Query Barrel Report, drawn from the result's groups (`groupsOf`).
   */
  textLayout?: 'barrel';
  /** Called once per client in its worker after it connects; declares statements, returns the event function. */
  client(ctx: ClientContext): ClientHandler | Promise<ClientHandler>;
}

/**
 * A serialisable reference to a workload, so that each worker thread can load the same workload: a built-in
 * name, a module path or a smack file, with the raw option values and positional arguments.
 */
export interface WorkloadRef {
  /** Built-in name (`select1`, `oltp_read_only`), or an absolute path to a `.smack`, `.ts` or `.js` file. */
  ref: string;
  /** Option values as given on the command line (strings), parsed by the workload's option specs. */
  rawOptions: Record<string, string | boolean>;
  /** Positional arguments after the workload (a smack file's $1 $2 …). */
  args: string[];
  /**
   * Arguments may be missing (`prepare`, `cleanup`, help: a smack file then leaves out its `main`, which
   * alone reads them). Never set for a run.
   */
  argsOptional?: boolean;
  /**
   * The file URL of the JavaScript the main thread compiled a TypeScript `ref` into (module-compile.ts):
   * set only in the plan a load worker gets (registry.ts, `workerRef`).
   */
  module?: string;
}
