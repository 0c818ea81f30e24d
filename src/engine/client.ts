/**
 * One benchmark client: its connection, its `ClientContext` for the workload, and its event loop with the
 * error policy (retry, reconnect with back-off, ignore, stop). Runs inside a load worker.
 */
import { batchingOf } from '../driver/connectors.ts';
import { asDbError, DbError } from '../driver/errors.ts';
import { BATCH_MAX, BATCH_OK, StatementBatch } from '../driver/statement-batch.ts';
import type { Connection, Driver, PreparedStatement, Row, Target } from '../driver/types.ts';
import { nowUs } from '../metrics/clock.ts';
import { kindOfSql } from '../metrics/kinds.ts';
import type { ClientSummary } from '../metrics/outcome.ts';
import { SeededRandom } from '../seeded-random.ts';
import { checkLength, checkParamTypes } from '../workload/define.ts';
import type {
  AdhocQuery,
  ClientContext,
  ClientHandler,
  SingleStatement,
  Statement,
  StatementOptions,
  Workload,
} from '../workload/types.ts';
import { beforeFlush, sleep } from './io.ts';
import { CTRL_EVENTS, CTRL_STOP, type RunPlan } from './protocol.ts';
import type { RateSchedule } from './rate.ts';
import type { Recorder } from './recorder.ts';

/** Shared state of one worker that its clients read on the hot path. */
export interface WorkerState {
  readonly plan: RunPlan;
  readonly ctrl: Int32Array;
  readonly recorder: Recorder;
  readonly ignore: ReadonlySet<string>;
  measureAt: number;
  endAt: number;
  /**
   * Next interval boundary (epoch µs); crossing it flushes a snapshot. +∞ once the next is the deadline,
   * whose interval closes with the run (load-thread.ts `boundaryAfter`).
   */
  nextBoundary: number;
  flush(now: number): void;
  warmup: { events: number; queries: number; errors: number };
  /** The first fatal error of this worker. */
  fatal: DbError | undefined;
  /** Open-loop schedule of this worker (`--rate`); undefined in the closed loop. */
  rate: RateSchedule | undefined;
  /** Rate mode: events in progress in this worker. */
  active: number;
  /** Rate mode: events a client took from the schedule but could not start before the deadline. */
  rateDropped: number;
  /**
   * Rate mode: the usual service time of an event in this worker (µs, a moving average that a stalled
   * event moves little), to tell a stalled server from clients that cannot keep up.
   */
  usualServiceUs?: number;
}

/** How the closed loop's inline first try of an event ended, when it needs the full error policy. */
const OPEN_TX = 'open-tx';
type FirstTry = typeof OPEN_TX | { error: unknown };

/** The error as the engine treated it (a duplicate key a workload restarts on is recorded as retried). */
const asKind = (e: DbError, kind: 'retryable' | 'fatal'): DbError =>
  e.kind === kind ? e : new DbError(kind, e.code, e.message, e.sqlState);

/**
 * Statement batches (ClientHandler.single on the native I/O core). Why batches: on the native path what
 * remained per statement was JavaScript's own machinery (the pump's call into the connection, a promise
 * resolved, the client's loop resumed, the next statement's encode and submit, the histogram record, the
 * interval checks: about 40% of the worker's CPU). A batch encodes K events' statements at once, hands them
 * to the core in one call, and records the K results in one loop when the batch's one promise settles. The
 * statements still run one at a time on the connection, each timed by the core, each counted; the core
 * starts none after the batch's deadline (the run's end, the next interval boundary, the end of the
 * warm-up), and no batch runs longer than BATCH_BUDGET_US plus one statement, so a stop request waits at
 * most that. K starts at BATCH_FIRST and doubles while a whole batch takes under half the budget; a batch
 * the budget cut short sets K to what it ran, so that few statements are encoded again (the events it did
 * not run stay drawn, `pending`, and are the next ones: every event gets the draw of the per-statement
 * path, which matters to a workload whose draws carry state). At 32 clients a statement takes 0.5-2 ms, so
 * the budget sets K there; at 1 to 8 clients K grows to BATCH_MAX. Why 50 ms: with 5 ms, a batch at 32
 * clients held 5-8 statements and its fixed cost (the call, the promise, the wait's round) weighed;
 * oltp_point_select on PostgreSQL, 32 clients, 4 s, 5 and 20 ms in turn, four pairs: 14.1-16.7 µs of
 * client CPU per query against 14.8-19.8, 41-47k q/s against 36-47k; at 8 clients the same either way.
 * With 20 ms on a slower machine (2026-12-03, 1.8 ms a statement at 32 clients) a batch still held about 10
 * (96,000 transactions of `dbsmack pgbench -S -c 32 -j 2`: 9,911 batches, 5,034 waits, by uprobes on the
 * core); 20 and 50 ms in turn, seconds 4-8 of 10 s runs, user CPU per transaction lower with 50 in 9 of 10
 * pairs (median 7.0 against 8.7 µs), whole process in 8 of 10, transactions per second higher in 7;
 * oltp_point_select 32 clients for 10 s, user CPU per query lower in 3 of 3 pairs on PostgreSQL (6.0-7.6
 * against 6.7-8.1 µs) and 5 of 6 on MariaDB, where the rest is noise. A stop request waits up to 50 ms.
 */
const BATCH_FIRST = 4;
const BATCH_BUDGET_US = 50_000;
/** A sequence's statements all run (runSequence): a budget no event reaches (1,000 s). */
const SEQUENCE_BUDGET_US = 1e9;

/**
 * The statements of a batch in flight, from `from`, that completed without error before `boundary` (epoch
 * µs; `t0` the batch's submit): the end of that run of them.
 */
function doneBefore(batch: StatementBatch, from: number, t0: number, boundary: number): number {
  const n = batch.done;
  let i = from;
  while (i < n && batch.status(i) === BATCH_OK && t0 + batch.endUs(i) < boundary) i++;
  return i;
}

/**
 * Claim up to `most` of the run's `--events` (the workers' shared count): as many as are left, at most
 * `most`, 0 when none are. Unlike an add it never takes the count past the limit, so that a batch that
 * runs fewer than it claimed can give the rest back to whoever goes on.
 */
export function claimEvents(ctrl: Int32Array, events: number, most: number): number {
  for (;;) {
    const before = Atomics.load(ctrl, CTRL_EVENTS);
    if (before >= events) return 0;
    const take = Math.min(most, events - before);
    if (Atomics.compareExchange(ctrl, CTRL_EVENTS, before, before + take) === before) return take;
  }
}

/**
 * A workload called `ctx.query` or `ctx.all` without its SQL (the type name first is easy to forget): said
 * in the workload's words rather than as whatever the driver trips over.
 */
const notSql = (call: string, sql: unknown): DbError =>
  new DbError(
    'fatal',
    'BAD_CALL',
    `ctx.${call}: the SQL must be a string, got ${sql === null ? 'null' : typeof sql}`,
  );

/**
 * A sequence's first item was a prepared statement's and item `i` a text query's (the other way round, an
 * item without its SQL in a text sequence, is `notSql`'s).
 */
const mixedSequence = (i: number): DbError =>
  new DbError(
    'fatal',
    'BAD_CALL',
    `ctx.runSequence: statement ${i} has its SQL (a text query) where the first has none: a sequence is all text queries or none`,
  );

