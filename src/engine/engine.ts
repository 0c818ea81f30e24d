/**
 * The engine: runs one planned run's load workers and hands the merged outcome (`EngineOutcome`,
 * metrics/outcome.ts) to `buildRunResult`. `Engine.run` only orchestrates its parts, each readable and
 * tested alone:
 * - spawn.ts: the workers started, the clients assigned to them (client id % workers), the init/ready/fail
 *   handshake and the start message (`LoadWorkers`);
 * - accumulator.ts: the workers' counter snapshots merged into the run's totals and its closed intervals
 *   (`RunAccumulator`, pure);
 * - deadline.ts: the run's times (start, measure start, end), stop requests and their reasons, and the grace
 *   before workers that did not stop are given up (`Deadline`, on an injected clock).
 * Beside them, capacity.ts: how many workers and clients the machine holds (`defaultWorkers`,
 * `capacityProblem`), which the run layer's planning asks before a run.
 */
import { DbError } from '../driver/errors.ts';
import { UserError } from '../errors.ts';
import type { EngineOutcome, LiveView, StuckLoad } from '../metrics/outcome.ts';
import type { IntervalPoint } from '../metrics/run-result.ts';
import { type LiveTotals, RunAccumulator } from './accumulator.ts';
import { Deadline, type StopRequest } from './deadline.ts';
import {
  CTRL_LEFT,
  CTRL_SIZE,
  CTRL_STOP,
  type FailMessage,
  type IntervalMessage,
  type RunPlan,
} from './protocol.ts';
import { LoadWorkers, type WorkerEvents } from './spawn.ts';

// The machine's capacity lives in capacity.ts; test/default-workers.test.ts reads it from the engine.
export {
  capacityProblem,
  defaultWorkers,
  type MachineLimits,
  machineLimits,
  maxWorkers,
  SQLITE_WORKERS_PER_CORE,
  soloIoMaxClients,
  WORKER_BYTES,
} from './capacity.ts';
export type { LiveTotals };

export interface EngineHooks {
  /**
   * After each complete interval: a reason to stop the run now (a threshold that can no longer hold), or
   * undefined to go on.
   */
  check?(live: LiveView): string | undefined;
  /** An interval is complete (all workers reported it). */
  onInterval?(point: IntervalPoint): void;
  /**
   * One worker's interval snapshot, as it arrives, with the run's totals merged so far (live metrics:
   * `--metrics-listen`; the totals go on changing: read them, do not keep a copy).
   */
  onSnapshot?(snapshot: IntervalMessage, totals: LiveTotals): void;
  /** Every worker has stopped measuring; the clients' connections are still open until this settles. */
  onMeasureEnd?(): Promise<void> | void;
  /** Connections are up; the run starts when the returned promise settles. */
  onStart?(info: {
    serverVersion: string;
    clients: number;
    workers: number;
    sessionIds: number[];
    /** The statement types the clients declared in their set-up (ad-hoc ones appear only as they run). */
    types: string[];
  }): Promise<void> | void;
}

/** Why a run could not start: a client failed to load, connect or set up. */
export class StartError extends Error {
  readonly phase: FailMessage['phase'];
  readonly error: DbError;
  readonly clientId: number | undefined;
  /** The user error the worker failed with, as it was thrown there (code, exit code, hint). */
  readonly userError: UserError | undefined;
  constructor(f: FailMessage) {
    super(f.error.message);
    this.phase = f.phase;
    this.error = DbError.fromJSON(f.error);
    this.clientId = f.clientId;
    this.userError = f.userError ? UserError.fromJSON(f.userError) : undefined;
  }
}

export class Engine {
  private readonly plan: RunPlan;
  private readonly hooks: EngineHooks;
  private readonly ctrlBuf = new SharedArrayBuffer(CTRL_SIZE * 4);
  private readonly ctrl = new Int32Array(this.ctrlBuf);
  private readonly deadline: Deadline;
  /** Ends the run loop's current wait (a stop request). */
  private wake: (() => void) | undefined;
  private readonly nWorkers: number;

  /** `graceMs`: grace for in-flight statements after a stop or the deadline, before workers are terminated. */
  constructor(plan: RunPlan, workers: number, hooks: EngineHooks = {}, graceMs = 5000) {
    this.plan = plan;
    this.hooks = hooks;
    this.nWorkers = Math.max(1, Math.min(workers, plan.clients));
    this.deadline = new Deadline(graceMs);
  }

  /** Ask the run to stop: clients finish their current event and the result so far is kept. */
  stop(reason: StopRequest, detail?: string): void {
    if (!this.deadline.request(reason, detail)) return;
    Atomics.store(this.ctrl, CTRL_STOP, 1);
    this.wake?.();
  }

