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
 * Below them here: the machine's capacity (how many workers and clients it holds, `defaultWorkers`,
 * `capacityProblem`), which the run layer's planning asks before a run.
 */
import { readFileSync } from 'node:fs';
import os from 'node:os';
import { DbError } from '../driver/errors.ts';
import { UserError } from '../errors.ts';
import type { EngineOutcome, LiveView } from '../metrics/outcome.ts';
import type { IntervalPoint } from '../metrics/run-result.ts';
import { type LiveTotals, RunAccumulator } from './accumulator.ts';
import { Deadline, type StopRequest } from './deadline.ts';
import { CTRL_SIZE, CTRL_STOP, type FailMessage, type IntervalMessage, type RunPlan } from './protocol.ts';
import { LoadWorkers, type WorkerEvents } from './spawn.ts';

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

/**
 * Resident memory of one load worker thread: its own V8 isolate, the modules it loads and its heap. Measured
 * with /usr/bin/time (maximum RSS) on Node 20 running select1 on SQLite: 1 client 90 MB, 32 clients in 32
 * workers 564 MB, 64 in 64 workers 1,079 MB, so about 15.3 MB per worker (and 0.26 s of CPU to start one);
 * rounded up here.
 */
export const WORKER_BYTES = 16 * 2 ** 20;

/**
 * Memory of one client beyond its worker's: its connection, statements, random generator and recorder
 * slots. SQLite: 4,000 select1 clients over 4 workers took 786 MB against 161 MB for 4 clients, about
 * 156 KB each (its page cache, up to SQLite's default 2 MB, grows with the pages a workload touches).
 * Network clients: bench/soak.ts's 1024 clients took 134 MB against 115 MB for 64, about 20 KB each;
 * both rounded up here.
 */
export const CLIENT_BYTES: Record<RunPlan['target']['driver'], number> = {
  sqlite: 256 * 1024,
  mysql: 64 * 1024,
  postgres: 64 * 1024,
};

/**
 * Share of the machine's memory the load generator may plan for: the database under test, and whatever
 * else runs, need the rest.
 */
export const LOAD_MEMORY_SHARE = 0.5;

/**
 * SQLite worker threads per core by default. A thread per client makes clients really concurrent
 * (preempted mid-statement, as processes are), but beyond a few threads per core more of them only add
 * start-up time (0.26 s of CPU each) and memory; the clients beyond share threads, cooperatively (see
 * `sqliteDriver`). Measured on 2 cores, select1, 32 clients: 32 workers 80,000 q/s at 10.7-11.1 µs of
 * client CPU per query, 8 workers 65,000-78,000 q/s at 6.8-7.3 µs (a loaded machine: the CPU is the figure).
 */
export const SQLITE_WORKERS_PER_CORE = 8;

/** What the machine offers the load generator. */
export interface MachineLimits {
  cores: number;
  totalMemBytes: number;
  /** Open files a process may have (RLIMIT_NOFILE), when it can be read. */
  fileLimit?: number | undefined;
}

/** The soft limit of open files, from /proc/self/limits (Linux); undefined elsewhere. */
function openFileLimit(): number | undefined {
  try {
    const m = /^Max open files\s+(\d+|unlimited)/m.exec(readFileSync('/proc/self/limits', 'utf8'));
    return m?.[1] === undefined || m[1] === 'unlimited' ? undefined : Number(m[1]);
  } catch {
    return undefined;
  }
}

export function machineLimits(): MachineLimits {
  return { cores: cpuCount(), totalMemBytes: os.totalmem(), fileLimit: openFileLimit() };
}

/** The most load worker threads the machine can hold (in LOAD_MEMORY_SHARE of its memory). */
export function maxWorkers(m: MachineLimits = machineLimits()): number {
  return Math.max(1, Math.floor((m.totalMemBytes * LOAD_MEMORY_SHARE) / WORKER_BYTES));
}

/**
 * Default number of load workers, bounded on every driver. SQLite: one per client (its driver blocks the
 * thread) up to SQLITE_WORKERS_PER_CORE per core and what the memory holds; clients beyond share them.
 * Network clients get one worker per two cores: the database under test usually shares the machine, and on
 * a 2-core box a second worker cost 20-60% more CPU per query without raising throughput (bench/peers.ts,
 * README "Performance"); on bigger machines the clients spread over more threads.
 */