/** An item of a text sequence: querySequence's `{ type, sql }` or runSequence's drawn `{ statement, sql }`. */
type TextItem = AdhocQuery | SingleStatement;
const typeOfText = (q: TextItem): string => ('statement' in q ? q.statement.type : q.type);

/** Settled promises of the row counts 0…63, shared by every synchronous statement (they cannot change). */
const SETTLED: readonly Promise<number>[] = Array.from({ length: 64 }, (_, n) => Promise.resolve(n));

export class Client implements ClientContext {
  readonly clientId: number;
  readonly clients: number;
  readonly driver: Target['driver'];
  readonly options: Readonly<Record<string, unknown>>;
  readonly random: SeededRandom;
  readonly seed: number;

  conn: Connection;
  connectMs: number;
  private readonly w: WorkerState;
  private readonly dbDriver: Driver;
  private readonly target: Target;
  private handler: ClientHandler | undefined;
  private readonly statements: Statement[] = [];
  /** Slot in the recorder for each statement id, and for ad-hoc types by name. */
  private readonly slots: number[] = [];
  private readonly adhoc = new Map<string, number>();
  private prepared: (PreparedStatement | undefined)[] = [];
  private measuring = false;
  private inTx = false;
  /** The try of the event in progress (ClientContext.attempt). */
  attempt = 1;
  /** --rate: when the event in progress was due (ClientContext.scheduledUs); 0 in the closed loop. */
  scheduledUs = 0;
  private readonly txSlots: { begin: number; commit: number; rollback: number };
  readonly stats: ClientSummary;
  /**
   * `--stages`: the windows (epoch µs) in which this client runs events; between them its connection is
   * closed. Undefined without stages (always active).
   */
  windows: [number, number][] | undefined;
  /** `--stages`: its connection is closed until its next window opens (parkUntilWindow, nextWindow). */
  private parked = false;
  /** Whether this client shares its worker's thread with others (a blocking driver must not wait in a call). */
  sharedThread = false;
  /** The statement batch of this client (closed loop, native core, `single` events); see BATCH_FIRST. */
  private batch: StatementBatch | undefined;
  /** Its size for the next batch, in events. */
  private batchSize = BATCH_FIRST;
  /**
   * Statements per batched event: 1 (`single`) or the handler's `sequenceLength` (`sequence`). The
   * statements of one event are consecutive in the batch, in `pending`, and in the batch's results, and a
   * batch holds whole events (the core starts no event after its deadline but runs all of one it started).
   */
  private group = 1;
  /** Slot of each statement of the batch. */
  private readonly batchSlots = new Int32Array(BATCH_MAX);
  /** The batch is in the core; results before `batchNext` are recorded. */
  private batchInFlight = false;
  /** The batch is of text queries (`SingleStatement.sql`), not executions. */
  private batchText = false;
  private batchNext = 0;
  /**
   * The batch's submit (epoch µs): its results' end times count from it. This and the other times in epoch
   * µs start as -0, a double, as `stats.busyUs` does: a field that held a small integer changes the object's
   * shape at the first time stored in it.
   */
  private batchT0 = -0;
  /** The end of the last event recorded (the start of the next). */
  private batchEventStart = -0;
  /**
   * Events drawn for a batch and not run yet (the batch ended early: an error, its budget, a boundary), in
   * the order drawn: the next events take them before drawing again, the tries after an error too, so every
   * event gets the draw it gets on the per-statement path (a workload's draws may carry state: a counter).
   * Their statements (`group` an event) are `pending[0]` to `pending[pendingN - 1]`; the array itself is
   * never shortened, because setting an array's length to 0 gives up its backing store, which the next
   * batch then grew again element by element (about 1% of a load thread's user time at 32 clients).
   */
  private readonly pending: SingleStatement[] = [];
  private pendingN = 0;
  /**
   * The next event cannot join a batch (its statement is not prepared yet, or its draw threw): it runs on
   * its own (nextEvent), then batches go on.
   */
  private unbatchable = false;
  /** `runSequence`'s batch on the native core (made at its first use), its slots, and while in the core
   * the statements recorded so far and its submit (epoch µs). */
  private seq: StatementBatch | undefined;
  private seqSlots: Int32Array | undefined;
  private seqInFlight = false;
  private seqNext = 0;
  private seqT0 = -0;
  /** ClientContext.sequenceIndex. */
  sequenceIndex = 0;
  /** Its harvest is registered (io.ts beforeFlush), once. */
  private harvesting = false;
  /** Whether sequences go to the core as batches (`?batch=off`, DBSMACK_BATCH=off: one at a time). */
  private readonly sequences: boolean;
  /**
   * ClientContext.cancelled: the run is stopping and this client's statement in flight was cancelled
   * (`cancelRequest`): the error that ends it is the stop's doing, not the server's, and is neither counted
   * nor handed to the workload's error policy; the client leaves its loop. Nothing that ends after the
   * cancel is counted: MySQL's SLEEP() and BENCHMARK() end early without an error when their query is
   * killed, and a time cut short by the stop is not a measurement.
   */
  cancelled = false;

  constructor(
    w: WorkerState,
    id: number,
    driver: Driver,
    target: Target,
    conn: Connection,
    connectMs: number,
    options: Record<string, unknown>,
  ) {
    this.w = w;
    this.clientId = id;
    this.clients = w.plan.clients;
    this.driver = target.driver;
    this.options = options;
    this.seed = w.plan.seed;
    this.random = new SeededRandom((w.plan.seed ^ Math.imul(id + 1, 0x9e3779b1)) >>> 0);
    this.dbDriver = driver;
    this.sequences = batchingOf(target);
    this.target = target;
    this.conn = conn;
    this.connectMs = connectMs;
    this.txSlots = {
      begin: w.recorder.slotOf('begin', 'other'),
      commit: w.recorder.slotOf('commit', 'other'),
      rollback: w.recorder.slotOf('rollback', 'other'),
    };
    // busyUs starts as a double (-0 is no small integer): V8 would otherwise re-shape the object at the first
    // fractional time added, and recompile the code that uses it
    this.stats = { id, events: 0, queries: 0, errors: 0, connectMs, busyUs: -0, batched: 0, aborted: false };
  }

  async setup(workload: Workload): Promise<void> {
    this.handler = await workload.client(this);
  }

  // ---- ClientContext ------------------------------------------------------------------------------

  statement(type: string, sql: string, options?: StatementOptions): Statement {
    const kind = options?.kind ?? kindOfSql(sql);
    const paramTypes = options?.paramTypes;
    if (paramTypes !== undefined) checkParamTypes(type, paramTypes);
    const s: Statement = {
      id: this.statements.length,
      type,
      sql,
      kind,
      prepared: options?.prepare ?? true,
      ...(paramTypes !== undefined ? { paramTypes } : {}),
    };
    this.statements.push(s);
    this.slots.push(this.w.recorder.slotOf(type, kind));
    return s;
  }

  run(stmt: Statement, params?: readonly unknown[]): Promise<number> {
    const p = stmt.prepared ? this.prepared[stmt.id] : undefined;
    if (p?.runSync === undefined) return this.runAsync(stmt, params);
    // In-process back-end (SQLite): the statement runs synchronously and the answer is a promise that is
    // already settled, shared for small row counts, so the statement allocates nothing of its own.
    const slot = this.slots[stmt.id] as number;
    const t0 = nowUs();
    let n: number;
    try {
      n = p.runSync(params);
    } catch (e) {
      this.statementFailed(slot);
      return Promise.reject(e);
    }
    this.statementDone(slot, t0, n);
    return n < SETTLED.length ? (SETTLED[n] as Promise<number>) : Promise.resolve(n);
  }