  /**
   * Spawn the workers and wait for them to connect, start them together, merge what they send until they are
   * done (or the deadline's grace is over), and return the merged outcome.
   */
  async run(): Promise<EngineOutcome> {
    const { plan, hooks, deadline } = this;
    const acc = new RunAccumulator(plan, this.nWorkers);
    const pool = new LoadWorkers(plan, this.nWorkers, this.ctrlBuf);
    const n = pool.count;
    const cpu0 = process.cpuUsage();
    const startedAt = new Date();
    try {
      pool.launch(this.events(acc, pool));
      await this.connected(pool);
      const ready = pool.ready;
      await hooks.onStart?.({ ...ready, clients: plan.clients, workers: n });
      const times = deadline.schedule(plan);
      pool.start(times);
      const cpu = measuredCpu(cpu0, deadline.untilMeasureMs());

      const stuck = await this.untilDone(pool, acc);
      const cpuUsed = cpu.stop();
      let given: StuckLoad | undefined;
      if (stuck > 0) {
        const cutOffUs = deadline.cutOffUs();
        Atomics.store(this.ctrl, CTRL_STOP, 1);
        given = { mainThreadClients: 0, workers: 0, workerClients: 0 };
        for (let i = 0; i < n; i++) {
          if (pool.isFinished(i)) continue;
          await pool.terminate(i);
          const ids = pool.clientIds[i] ?? [];
          acc.abandoned(ids, deadline.stuckReason, cutOffUs);
          if (i === 0 && pool.inMainThread) given.mainThreadClients = ids.length;
          else {
            given.workers++;
            given.workerClients += ids.length;
          }
        }
      }
      for (const p of acc.finish(times.measureAt)) hooks.onInterval?.(p);

      const merged = acc.outcome(times.measureAt);
      return {
        plan,
        workers: n,
        ...(pool.inMainThread ? { mainThread: true } : {}),
        ...(ready.sharedIoThread ? { sharedIoThread: true } : {}),
        serverVersion: ready.serverVersion,
        sessionIds: ready.sessionIds,
        startedAt,
        ...merged,
        connectMs: pool.connectMs,
        cpu: { userS: cpuUsed.user / 1e6, systemS: cpuUsed.system / 1e6 },
        stopReason: deadline.stopReason(merged.fatal !== undefined, stuck),
        ...(deadline.detail !== undefined ? { stopDetail: deadline.detail } : {}),
        stuck: given,
      };
    } finally {
      await pool.terminateAll();
    }
  }

  /** What the workers send, into the accumulator and the hooks. */
  private events(acc: RunAccumulator, pool: LoadWorkers): WorkerEvents {
    let measured = 0;
    /** When every worker has stopped measuring, let the probes look once more, then release the workers. */
    const markMeasured = (): void => {
      measured++;
      if (measured !== pool.count) return;
      void Promise.resolve()
        .then(() => this.hooks.onMeasureEnd?.())
        .catch(() => {})
        .then(() => pool.release());
    };
    let checkedUpTo = -1;
    /** `--threshold-abort`: once per newly completed interval, ask whether the run can still pass. */
    const liveCheck = (): void => {
      const check = this.hooks.check;
      if (check === undefined || acc.closedUpTo === checkedUpTo || this.deadline.stopRequested) return;
      checkedUpTo = acc.closedUpTo;
      // The interval that ends at the deadline (closed at it when events are still in flight: accumulator.ts)
      // is judged with the run, at the end: the run is over, there is nothing left to stop early.
      const { timeS, reportIntervalS } = this.plan;
      if (timeS !== undefined && (acc.closedUpTo + 1) * reportIntervalS >= timeS - 1e-9) return;
      const why = check(acc.liveView());
      if (why !== undefined) this.stop('threshold', why);
    };
    return {
      interval: (m) => {
        acc.interval(m);
        this.hooks.onSnapshot?.(m, acc.live);
        for (const p of acc.closeComplete()) this.hooks.onInterval?.(p);
        liveCheck();
      },
      measured: markMeasured,
      done: (m) => {
        acc.done(m);
        this.hooks.onSnapshot?.(m.last, acc.live);
      },
      lost: (i, error) => {
        acc.lost(i, error);
        markMeasured();
        Atomics.store(this.ctrl, CTRL_STOP, 1);
      },
    };
  }

  /** Connect phase: every worker ready, or the start failure (a worker failed, or the run was stopped). */
  private async connected(pool: LoadWorkers): Promise<void> {
    while (!pool.allReady && pool.failure === undefined && this.deadline.reason === undefined)
      await pool.changed();
    const fail = pool.failure;
    if (fail !== undefined) throw new StartError(fail);
    if (this.deadline.reason !== undefined)
      throw new StartError({
        type: 'fail',
        workerIndex: 0,
        phase: 'connect',
        error: {
          kind: 'fatal',
          code: 'INTERRUPTED',
          message: 'interrupted before the run started',
          sqlState: undefined,
        },
      });
  }

  /**
   * Run phase: wait for every worker to finish, within the deadline's and the stop request's grace. The
   * number of workers that did not finish in it (0: all did).
   */
  private async untilDone(pool: LoadWorkers, acc: RunAccumulator): Promise<number> {
    let left = 0;
    for (;;) {
      if (pool.unfinished === 0) return 0;
      // the grace follows the run's longest event and runs again from each client that finished (deadline.ts)
      this.deadline.stretch(acc.longestUs() / 1000);
      const nowLeft = Atomics.load(this.ctrl, CTRL_LEFT);
      if (nowLeft > left) {
        left = nowLeft;
        this.deadline.progress();
      }
      const wait = this.deadline.remainingMs();
      if (acc.fatal) Atomics.store(this.ctrl, CTRL_STOP, 1);
      if (wait <= 0) return pool.unfinished;
      await Promise.race([
        pool.changed(),
        new Promise<void>((r) => {
          this.wake = r;
          if (Number.isFinite(wait)) setTimeout(r, Math.min(wait, 1000)).unref();
        }),
      ]);
    }
  }
}

/**
 * The main thread's CPU over the measured part: from the measure start (a timer `untilMs` ahead) to `stop`;
 * from `cpu0` when the run ends before the measured part starts.
 */
function measuredCpu(cpu0: NodeJS.CpuUsage, untilMs: number): { stop(): NodeJS.CpuUsage } {
  let cpuStart = cpu0;
  const timer = setTimeout(() => {
    cpuStart = process.cpuUsage();
  }, untilMs);
  return {
    stop: () => {
      clearTimeout(timer);
      return process.cpuUsage(cpuStart);
    },
  };
}
