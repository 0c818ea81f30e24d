/**
 * A load thread's side of a run: it owns some of the run's clients (for SQLite, whose driver blocks its
 * thread, one each up to a bound, beyond it several that wait for locks without blocking the thread),
 * connects them, waits for the common start, runs them, and streams interval snapshots to the engine over
 * a message port. Stop requests arrive through shared memory, so a busy synchronous loop still sees them.
 *
 * It runs in a worker thread (worker-main.ts: the port is the thread's `parentPort`) or, for the first share
 * of a run whose clients never block their thread, in the main thread beside the engine (spawn.ts,
 * `MainThreadLoad`: the port is one end of a `MessageChannel`). Each call of `serveLoad` keeps its own state, so that the
 * main thread can serve run after run (sweeps, experiments).
 */
import { saveCodeCache } from '../code-cache.ts';
import { loadIoOf } from '../driver/connectors.ts';
import { asDbError, type DbError } from '../driver/errors.ts';
import { loadDriver } from '../driver/index.ts';
import { chooseLoadDesign, sharedIoSupported } from '../driver/native-core.ts';
import { type SerializedUserError, UserError } from '../errors.ts';
import { nowUs } from '../metrics/clock.ts';
import { SeededRandom } from '../seeded-random.ts';
import { parseWorkloadOptions } from '../workload/options.ts';
import { loadWorkload } from '../workload/registry.ts';
import type { Workload } from '../workload/types.ts';
import { CANCEL_TICK_MS, StopCanceller } from './cancel.ts';
import { Client, type WorkerState } from './client.ts';
import { connectAll } from './connect-all.ts';
import { batchedFlush } from './io.ts';
import {
  CTRL_LEFT,
  CTRL_STOP,
  type DoneMessage,
  type FromWorker,
  type InitMessage,
  type IntervalMessage,
  type StartMessage,
  type ToWorker,
} from './protocol.ts';
import { RateSchedule } from './rate.ts';
import { Recorder } from './recorder.ts';
import { clientWindows } from './stages.ts';

/** The port a load thread talks to the engine through: a worker's `parentPort`, or a `MessagePort`. */
export interface LoadPort {
  postMessage(m: FromWorker): void;
  on(event: 'message', listener: (m: ToWorker) => void): unknown;
  close(): void;
}

/** Where a load thread runs. */
export interface LoadHost {
  /** In the main thread beside the engine (no code cache of its own to save, no thread to end). */
  inThread: boolean;
  /** An error no client caught (a bug): a worker dies of it; in the main thread the engine is told. */
  fatal(e: unknown): void;
}

/** What the engine can do to a load thread in the main thread (a worker's thread it terminates instead). */
export interface LoadHandle {
  /**
   * Give up: close every client's connection at once, statements in flight or not, and stop sending
   * messages. For clients the engine no longer waits for (a statement that does not return).
   */
  abort(): void;
  /** Settles when the load has sent its last message (done or fail) or was aborted. */
  readonly finished: Promise<void>;
}