  private async runAsync(stmt: Statement, params?: readonly unknown[]): Promise<number> {
    const slot = this.slots[stmt.id] as number;
    let p: PreparedStatement | undefined;
    if (stmt.prepared) p = this.prepared[stmt.id] ?? (await this.prepareOn(stmt));
    const t0 = nowUs();
    let n: number;
    try {
      if (p === undefined) n = await this.conn.query(stmt.sql, params);
      else if (p.runSync !== undefined) n = p.runSync(params);
      else n = await p.run(params);
    } catch (e) {
      this.statementFailed(slot);
      throw e;
    }
    this.statementDone(slot, t0, n);
    return n;
  }

  /** Prepare `stmt` on this connection (a failure counts as an error of its type). */
  private async prepareOn(stmt: Statement): Promise<PreparedStatement> {
    let p: PreparedStatement;
    try {
      p = await this.conn.prepare(stmt.sql, stmt.paramTypes);
    } catch (e) {
      this.statementFailed(this.slots[stmt.id] as number);
      throw e;
    }
    this.prepared[stmt.id] = p;
    return p;
  }

  /**
   * Declared statements in order, one at a time (ClientContext.runSequence). On the native core, those
   * that are prepared go as one batch: one request and one completion for all, each still timed by the core
   * where its bytes are sent and received, none started before the one before it is answered. A statement
   * that must be prepared first is prepared here; one that cannot be encoded for a batch (or any, off the
   * native core) and the ones after it run as `run` runs them. Drawn text queries (`sql` on every item:
   * pgbench's `-M simple`, sysbench's `--db-ps-mode=disable`) run as `querySequence` runs its queries, each
   * recorded under its statement's type.
   */
  runSequence(items: readonly SingleStatement[]): Promise<void> {
    const done =
      items.length > 0 && (items[0] as SingleStatement).sql !== undefined
        ? this.textSequence(items, 'runSequence([{ statement, sql }, …]), statement')
        : this.statementSequence(items);
    return this.handler?.sequenceTransaction === true ? done.catch((e) => this.sequenceFailed(e)) : done;
  }

  /**
   * A sequence of a handler whose sequences are transactions (ClientHandler.sequenceTransaction) failed: past
   * its first statement, the transaction that statement opened is open, and runEvent rolls it back before the
   * error policy, on the per-statement and JavaScript paths as after a batch (drawnFailed).
   */
  private sequenceFailed(e: unknown): never {
    if (this.sequenceIndex > 0) this.inTx = true;
    throw e;
  }

  private async statementSequence(items: readonly SingleStatement[]): Promise<void> {
    const n = items.length;
    // the first item says which kind the sequence is: a text query after it would run as its statement
    for (let i = 1; i < n; i++)
      if ((items[i] as SingleStatement).sql !== undefined) {
        this.sequenceIndex = i;
        throw mixedSequence(i);
      }
    let from = 0;
    // a statement that cannot be prepared fails where it stands, after the ones before it ran
    let end = n;
    let failure: unknown;
    if (this.conn.runBatch !== undefined && n > 1 && this.sequences) {
      for (let i = 0; i < n; i++) {
        const s = (items[i] as SingleStatement).statement;
        if (s.prepared && this.prepared[s.id] === undefined) {
          try {
            await this.prepareOn(s);
          } catch (e) {
            failure = e;
            end = i;
            break;
          }
        }
      }
      this.sequenceIndex = 0;
      if (end > 1) from = await this.sequenceBatch(items, end);
    }
    for (let i = from; i < end; i++) {
      const e = items[i] as SingleStatement;
      this.sequenceIndex = i;
      await this.run(e.statement, e.params);
    }
    this.sequenceIndex = end;
    if (end < n) throw failure;
  }

  /**
   * The first `count` statements of `items`, as far as they encode for a batch, as one batch; returns how
   * many ran.
   */
  private async sequenceBatch(items: readonly SingleStatement[], count: number): Promise<number> {
    const batch = this.sequenceReset();
    const slots = this.seqSlots as Int32Array;
    const most = Math.min(count, BATCH_MAX);
    for (let i = 0; i < most; i++) {
      const e = items[i] as SingleStatement;
      const bytes = e.statement.prepared ? this.prepared[e.statement.id]?.encode?.(e.params) : undefined;
      if (bytes === undefined) break;
      batch.add(bytes);
      slots[i] = this.slots[e.statement.id] as number;
    }
    return this.sequenceRun(batch, false);
  }

  /** The sequence's batch, empty (made, with its slots and its harvest, at the first use). */
  private sequenceReset(): StatementBatch {
    this.seq ??= new StatementBatch();
    this.seqSlots ??= new Int32Array(BATCH_MAX);
    if (!this.harvesting) {
      this.harvesting = true;
      beforeFlush(() => this.harvest());
    }
    this.seq.reset();
    return this.seq;
  }

  /** Run the sequence's batch (`text`: of text queries), record it; returns how many ran, or throws its error. */
  private async sequenceRun(batch: StatementBatch, text: boolean): Promise<number> {
    if (batch.count === 0) return 0;
    const slots = this.seqSlots as Int32Array;
    // every statement of the event runs, however long it takes (the event is under way)
    batch.budgetUs = SEQUENCE_BUDGET_US;
    this.seqT0 = nowUs();
    this.seqNext = 0;
    this.seqInFlight = true;
    try {
      await (this.conn as Required<Connection>).runBatch(batch, text);
    } finally {
      this.seqInFlight = false;
    }
    const n = batch.done;
    const ok = batch.error !== undefined ? n - 1 : n;
    for (let i = this.seqNext; i < ok; i++) this.recordSequenced(batch, i, true);
    if (batch.error !== undefined) {
      this.statementFailed(slots[ok] as number);
      this.sequenceIndex = ok;
      throw batch.error;
    }
    return n;
  }

  /**
   * Text queries in order, one at a time (ClientContext.querySequence): on the native core as one batch, as
   * `runSequence` runs prepared statements; elsewhere each as `query` runs it.
   */
  querySequence(queries: readonly AdhocQuery[]): Promise<void> {
    const done = this.textSequence(queries, 'querySequence([{ type, sql }, …]), query');
    return this.handler?.sequenceTransaction === true ? done.catch((e) => this.sequenceFailed(e)) : done;
  }

  /** Text queries in order (querySequence's, or runSequence's drawn ones); `call` names the call in errors. */
  private async textSequence(queries: readonly TextItem[], call: string): Promise<void> {
    const n = queries.length;
    // checked before any runs, on either path
    for (let i = 0; i < n; i++) {
      const sql = (queries[i] as TextItem | undefined)?.sql;
      if (typeof sql !== 'string') {
        this.sequenceIndex = i;
        throw notSql(`${call} ${i}`, sql);
      }
    }
    let from = 0;
    const conn = this.conn;
    if (conn.runBatch !== undefined && conn.encodeQuery !== undefined && n > 1 && this.sequences) {
      const batch = this.sequenceReset();
      const slots = this.seqSlots as Int32Array;
      const most = Math.min(n, BATCH_MAX);
      for (let i = 0; i < most; i++) {
        const q = queries[i] as TextItem;
        batch.add(conn.encodeQuery(q.sql as string));
        slots[i] = this.adhocSlot(typeOfText(q), q.sql as string);
      }
      this.sequenceIndex = 0;
      from = await this.sequenceRun(batch, true);
    }
    for (let i = from; i < n; i++) {
      const q = queries[i] as TextItem;
      this.sequenceIndex = i;
      await this.query(typeOfText(q), q.sql as string);
    }
    this.sequenceIndex = n;
  }