export function defaultWorkers(
  driver: RunPlan['target']['driver'],
  clients: number,
  cores: number = cpuCount(),
  m: MachineLimits = machineLimits(),
): number {
  const perCores =
    driver === 'sqlite' ? Math.max(4, SQLITE_WORKERS_PER_CORE * cores) : Math.max(1, Math.floor(cores / 2));
  return Math.max(1, Math.min(clients, perCores, maxWorkers(m)));
}

/** Open files a client needs: its socket; SQLite the database, its WAL and its shared-memory file. */
const FILES_PER_CLIENT: Record<RunPlan['target']['driver'], number> = { sqlite: 3, mysql: 1, postgres: 1 };

/** Why a run would not fit the machine, and what to do instead. */
export interface CapacityProblem {
  reason: string;
  hint: string;
}

/**
 * Why CLIENTS clients in WORKERS workers would not fit the machine (memory in LOAD_MEMORY_SHARE, open
 * files), or undefined when they fit. Checked before a run, so that too many clients are refused with the
 * reason instead of crashing the process (out of memory, EMFILE) minutes into it.
 */
export function capacityProblem(
  driver: RunPlan['target']['driver'],
  clients: number,
  workers: number,
  m: MachineLimits = machineLimits(),
): CapacityProblem | undefined {
  const w = Math.max(1, Math.min(workers, clients));
  const mib = (b: number): string => `${Math.round(b / 2 ** 20)} MiB`;
  const share = `${Math.round(LOAD_MEMORY_SHARE * 100)}% of its ${mib(m.totalMemBytes)}`;
  const most = maxWorkers(m);
  if (w > most) {
    return {
      reason: `${w} load worker threads need about ${mib(w * WORKER_BYTES)} (${mib(WORKER_BYTES)} each); this machine holds ${most} (in ${share})`,
      hint: `give --workers ${most} or fewer: the clients share the workers`,
    };
  }
  const have = m.totalMemBytes * LOAD_MEMORY_SHARE;
  const need = w * WORKER_BYTES + clients * CLIENT_BYTES[driver];
  if (need > have) {
    const fit = Math.max(1, Math.floor((have - w * WORKER_BYTES) / CLIENT_BYTES[driver]));
    return {
      reason: `${clients} ${driver} clients need about ${mib(need)} (${Math.round(CLIENT_BYTES[driver] / 1024)} KiB each, ${mib(WORKER_BYTES)} per worker thread); this machine offers ${mib(have)} (${share})`,
      hint: `give at most about ${fit} clients here, or run several dbsmack processes on several machines`,
    };
  }
  const files = clients * FILES_PER_CLIENT[driver] + 64;
  if (m.fileLimit !== undefined && files > m.fileLimit) {
    return {
      reason: `${clients} ${driver} clients need about ${files} open files; this process may open ${m.fileLimit}`,
      hint: `raise the limit (ulimit -n ${files}) or give fewer clients`,
    };
  }
  return undefined;
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
      pool.start(this.events(acc, pool));
      await this.connected(pool);
      const ready = pool.ready;
      await hooks.onStart?.({ ...ready, clients: plan.clients, workers: n });
      const times = deadline.schedule(plan);
      pool.run(times);
      const cpu = measuredCpu(cpu0, deadline.untilMeasureMs());

      const stuck = await this.untilDone(pool, acc);
      const cpuUsed = cpu.stop();
      if (stuck > 0) {
        const cutOffUs = deadline.cutOffUs();
        Atomics.store(this.ctrl, CTRL_STOP, 1);
        for (let i = 0; i < n; i++) {
          if (pool.isFinished(i)) continue;
          await pool.terminate(i);
          acc.abandoned(pool.clientIds[i] ?? [], deadline.stuckReason, cutOffUs);
        }
      }
      for (const p of acc.finish(times.measureAt)) hooks.onInterval?.(p);

      const merged = acc.outcome(times.measureAt);
      return {
        plan,
        workers: n,
        serverVersion: ready.serverVersion,
        sessionIds: ready.sessionIds,
        startedAt,
        ...merged,
        connectMs: pool.connectMs,
        cpu: { userS: cpuUsed.user / 1e6, systemS: cpuUsed.system / 1e6 },
        stopReason: deadline.stopReason(merged.fatal !== undefined, stuck),
        ...(deadline.detail !== undefined ? { stopDetail: deadline.detail } : {}),
        stuckWorkers: stuck,
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
    for (;;) {
      if (pool.unfinished === 0) return 0;
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

export const cpuCount = (): number => os.availableParallelism?.() ?? os.cpus().length;