/** Serve one run's share of clients on `port` (the engine sends `init`, then `start`, then `release`). */
export function serveLoad(port: LoadPort, host: LoadHost): LoadHandle {
  /** The engine gave up on this load (`LoadHandle.abort`): nothing more is sent, connections close at once. */
  let aborted = false;
  let finish: () => void = () => {};
  const finished = new Promise<void>((r) => {
    finish = r;
  });
  const send = (m: FromWorker): void => {
    if (aborted) return;
    port.postMessage(m);
    if (m.type === 'done' || m.type === 'fail') finish();
  };
  let state:
    | (WorkerState & { workerIndex: number; idx: number; intervalUs: number; deadlineSent: boolean })
    | undefined;
  /** The clients this worker runs (its share of the run's `clients`, by id: `init.clientIds`). */
  let owned: Client[] = [];
  let init: InitMessage | undefined;

  let release: (() => void) | undefined;
  /** Flushes idle intervals while the clients run (onStart). */
  let flushTimer: NodeJS.Timeout | undefined;
  /** Cancels the statements in flight once the run has been stopping a while (cancel.ts). */
  let cancelTimer: NodeJS.Timeout | undefined;

  port.on('message', (m: ToWorker) => {
    if (m.type === 'init') onInit(m).catch(host.fatal);
    else if (m.type === 'start') onStart(m).catch(host.fatal);
    else if (m.type === 'release') release?.();
    else if (m.type === 'close') port.close();
  });

  /**
   * Connections opened after an abort (the engine gave up while they were connecting) close as they come.
   * True when the load was aborted.
   */
  async function abandoned(clients: Client[]): Promise<boolean> {
    if (!aborted) return false;
    await Promise.all(clients.map((c) => c.close()));
    return true;
  }

  async function onInit(m: InitMessage): Promise<void> {
    init = m;
    const { plan } = m;
    let phase: 'load' | 'connect' | 'setup' = 'load';
    let currentClient: number | undefined;
    try {
      const workload: Workload = await loadWorkload(plan.workload);
      const options = parseWorkloadOptions(workload.name, workload.options, plan.workload.rawOptions);
      const driver = await loadDriver(plan.target.driver);
      const recorder = new Recorder();
      const s = {
        plan,
        ctrl: new Int32Array(m.ctrl),
        recorder,
        ignore: new Set([...plan.ignoreErrors, ...(workload.ignoreErrors?.(options) ?? [])]),
        measureAt: Number.POSITIVE_INFINITY,
        endAt: Number.POSITIVE_INFINITY,
        nextBoundary: Number.POSITIVE_INFINITY,
        warmup: { events: 0, queries: 0, errors: 0 },
        fatal: undefined as DbError | undefined,
        rate: undefined as RateSchedule | undefined,
        active: 0,
        rateDropped: 0,
        workerIndex: m.workerIndex,
        idx: 0,
        deadlineSent: false,
        intervalUs: plan.reportIntervalS * 1e6,
        flush: batchedFlush(flush, nowUs, crossedBoundary),
      };
      state = s;
      phase = 'connect';
      // the native core's design for this thread's connections: one load thread holding all of many
      // PostgreSQL clients gets the core's shared I/O thread (native-core.ts, loadDesign)
      const sharedIoThread =
        loadIoOf(plan.target) === 'native' &&
        sharedIoSupported &&
        chooseLoadDesign(plan.target.driver, m.clientIds.length, m.clientIds.length === plan.clients) === 4;
      const connected = await connectAll(m.clientIds, async (id) => {
        const target =
          plan.targetOverridden || workload.targetFor === undefined
            ? plan.target
            : workload.targetFor(id, plan.target);
        const t0 = nowUs();
        try {
          const conn = await driver.connect(target, {
            connectTimeoutMs: plan.connectTimeoutMs,
            load: true,
            // several clients on this thread: a blocking driver must not wait inside a call
            sharedThread: m.clientIds.length > 1,
          });
          // the connection's own connect and handshake (see Connection.connectMs), not the time this call
          // waited for the connector to load or for the other connections of its batch
          return { id, target, conn, ms: conn.connectMs ?? (nowUs() - t0) / 1000 };
        } catch (e) {
          currentClient ??= id; // the first client that failed names the error
          throw e;
        }
      });
      owned = connected.map((c) => new Client(s, c.id, driver, c.target, c.conn, c.ms, options));
      if (await abandoned(owned)) return;
      for (const c of owned) c.sharedThread = m.clientIds.length > 1;
      phase = 'setup';
      for (const c of owned) {
        currentClient = c.clientId;
        await c.setup(workload);
      }
      send({
        type: 'ready',
        workerIndex: m.workerIndex,
        connectMs: owned.map((c) => c.connectMs),
        serverVersion: owned[0]?.conn.serverVersion ?? '',
        sessionIds: owned.map((c) => c.conn.sessionId ?? 0),
        types: recorder.names(),
        ...(sharedIoThread ? { sharedIoThread: true } : {}),
      });
    } catch (e) {
      const err = asDbError(e);
      await Promise.all(owned.map((c) => c.close()));
      send({
        type: 'fail',
        workerIndex: m.workerIndex,
        phase,
        error: err.toJSON(),
        ...userErrorOf(e),
        ...(currentClient !== undefined ? { clientId: currentClient } : {}),
      });
    }
  }

  /**
   * An interval boundary has passed that `flush` has not closed yet (never the deadline's: `boundaryAfter`
   * makes that one +∞).
   */
  function crossedBoundary(now: number): boolean {
    const s = state;
    return s !== undefined && now >= s.nextBoundary;
  }

  function flush(now: number): void {
    const s = state;
    if (s === undefined) return;
    // The interval that ends at the deadline is never flushed here: events still finishing after the deadline
    // belong to it, and it goes out with the final 'done' message.
    while (crossedBoundary(now)) {
      send(intervalMessage(s.idx));
      s.idx++;
      s.nextBoundary = boundaryAfter(s.idx);
    }
  }

  /**
   * The end of interval `idx`, or +∞ where that is the deadline or beyond it: the interval that ends at the
   * deadline closes with the 'done' message, never at a crossing, so no statement's end is to cross it.
   * With the deadline there, every statement still finishing after it went through the clients' crossing
   * branch, first taken then, after V8 had compiled their statement loops, which it threw away at the end
   * of every run (--trace-deopt).
   */
  function boundaryAfter(idx: number): number {
    const s = state as NonNullable<typeof state>;
    const b = s.measureAt + (idx + 1) * s.intervalUs;
    return b < s.endAt ? b : Number.POSITIVE_INFINITY;
  }

  /**
   * A tick after the deadline with events still in flight: the interval that ends at the deadline goes out
   * now with what ended by then (once every interval before it has), so that it closes on time; what ends
   * later goes out in `done`, and the accumulator puts it into that interval's point (accumulator.ts, top).
   */
  function deadlineTick(now: number): void {
    const s = state;
    if (s === undefined || s.deadlineSent || now < s.endAt || s.nextBoundary < s.endAt) return;
    s.deadlineSent = true;
    send(intervalMessage(s.idx));
  }

  function intervalMessage(idx: number): IntervalMessage {
    const s = state as NonNullable<typeof state>;
    const m: IntervalMessage = {
      type: 'interval',
      workerIndex: s.workerIndex,
      idx,
      ...s.recorder.snapshot(),
    };
    if (s.rate !== undefined) {
      m.queue = s.rate.backlog(nowUs());
      m.concurrency = s.active;
    }
    return m;
  }

  async function onStart(m: StartMessage): Promise<void> {
    const s = state;
    if (s === undefined || init === undefined) return;
    s.measureAt = m.measureAt;
    s.endAt = m.endAt;
    s.nextBoundary = boundaryAfter(0);
    if (init.plan.rate !== undefined) {
      // each worker paces its own clients' share of the rate, from the common start
      const share = owned.length / init.plan.clients;
      const random = new SeededRandom((init.plan.seed ^ Math.imul(s.workerIndex + 7, 0x2545f491)) >>> 0);
      const stages = init.plan.stages;
      s.rate = new RateSchedule(
        m.startAt,
        init.plan.rate,
        share,
        random,
        stages !== undefined ? { stages, measureAt: m.measureAt } : undefined,
      );
    } else if (init.plan.stages !== undefined) {
      // closed-loop stages: each client runs in the stages that have more clients than its id
      for (const c of owned) c.windows = clientWindows(init.plan.stages, c.clientId, m.measureAt);
      await Promise.all(owned.map((c) => c.parkUntilWindow(m.startAt)));
    }
    const wait = (m.startAt - nowUs()) / 1000;
    if (wait > 1) await new Promise((r) => setTimeout(r, wait - 1));
    // Timers may fire a little early; an event that started before the start would count as warm-up.
    while (nowUs() < m.startAt) {
      // spin for the last millisecond
    }
    // Async drivers leave the event loop free between statements: flush idle intervals on a timer too
    // (through s.flush, which waits for the native core's batch of completions and takes in the statement
    // batches in flight first: io.ts).
    flushTimer = setInterval(
      () => {
        s.flush(nowUs());
        deadlineTick(nowUs());
      },
      Math.max(50, Math.min(1000, s.intervalUs / 4000)),
    );
    const inLoop = new Set(owned);
    const canceller = new StopCanceller(s.ctrl, inLoop, Math.min(init.plan.connectTimeoutMs, 2000));
    cancelTimer = setInterval(() => canceller.tick(), CANCEL_TICK_MS);
    // each client that leaves its loop tells the main thread, whose grace for the run's end runs again
    await Promise.all(
      owned.map((c) =>
        c.loop().finally(() => {
          inLoop.delete(c);
          Atomics.add(s.ctrl, CTRL_LEFT, 1);
        }),
      ),
    );
    clearInterval(flushTimer);
    clearInterval(cancelTimer);
    const end = nowUs();
    await canceller.close(); // its connections, if a stop opened any (bounded by their connect timeout)
    const measured = Math.max(0, Math.min(end, s.endAt) - s.measureAt);
    flush(Math.min(end, s.endAt));
    const last = intervalMessage(s.idx);
    const warmSnap = { types: [], events: s.warmup.events, errors: [], retries: 0, reconnects: 0 };
    const done: DoneMessage = {
      type: 'done',
      workerIndex: s.workerIndex,
      last,
      warmup: {
        ...warmSnap,
        elapsedUs: Math.max(0, Math.min(end, s.measureAt) - m.startAt),
        types: [
          {
            name: '*',
            kind: 'other',
            count: s.warmup.queries,
            errors: s.warmup.errors,
          },
        ],
      },
      clientSummaries: owned.map((c) => c.stats),
      lastEndUs: measured > 0 ? s.measureAt + measured : 0,
      ...(end >= s.endAt ? { pastDeadline: true } : {}),
    };
    if (s.fatal) done.fatal = s.fatal.toJSON();
    if (s.rate !== undefined && s.fatal === undefined && Number.isFinite(s.endAt) && end >= s.endAt) {
      done.dropped = s.rate.backlog(s.endAt) + s.rateDropped;
    }
    // Keep the connections open until the engine says so: probes take their last server-side samples of the
    // run's own sessions, which vanish from the server when the clients disconnect.
    const released = new Promise<void>((resolve) => {
      release = resolve;
      setTimeout(resolve, RELEASE_TIMEOUT_MS).unref();
    });
    send({ type: 'measured', workerIndex: s.workerIndex });
    await released;
    await Promise.all(owned.map((c) => c.close()));
    // before `done`, after which the engine may end this thread (the main thread saves its cache at exit)
    if (!host.inThread) saveCodeCache();
    send(done);
  }

  return {
    abort(): void {
      if (aborted) return;
      aborted = true;
      if (state !== undefined) Atomics.store(state.ctrl, CTRL_STOP, 1);
      for (const c of owned) c.abort();
      clearInterval(flushTimer);
      clearInterval(cancelTimer);
      release?.();
      port.close();
      finish();
    },
    finished,
  };
}

/** How long a load thread keeps its connections open after measuring when the engine does not answer. */
const RELEASE_TIMEOUT_MS = 10_000;

/** A user error (bad input in a workload) crosses to the main thread as data: code, exit code, hint. */
function userErrorOf(e: unknown): { userError?: SerializedUserError } {
  const u = UserError.serialize(e);
  return u ? { userError: u } : {};
}