  /** Statement i of the sequence batch, as statementDone records a statement (`flushes`: see recordBatched). */
  private recordSequenced(batch: StatementBatch, i: number, flushes: boolean): void {
    const w = this.w;
    if (this.cancelled) {
      // ended after the stop cancelled it (see `cancelled`): not counted
    } else if (this.measuring) {
      const end = this.seqT0 + batch.endUs(i);
      if (flushes && end >= w.nextBoundary) w.flush(end);
      w.recorder.record((this.seqSlots as Int32Array)[i] as number, batch.latencyUs(i), batch.value(i));
      this.stats.queries++;
    } else {
      w.warmup.queries++;
    }
    this.seqNext = i + 1;
  }

  async query(type: string, sql: string, params?: readonly unknown[]): Promise<number> {
    if (typeof sql !== 'string') throw notSql('query(type, sql, params?)', sql);
    const slot = this.adhocSlot(type, sql);
    const t0 = nowUs();
    try {
      const n = await this.conn.query(sql, params);
      this.statementDone(slot, t0, n);
      return n;
    } catch (e) {
      this.statementFailed(slot);
      throw e;
    }
  }

  async all(type: string, sql: string, params?: readonly unknown[]): Promise<Row[]> {
    if (typeof sql !== 'string') throw notSql('all(type, sql, params?)', sql);
    const slot = this.adhocSlot(type, sql);
    const t0 = nowUs();
    try {
      const rows = await this.conn.all(sql, params);
      this.statementDone(slot, t0, rows.length);
      return rows;
    } catch (e) {
      this.statementFailed(slot);
      throw e;
    }
  }

  async begin(): Promise<void> {
    const t0 = nowUs();
    try {
      await this.conn.begin();
    } catch (e) {
      this.statementFailed(this.txSlots.begin);
      throw e;
    }
    this.inTx = true;
    this.statementDone(this.txSlots.begin, t0, 0);
  }

  async commit(): Promise<void> {
    const t0 = nowUs();
    try {
      await this.conn.commit();
    } catch (e) {
      this.statementFailed(this.txSlots.commit);
      throw e;
    } finally {
      this.inTx = false;
    }
    this.statementDone(this.txSlots.commit, t0, 0);
  }

  async rollback(): Promise<void> {
    const t0 = nowUs();
    this.inTx = false;
    try {
      await this.conn.rollback();
    } catch (e) {
      this.statementFailed(this.txSlots.rollback);
      throw e;
    }
    this.statementDone(this.txSlots.rollback, t0, 0);
  }

  sleep(ms: number): Promise<void> {
    return sleep(ms);
  }

  count(name: string, n = 1): void {
    if (this.measuring) this.w.recorder.count(name, n);
  }

  step(name: string, us: number): void {
    if (this.measuring) this.w.recorder.step(name, us);
  }

  // ---- recording ----------------------------------------------------------------------------------

  private adhocSlot(type: string, sql: string): number {
    let slot = this.adhoc.get(type);
    if (slot === undefined) {
      slot = this.w.recorder.slotOf(type, kindOfSql(sql));
      this.adhoc.set(type, slot);
    }
    return slot;
  }

  /** A statement of `slot` that began at `t0` ended now with `rows`: recorded; returns its end. */
  private statementDone(slot: number, t0: number, rows: number): number {
    const t1 = nowUs();
    if (this.cancelled) return t1; // a statement the stop cancelled may end without an error (MySQL's SLEEP)
    if (this.measuring) {
      // A statement that ended after the boundary closes the interval before it is counted, and an event is
      // counted before it closes one (eventDone): an event then falls in the interval of its last statement
      // (an event of one statement used to be counted one interval after its statement).
      if (t1 >= this.w.nextBoundary) this.w.flush(t1);
      // The native I/O core's own timing of the statement, where it has one (io.ts).
      this.w.recorder.record(slot, this.conn.timedUs ?? t1 - t0, rows);
      this.stats.queries++;
    } else {
      this.w.warmup.queries++;
    }
    return t1;
  }

  private statementFailed(slot: number): void {
    if (this.measuring && !this.cancelled) this.w.recorder.typeError(slot);
  }

  /**
   * The run is stopping (Ctrl-C, --exit-on-abort, a fatal error, a threshold) while this client is still in
   * its event: what cancels its statement in flight on the server, run from another connection (cancel.ts),
   * so that a long statement does not hold the stop until the engine's grace gives up on the whole worker
   * and loses what it measured. From now on what the client's statements end with is not counted
   * (`cancelled`). Undefined where nothing can cancel (SQLite runs in-process; a driver without a session
   * id; a client parked between stages).
   */
  cancelRequest(): { sql: string; target: Target; driver: Driver } | undefined {
    const sql = cancelStatement(this.driver, this.conn.sessionId);
    if (sql === undefined || this.parked) return undefined;
    this.cancelled = true;
    return { sql, target: this.target, driver: this.dbDriver };
  }

  // ---- the event loop -----------------------------------------------------------------------------

  /** Run events until a limit, a stop request or a fatal error. */
  async loop(): Promise<void> {
    if (this.w.rate !== undefined) return this.openLoop(this.w.rate);
    const w = this.w;
    const { events } = w.plan;
    const own = this.handler?.rounds;
    const rounds =
      w.plan.rounds !== undefined && own !== undefined ? Math.min(w.plan.rounds, own) : w.plan.rounds;
    const ctrl = w.ctrl;
    const handler = this.handler as ClientHandler;
    let done = 0;
    let ran = 0;
    // The end of one event is the start of the next: one clock read per event fewer, and the few
    // instructions between them are the client's own time between events either way.
    let start = nowUs();
    // --stages: the end of the window this client is active in (+∞ without stages)
    let activeUntil = this.windows === undefined ? Number.POSITIVE_INFINITY : Number.NEGATIVE_INFINITY;
    // Batches of events of one statement (`single`) or a fixed run of them (`sequence`): on the native core
    // only (its connections stay native when they are opened again), not with stages or a connection per
    // event (those keep the per-statement path).
    this.group = handler.single !== undefined ? 1 : (handler.sequenceLength ?? 0);
    const batching =
      this.conn.runBatch !== undefined &&
      this.windows === undefined &&
      handler.connectPerEvent !== true &&
      batchingOf(this.target) &&
      (handler.single !== undefined || handler.sequence !== undefined) &&
      this.group >= 1 &&
      this.group <= BATCH_MAX;
    // An in-process back-end with a synchronous path (SQLite, one client a thread: Connection.querySync,
    // PreparedStatement.runSync) runs events of one statement (`single`) with no promise and no await
    // (syncEvent). Such a connection is never lost, so never replaced by one of another kind.
    const inProcess =
      !batching &&
      this.conn.querySync !== undefined &&
      handler.single !== undefined &&
      handler.connectPerEvent !== true;
    if (batching) {
      this.batch = new StatementBatch();
      if (!this.harvesting) {
        this.harvesting = true;
        beforeFlush(() => this.harvest());
      }
    }
    for (;;) {
      if (ctrl[CTRL_STOP] !== 0) break;
      if (start >= w.endAt) break;
      if (start >= activeUntil) {
        const until = await this.nextWindow(start);
        if (until === undefined) break;
        activeUntil = until;
        start = nowUs();
        if (start >= w.endAt) break;
      }
      this.measuring = start >= w.measureAt;
      if (batching && !this.unbatchable && this.conn.runBatch !== undefined) {
        let most = Math.min(this.batchSize, Math.floor(BATCH_MAX / this.group));
        if (this.measuring && rounds !== undefined) most = Math.min(most, rounds - done);
        if (most <= 0) break;
        // --events: claim up to `most` at once (never past the limit), give back what the batch did not run
        let claimed = 0;
        if (this.measuring && events !== undefined) {
          claimed = claimEvents(ctrl, events, most);
          if (claimed <= 0) break;
          most = claimed;
        }
        const r = await this.batchEvents(handler, most, start);
        if (claimed > r.ran) Atomics.sub(ctrl, CTRL_EVENTS, claimed - r.ran);
        if (r.ran > 0) ran++;
        if (this.measuring) done += r.ran;
        if (r.stop) break;
        start = r.end;
        continue;
      }
      if (this.measuring) {
        if (rounds !== undefined && done >= rounds) break;
        if (events !== undefined && Atomics.add(ctrl, CTRL_EVENTS, 1) >= events) {
          // undone, so that the count stays the events claimed (a batch may give some back: see above)
          Atomics.sub(ctrl, CTRL_EVENTS, 1);
          break;
        }
      }
      if (handler.connectPerEvent === true && ran > 0) {
        if (!(await this.freshConnection())) break;
        start = nowUs();
      }
      ran++;
      // The common case runs the event inline; errors and an open transaction take runEvent's full policy.
      let outcome: 'ok' | 'failed' | 'stop';
      // the end of an event run synchronously: its statement's end (-1: read the clock after it)
      let syncEnd = -1;
      this.attempt = 1;
      try {
        const r = inProcess ? this.syncEvent(handler) : this.nextEvent(handler);
        if (typeof r === 'number') syncEnd = r;
        else await r;
        outcome = this.inTx ? await this.runEvent(OPEN_TX) : 'ok';
      } catch (e) {
        syncEnd = -1;
        outcome = await this.runEvent({ error: e });
      }
      if (outcome === 'stop') break;
      const end = syncEnd >= 0 && !this.inTx ? syncEnd : nowUs();
      if (this.measuring) done++;
      this.eventDone(outcome, end - start, end - start, end);
      start = end;
    }
  }

  /**
   * Up to `most` events (`group` statements each, drawn by the handler's `single` or `sequence`) as one
   * batch on the native core, the first starting at `start`. Records each statement and each event as the
   * per-statement path does: the statement's time as the core measured it, each event from the end of the
   * one before (the first from `start`) to its last statement's end. A batch ends at its first error, which
   * then takes the full error policy (runEvent), as an event's first try that threw; the statements of the
   * failed event after the one that failed are dropped with it. Returns the events run (the failed one
   * included), the end of the last, and whether the client stops. Runs no batch when the first drawn event
   * has a statement not prepared yet (after a connect): that event is run on its own next (`unbatchable`).
   */
  private async batchEvents(
    handler: ClientHandler,
    most: number,
    start: number,
  ): Promise<{ ran: number; end: number; stop: boolean }> {
    const w = this.w;
    const batch = this.fillBatch(handler, most);
    if (batch.count === 0) {
      this.unbatchable = true;
      return { ran: 0, end: start, stop: false };
    }
    const t0 = nowUs();
    // no event started after the deadline, the next interval boundary or (in the warm-up) its end
    let until = Math.min(w.endAt, w.nextBoundary);
    if (!this.measuring) until = Math.min(until, w.measureAt);
    // whole µs: a small integer always (a fraction stored once would make V8 recompile this function)
    batch.budgetUs = Math.max(0, Math.floor(Math.min(until - t0, BATCH_BUDGET_US)));
    this.batchT0 = t0;
    this.batchNext = 0;
    this.batchEventStart = start;
    this.batchInFlight = true;
    await (this.conn as Required<Connection>).runBatch(batch, this.batchText);
    this.batchInFlight = false;
    const ok = this.batchRan(batch);
    const g = this.group;
    const end = this.batchEventStart;
    if (batch.error === undefined) return { ran: g === 1 ? ok : ok / g, end, stop: false };
    // The statement that failed: counted as the per-statement path counts it, then the error policy. A
    // workload that replays a failed event's draw (pgbench) undoes the draws after it and names the error
    // its event() would have thrown.
    this.statementFailed(this.batchSlots[ok] as number);
    const at = ok % g;
    const events = (ok - at) / g;
    // the failed event's statements after the failed one: not run, and not to be run
    const rest = g - 1 - at;
    if (rest > 0) {
      this.pending.copyWithin(0, rest, this.pendingN);
      this.pendingN -= rest;
    }
    const error = this.drawnFailed(handler, batch.error as DbError, at);
    this.attempt = 1;
    const outcome = await this.runEvent({ error });
    if (outcome === 'stop') return { ran: events + 1, end, stop: true };
    const after = nowUs();
    this.eventDone(outcome, after - this.batchEventStart, after - this.batchEventStart, after);
    return { ran: events + 1, end: after, stop: false };
  }

  /**
   * The batch of up to `most` drawn events (drawn now, or pending from before), encoded; stops before the
   * first event with a statement not prepared yet. Out of batchEvents, as is batchRan: V8 optimises an async
   * function as one piece with what it inlines, and each load thread compiles it anew at every run.
   */
  private fillBatch(handler: ClientHandler, most: number): StatementBatch {
    const batch = this.batch as StatementBatch;
    batch.reset();
    const g = this.group;
    batch.group = g;
    const pending = this.pending;
    const want = most * g;
    while (this.pendingN < want) {
      // a draw that throws leaves its state as it was (ClientHandler.single, .sequence): once the events
      // drawn before it have run, that event runs through event(), which throws it under the error policy
      if (g === 1) {
        let e: SingleStatement;
        try {
          e = (handler.single as () => SingleStatement)();
        } catch {
          break;
        }
        pending[this.pendingN++] = e;
      } else {
        let items: readonly SingleStatement[];
        try {
          items = (handler.sequence as () => readonly SingleStatement[])();
        } catch {
          break;
        }
        checkLength(items, g);
        for (let j = 0; j < g; j++) pending[this.pendingN++] = items[j] as SingleStatement;
      }
    }
    const drawn = Math.min(want, this.pendingN);
    const text = drawn > 0 && (pending[0] as SingleStatement).sql !== undefined;
    this.batchText = text;
    let i = 0;
    for (; i < drawn; i++) {
      const e = pending[i] as SingleStatement;
      let bytes: Uint8Array | undefined;
      if (text) bytes = e.sql === undefined ? undefined : this.conn.encodeQuery?.(e.sql);
      else if (e.sql === undefined && e.statement.prepared)
        bytes = this.prepared[e.statement.id]?.encode?.(e.params);
      if (bytes === undefined) break; // runs on its own (it prepares the statement), or after this batch
      batch.add(bytes);
      this.batchSlots[i] = this.slots[e.statement.id] as number;
    }
    // whole events only
    if (g > 1 && i % g !== 0) batch.cut(i - (i % g));
    return batch;
  }

  /**
   * After a batch ran: the events it did not run stay pending, the statements that succeeded are recorded
   * (those the harvest did not), and the next batch's size is set. Returns the statements that succeeded;
   * the failed one, if any, is `batch.error`'s.
   */
  private batchRan(batch: StatementBatch): number {
    const n = batch.done;
    // One path for a whole batch and one cut short (which copies nothing for a whole one): the first batch
    // cut short comes at the first interval boundary, after V8 has compiled this code, and a branch taken
    // for the first time then was compiled without its feedback and thrown away there (--trace-deopt:
    // "insufficient type feedback" at copyWithin, in every load thread).
    this.pending.copyWithin(0, n, this.pendingN);
    this.pendingN -= n;
    const failed = batch.error !== undefined;
    // the subtraction made on every batch, as below (a batch's first error comes late)
    const ok = n - (failed ? 1 : 0);
    for (let i = this.batchNext; i < ok; i++) this.recordBatched(batch, i, true);
    this.batchNext = ok;
    // The size of the next: doubled while whole batches are short, what fitted when the budget cut one. Each
    // candidate and each test is worked out on every batch, and the branches only choose: a test or a call
    // first made in a branch first taken late (the budget cuts its first batch long after V8 compiled this)
    // is compiled without feedback, and the compiled code is thrown away there, as with the copy above.
    const size = this.batchSize;
    const took = n > 0 ? batch.endUs(n - 1) : 0;
    const budget = batch.budgetUs;
    const grown = Math.min(BATCH_MAX, 2 * size);
    const fitted = Math.max(1, Math.floor(n / this.group));
    const whole = n === batch.count;
    const short = took < BATCH_BUDGET_US / 2;
    const over = took >= budget;
    const fullBudget = budget === BATCH_BUDGET_US;
    let next = size;
    if (!failed) {
      if (whole) {
        if (short) next = grown;
      } else if (over && fullBudget) next = fitted;
    }
    this.batchSize = next;
    return ok;
  }

  /**
   * An event of one statement (`single`) on an in-process back-end: drawn and run synchronously where its
   * statement has `runSync` (SQLite with one client a thread), recorded as `run` records it; returns the
   * statement's end, which is the event's (a text query the same, through `querySync`). Otherwise (the
   * statement not prepared yet) the drawn statement's promise. A failure is a drawn event's, as after a
   * batch (`drawnFailed`: a handler with `singleFailed` replays the draw on its retry); a draw that throws
   * leaves its state as it was, and the event runs through `event()` (ClientHandler.single).
   */
  // biome-ignore lint/suspicious/noConfusingVoidType: what ClientHandler.event returns (a synchronous event: void)
  private syncEvent(handler: ClientHandler): number | Promise<unknown> | void {
    if (this.pendingN > 0) return this.nextEvent(handler);
    let e: SingleStatement;
    try {
      e = (handler.single as () => SingleStatement)();
    } catch {
      return handler.event();
    }
    // a drawn event that failed, as a batched one: a workload that replays a failed event's draw on its
    // retry (ClientHandler.singleFailed: pgbench's scripts) is told, as it is after a batch
    const failed = (err: unknown): unknown =>
      handler.singleFailed === undefined ? err : this.drawnFailed(handler, asDbError(err), 0);
    let r: number | Promise<number>;
    try {
      r = this.runDrawn(e);
    } catch (err) {
      throw failed(err);
    }
    if (typeof r === 'number' || handler.singleFailed === undefined) return r;
    return r.catch((err: unknown) => {
      throw failed(err);
    });
  }

  /**
   * A drawn statement (`syncEvent`), run synchronously where it can be: its end; else (not prepared yet,
   * no synchronous path) its promise.
   */
  private runDrawn(e: SingleStatement): number | Promise<number> {
    const stmt = e.statement;
    let n: number;
    if (e.sql !== undefined) {
      const query = this.conn.querySync;
      if (query === undefined) return this.query(stmt.type, e.sql);
      const slot = this.adhocSlot(stmt.type, e.sql);
      const t0 = nowUs();
      try {
        n = query(e.sql);
      } catch (err) {
        this.statementFailed(slot);
        throw err;
      }
      return this.statementDone(slot, t0, n);
    }
    const p = stmt.prepared ? this.prepared[stmt.id] : undefined;
    if (p?.runSync === undefined) return this.run(stmt, e.params);
    const slot = this.slots[stmt.id] as number;
    const t0 = nowUs();
    try {
      n = p.runSync(e.params);
    } catch (err) {
      this.statementFailed(slot);
      throw err;
    }
    return this.statementDone(slot, t0, n);
  }

  /** The next event: a pending one drawn for a batch, else the workload's. */
  // biome-ignore lint/suspicious/noConfusingVoidType: what ClientHandler.event returns (a synchronous event: void)
  private nextEvent(handler: ClientHandler): Promise<unknown> | void {
    this.unbatchable = false;
    if (this.pendingN === 0) return handler.event();
    const g = this.group;
    let done: Promise<unknown>;
    const first = this.pending[0] as SingleStatement;
    if (g === 1) {
      done =
        first.sql === undefined
          ? this.run(first.statement, first.params)
          : this.query(first.statement.type, first.sql);
    } else {
      done = this.runSequence(this.pending.slice(0, g));
    }
    this.pending.copyWithin(0, g, this.pendingN);
    this.pendingN -= g;
    if (handler.singleFailed === undefined) return done;
    // as a batched event that failed
    return done.catch((err: unknown) => {
      throw this.drawnFailed(handler, asDbError(err), g === 1 ? 0 : this.sequenceIndex);
    });
  }

  /**
   * A drawn event (batched or pending) failed with `err` at its statement `at`: a workload that replays a
   * failed event's draw (ClientHandler.singleFailed: pgbench) undoes the draws after it, which are dropped,
   * and names the error its event() would have thrown; otherwise the error as it is, and the drawn events
   * run next. An event that is a transaction (ClientHandler.sequenceTransaction) and failed after its first
   * statement left it open: marked so (`inTx`), it is rolled back before the error policy.
   */
  private drawnFailed(handler: ClientHandler, err: DbError, at: number): unknown {
    // a transaction the event's first statement opened is open: runEvent rolls it back
    if (at > 0 && handler.sequenceTransaction === true) this.inTx = true;
    if (handler.singleFailed === undefined) return err;
    const unrun = this.pendingN / this.group;
    this.pendingN = 0;
    return handler.singleFailed(err, unrun, at);
  }

  /**
   * Record statement i of the batch, and its event when it is the event's last. `flushes`: an interval
   * boundary it crossed is flushed first, as statementDone does; not when harvesting (a flush is under way).
   */
  private recordBatched(batch: StatementBatch, i: number, flushes: boolean): void {
    const w = this.w;
    const end = this.batchT0 + batch.endUs(i);
    const last = this.group === 1 || (i + 1) % this.group === 0;
    if (this.cancelled) {
      // ended after the stop cancelled it (see `cancelled`): not counted
    } else if (this.measuring) {
      if (flushes && end >= w.nextBoundary) w.flush(end);
      w.recorder.record(this.batchSlots[i] as number, batch.latencyUs(i), batch.value(i));
      this.stats.queries++;
      if (last) {
        const us = end - this.batchEventStart;
        this.stats.busyUs += us;
        this.stats.events++;
        this.stats.batched++;
        w.recorder.recordEvent(us);
      }
    } else {
      w.warmup.queries++;
      if (last) w.warmup.events++;
    }
    if (last) this.batchEventStart = end;
  }

  /**
   * Before an interval flush (io.ts beforeFlush): record the statements of the batch in flight that
   * completed before the boundary, so that they count in the interval they ended in.
   */
  private harvest(): void {
    const boundary = this.w.nextBoundary;
    if (this.seqInFlight) {
      const seq = this.seq as StatementBatch;
      const end = doneBefore(seq, this.seqNext, this.seqT0, boundary);
      for (let i = this.seqNext; i < end; i++) this.recordSequenced(seq, i, false);
    }
    if (!this.batchInFlight) return;
    const batch = this.batch as StatementBatch;
    const end = doneBefore(batch, this.batchNext, this.batchT0, boundary);
    for (let i = this.batchNext; i < end; i++) this.recordBatched(batch, i, false);
    this.batchNext = end;
  }

  /**
   * The open loop of `--rate`: each event waits for its scheduled time (or starts at once when it is
   * already due), and its latency runs from that time, so time spent queued behind slow events counts.
   * Kept apart from `loop` so that the closed loop's hot path stays as it is.
   */
  private async openLoop(schedule: RateSchedule): Promise<void> {
    const w = this.w;
    const rate = w.plan.rate as NonNullable<RunPlan['rate']>;
    const skipLateUs = rate.skipLateUs ?? Number.POSITIVE_INFINITY;
    const { rounds, events } = w.plan;
    const ctrl = w.ctrl;
    let done = 0;
    let started = 0;
    let lastServiceUs = 0;
    for (;;) {
      if (ctrl[CTRL_STOP] !== 0) break;
      const intended = schedule.take();
      if (intended >= w.endAt) break;
      let now = nowUs();
      if (now - intended > skipLateUs) {
        // too late to start (pgbench -L under -R): skipped, counted, and as a transaction of -t
        this.measuring = intended >= w.measureAt;
        if (this.measuring) {
          if (rounds !== undefined && done >= rounds) break;
          if (events !== undefined && Atomics.add(ctrl, CTRL_EVENTS, 1) >= events) break;
          w.recorder.skip();
          done++;
        }
        continue;
      }
      while (intended > now) {
        await sleep(Math.min(Math.max(1, (intended - now) / 1000), 1000));
        if (ctrl[CTRL_STOP] !== 0) return;
        now = nowUs();
      }
      if (now >= w.endAt) {
        // due before the deadline, never started
        w.rateDropped++;
        break;
      }
      this.measuring = intended >= w.measureAt;
      if (this.measuring) {
        if (rounds !== undefined && done >= rounds) break;
        if (events !== undefined && Atomics.add(ctrl, CTRL_EVENTS, 1) >= events) break;
      }
      const lag = now - intended;
      if (lag > rate.maxLagUs) {
        this.rateNotKept(lag, lastServiceUs);
        break;
      }
      if (this.measuring) w.recorder.recordLag(lag, rate.lateUs);
      if (this.handler?.connectPerEvent === true && started > 0 && !(await this.freshConnection())) break;
      started++;
      w.active++;
      this.scheduledUs = intended;
      const outcome = await this.runEvent();
      w.active--;
      if (outcome === 'stop') break;
      const end = nowUs();
      if (this.measuring) done++;
      lastServiceUs = end - now;
      // the usual service time: a moving average, each step bounded to 4× the average so far
      const u = w.usualServiceUs;
      w.usualServiceUs = u === undefined ? lastServiceUs : u + 0.05 * (Math.min(lastServiceUs, 4 * u) - u);
      // latency from the intended start: time queued behind slow events counts
      this.eventDone(outcome, end - now, end - intended, end);
    }
  }

  /**
   * `--stages`: leave the window that ended at `now` (or the time before the first one): close the
   * connection when the next window does not follow at once, sleep until it starts and open a new one.
   * Returns the end of the window now entered, or undefined when the client has no more to run (no window
   * left before the deadline, a stop request, or a connection that could not be opened: then aborted).
   */
  private async nextWindow(now: number): Promise<number | undefined> {
    const w = this.w;
    const win = (this.windows ?? []).find(([, to]) => to > now);
    if (win === undefined || win[0] >= w.endAt) {
      if (!this.parked) await this.conn.close().catch(() => {});
      this.parked = true;
      return undefined;
    }
    if (win[0] <= now) return win[1];
    if (!this.parked) await this.conn.close().catch(() => {});
    this.parked = false;
    this.prepared = [];
    this.inTx = false;
    for (;;) {
      if (w.ctrl[CTRL_STOP] !== 0) return undefined;
      const left = win[0] - nowUs();
      if (left <= 0) break;
      await sleep(Math.min(Math.max(1, left / 1000), 100));
    }
    try {
      this.conn = await this.dbDriver.connect(this.target, {
        connectTimeoutMs: w.plan.connectTimeoutMs,
        load: true,
        sharedThread: this.sharedThread,
      });
    } catch (e) {
      const err = asDbError(e);
      if (this.measuring) w.recorder.recordError(err, false);
      this.stats.aborted = true;
      this.stats.abortReason = `could not connect at the start of its stage: ${err.code}: ${err.message}`;
      return undefined;
    }
    return win[1];
  }

  /**
   * `--stages`: a client whose first window opens after `start` (the run's start) closes the connection it
   * opened to check the target now, before the start, so that the first stage runs with its own
   * connections only (the client opens another when its window opens: nextWindow).
   */
  async parkUntilWindow(start: number): Promise<void> {
    const first = this.windows?.[0];
    if (first !== undefined && first[0] <= start) return;
    await this.conn.close().catch(() => {});
    this.parked = true;
  }

  /** Count a finished event: measured (busy time, latency, interval flush) or warm-up. */
  private eventDone(outcome: 'ok' | 'failed', busyUs: number, latencyUs: number, end: number): void {
    const w = this.w;
    if (this.cancelled) return; // cut short by the stop's cancel: not counted
    if (this.measuring) {
      this.stats.busyUs += busyUs;
      if (outcome === 'ok') {
        this.stats.events++;
        w.recorder.recordEvent(latencyUs);
      } else {
        this.stats.errors++;
      }
      if (end >= w.nextBoundary) w.flush(end);
    } else if (outcome === 'ok') {
      w.warmup.events++;
    } else {
      w.warmup.errors++;
    }
  }

  /**
   * `--rate-max-lag` exceeded. The client's own previous event says why: when it was in flight far longer
   * than usual (and for much of the lag), the server stalled; otherwise the clients could not keep up.
   */
  private rateNotKept(lagUs: number, lastServiceUs: number): void {
    const w = this.w;
    const rate = w.plan.rate as NonNullable<RunPlan['rate']>;
    if (w.fatal === undefined) {
      const usual = w.usualServiceUs ?? 0;
      const stalled = lastServiceUs >= 10 * usual && lastServiceUs >= lagUs / 2;
      const ms = (us: number): string => (us / 1000).toFixed(us < 10_000 ? 2 : 0);
      const head =
        `the rate of ${rate.perSec} events/s could not be kept: an event started ${(lagUs / 1e6).toFixed(3)} s ` +
        `behind its schedule (limit --rate-max-lag ${rate.maxLagUs / 1e6} s); `;
      w.fatal = new DbError(
        'fatal',
        'RATE_NOT_KEPT',
        stalled
          ? `${head}the server stalled: the client's last event was in flight ${ms(lastServiceUs)} ms ` +
              `(usually ${ms(usual)} ms); the clients were not saturated: leave --rate-max-lag out to keep the ` +
              'schedule through the stall and measure it'
          : `${head}statements took their usual time (the last event ${ms(lastServiceUs)} ms, usually ` +
              `${ms(usual)} ms) while events started late: the clients are saturated: lower --rate or add --threads`,
      );
    }
    Atomics.store(w.ctrl, CTRL_STOP, 1);
  }

  /**
   * One event with the error policy; 'failed' is an event that ended in an ignored error, 'stop' one that
   * is not counted and after which the client stops (a stop request, an error that stops it, a restartable
   * error after the deadline, a connection that could not be re-established). `first` is how
   * the closed loop's inline first try ended: the error it threw, or OPEN_TX when it succeeded with a
   * transaction left open. Without `first` (the open loop) the event is run from the start.
   */
  private async runEvent(first?: FirstTry): Promise<'ok' | 'failed' | 'stop'> {
    const w = this.w;
    const handler = this.handler as ClientHandler;
    for (let attempt = 1; ; attempt++) {
      try {
        this.attempt = attempt;
        if (attempt > 1 || first === undefined) await this.nextEvent(handler);
        else if (first !== OPEN_TX) throw first.error;
        if (this.inTx) {
          // A workload that leaves a transaction open would hold locks across events; close it.
          this.inTx = false;
          await this.conn.commit();
        }
        return 'ok';
      } catch (e) {
        // the stop cancelled the statement: not an error of the run, and the client stops
        if (this.cancelled) return 'stop';
        const err = asDbError(e);
        if (err.kind === 'reconnect') {
          if (this.measuring) w.recorder.recordError(err, true);
          if (!(await this.reconnect(err))) return 'stop';
          if (this.measuring) w.recorder.reconnect();
          if (w.ctrl[CTRL_STOP] !== 0) return 'stop';
          continue;
        }
        if (this.inTx) {
          this.inTx = false;
          await this.conn.rollback().catch(() => {});
        }
        // The workload's own policy (sysbench's drivers), else the engine's; recorded as it was treated.
        const action = handler.onError?.(err) ?? (err.kind === 'retryable' ? 'restart' : 'stop');
        // a retryable error skipped by the workload's own bound (pgbench -L) keeps its kind
        const retrying = action === 'restart' || (action === 'skip' && err.kind === 'retryable');
        const seen = retrying ? asKind(err, 'retryable') : asKind(err, 'fatal');
        if (retrying && nowUs() >= w.endAt) {
          // Time is up: the event is dropped, neither restarted nor counted as done or failed (pgbench's
          // rule; sysbench restarts it until it goes through). Under heavy lock contention a restart queues
          // again behind the transactions in flight, so restarting clients could keep a run from ending
          // (PostgreSQL, 16 clients on 20 rows: all 16 still waiting 5 s after the deadline while one
          // deadlock victim restarted each second). The error itself is counted: it happened.
          if (this.measuring) w.recorder.recordError(seen, true);
          return 'stop';
        }
        if (action === 'restart' && attempt < w.plan.maxTries) {
          if (this.measuring) {
            w.recorder.recordError(seen, true);
            w.recorder.retry();
          }
          if (w.ctrl[CTRL_STOP] !== 0) return 'stop';
          continue;
        }
        if (action !== 'stop' || err.matches(w.ignore)) {
          // Out of tries (counted as a failed event, as pgbench does), skipped, or named by --ignore-errors.
          if (this.measuring) w.recorder.recordError(seen, true);
          handler.failed?.(err);
          return 'failed';
        }
        if (this.measuring) w.recorder.recordError(seen, false);
        if (handler.abortOnError === true) {
          // pgbench's rule: the client that hit it stops, the others go on
          this.stats.aborted = true;
          this.stats.abortReason = `${err.code}: ${err.message}`;
          return 'stop';
        }
        if (w.fatal === undefined) w.fatal = err;
        this.stats.aborted = true;
        this.stats.abortReason = `${err.code}: ${err.message}`;
        Atomics.store(w.ctrl, CTRL_STOP, 1);
        return 'stop';
      }
    }
  }

  /**
   * A new connection for the next event (`connectPerEvent`, pgbench -C): close the old one, open another, and
   * record the time both took. False when it cannot connect: the client is then aborted.
   */
  private async freshConnection(): Promise<boolean> {
    const t0 = nowUs();
    await this.conn.close().catch(() => {});
    this.prepared = [];
    this.inTx = false;
    try {
      this.conn = await this.dbDriver.connect(this.target, {
        connectTimeoutMs: this.w.plan.connectTimeoutMs,
        load: true,
      });
    } catch (e) {
      const err = asDbError(e);
      if (this.measuring) this.w.recorder.recordError(err, false);
      this.stats.aborted = true;
      this.stats.abortReason = `could not connect for the next event: ${err.code}: ${err.message}`;
      return false;
    }
    if (this.measuring) this.w.recorder.connected(nowUs() - t0);
    return true;
  }

  /** Re-establish the connection with jittered exponential back-off until the reconnect deadline. */
  private async reconnect(cause: DbError): Promise<boolean> {
    const w = this.w;
    await this.conn.close().catch(() => {});
    this.prepared = [];
    this.inTx = false;
    const deadline = Date.now() + w.plan.reconnectTimeoutMs;
    let delay = 10;
    for (;;) {
      if (w.ctrl[CTRL_STOP] !== 0 || nowUs() >= w.endAt) return false;
      // no try outlasts the run: a server that accepts and does not answer (one shutting down or starting)
      // would otherwise hold the client, and its worker, past the deadline until the connect timeout
      const leftMs = Math.max(1, Math.ceil((w.endAt - nowUs()) / 1000));
      try {
        this.conn = await this.dbDriver.connect(this.target, {
          connectTimeoutMs: Math.min(w.plan.connectTimeoutMs, leftMs),
          load: true,
        });
        return true;
      } catch (e) {
        const err = asDbError(e);
        if (w.ctrl[CTRL_STOP] !== 0 || nowUs() >= w.endAt) return false;
        if (Date.now() >= deadline || err.kind === 'fatal') {
          this.stats.aborted = true;
          this.stats.abortReason = `connection lost (${cause.code}) and not re-established: ${err.code}: ${err.message}`;
          return false;
        }
      }
      await sleep(Math.min(delay * (0.5 + this.random.next()), Math.max(0, (w.endAt - nowUs()) / 1000)));
      delay = Math.min(delay * 2, 1000);
    }
  }

  async close(): Promise<void> {
    try {
      await this.handler?.close?.();
    } catch {
      // closing is best effort: the measurement is over
    }
    if (!this.parked) await this.conn.close().catch(() => {});
  }

  /**
   * Close the connection at once, a statement in flight or not (the engine gave up on this client; see
   * load-thread.ts `abort`). Its loop may never resume: nothing waits for it any more.
   */
  abort(): void {
    this.parked = true;
    if (this.conn.abort !== undefined) this.conn.abort();
    else void this.conn.close().catch(() => {});
  }
}

/**
 * The statement that cancels what session `id` is running, from another connection to the same server:
 * undefined where there is none (SQLite runs in-process; a driver that reports no session id).
 */
export function cancelStatement(driver: Target['driver'], id: number | undefined): string | undefined {
  if (id === undefined || !Number.isInteger(id) || id <= 0) return undefined;
  if (driver === 'postgres') return `SELECT pg_cancel_backend(${id})`;
  if (driver === 'mysql') return `KILL QUERY ${id}`;
  return undefined;
}
