/**
 * The engine's merged outcome of a run, as `buildRunResult` turns it into the RunResult: totals, histograms
 * and the plan's figures; and `LiveView`, the run so far as a live check (`--threshold-abort`) sees it. Below
 * the engine, so that the builders and the checks read them without importing the engine; the engine fills
 * them (engine/accumulator.ts, from the workers' snapshots), the stage figures are merged by engine/stage-acc.ts.
 */
import type { DbError } from '../driver/errors.ts';
import type { Histogram } from './histogram.ts';
import type { StatementKind } from './kinds.ts';
import type { ErrorCount, IntervalPoint } from './run-result.ts';

/** The part of a run's plan its figures read (the engine's `RunPlan`, engine/protocol.ts, extends it). */
export interface MeasurePlan {
  workload: { ref: string; args: string[] };
  /**
   * How many clients the run has: the concurrent simulated users, ids 0 to clients - 1, each running events
   * on its own connection. Across the engine, the probes and the RunResult, `clients` is always this count
   * (a stage's `clients`: how many of them run in it; the `dbsmack_clients` gauge: how many have their
   * connection open); a client's own figures are a `ClientSummary` (`clientSummaries`), a worker's share of
   * the clients its `clientIds`, the `Client` objects a worker runs its `owned`.
   */
  clients: number;
  rounds: number | undefined;
  events: number | undefined;
  timeS: number | undefined;
  warmupS: number;
  reportIntervalS: number;
  maxTries: number;
  /** Open loop: events per second over all clients (each worker takes its clients' share). */
  rate?: RatePlan;
  /** Whether --report-interval was given (sysbench prints interval lines only then). */
  reportIntervalGiven?: boolean;
  /** An extra percentile to report per interval and in total (sysbench's --percentile). */
  percentile?: number;
  /**
   * Stages of the measured part (`--stages`: `clients` each; `--rate-stages`: `rate` each, with `rate` set),
   * in order; their lengths add up to `timeS` and are whole multiples of `reportIntervalS`.
   */
  stages?: StagePlan[];
}

/** One stage: its length, and the clients it runs (closed loop) or the rate it ramps to (open loop). */
export interface StagePlan {
  durationS: number;
  clients?: number;
  rate?: number;
}

export interface RatePlan {
  perSec: number;
  /** `poisson` (exponential gaps, as sysbench) or `constant` (even gaps, as wrk2). */
  shape: 'poisson' | 'constant';
  /**
   * Stop the run when an event starts more than this behind its schedule (`--rate-max-lag`; Infinity when
   * not given: a stall is then measured and reported, not a reason to stop).
   */
  maxLagUs: number;
  /** An event that starts more than this after its scheduled time is counted late. */
  lateUs: number;
  /**
   * An event still to start more than this after its scheduled time is skipped: counted, never run, and
   * the next is taken (pgbench's -L under -R; absent: every event runs, however late).
   */
  skipLateUs?: number;
}

/** One client's figures over the run (its worker sends them when it is done). */
export interface ClientSummary {
  id: number;
  events: number;
  queries: number;
  errors: number;
  connectMs: number;
  busyUs: number;
  /** Events of the measured part it ran in statement batches on the native I/O core (ClientHandler.single). */
  batched: number;
  aborted: boolean;
  abortReason?: string;
}

export interface TypeAccumulator {
  kind: StatementKind;
  count: number;
  /** Of `count`, statements that returned or changed no row. */
  zero: number;
  errors: number;
  hist: Histogram;
}

export interface StageAccumulator {
  plan: StagePlan;
  /** Index from 0. */
  index: number;
  /** Planned start and end, seconds from the start of the measured part. */
  startS: number;
  endS: number;
  /** Seconds of it that were measured (the last interval ends where the run ended). */
  measuredS: number;
  queries: number;
  events: number;
  errors: number;
  eventHist: Histogram;
  types: Map<string, { kind: StatementKind; count: number; errors: number; hist: Histogram }>;
  /** Whether all its intervals are in (its figures are final). */
  closed: boolean;
}

/** What the engine gave up on when a run's clients did not stop in time. */
export interface StuckLoad {
  mainThreadClients: number;
  workers: number;
  workerClients: number;
}

export interface EngineOutcome {
  plan: MeasurePlan;
  /** Load threads (the main thread among them when `mainThread`). */
  workers: number;
  /** The first load thread's share of the clients ran in the main thread (engine/spawn.ts). */
  mainThread?: boolean;
  /** A load thread's native core ran every second connection's batches on its shared I/O thread. */
  sharedIoThread?: boolean;
  serverVersion: string;
  sessionIds: number[];
  startedAt: Date;
  /** Seconds of the measured part. */
  elapsedS: number;
  types: Map<string, TypeAccumulator>;
  events: { count: number; hist: Histogram };
  errors: ErrorCount[];
  retries: number;
  reconnects: number;
  intervals: IntervalPoint[];
  /** Each client's own figures (`client_stats` in the RunResult), in client id order. */
  clientSummaries: ClientSummary[];
  connectMs: number[];
  warmup: { elapsedS: number; events: number; queries: number } | undefined;
  cpu: { userS: number; systemS: number };
  /** Why the run stopped early, if it did. */
  stopReason: 'interrupted' | 'fatal' | 'stuck' | 'threshold' | undefined;
  /** `threshold`: which threshold could no longer hold, in words. */
  stopDetail?: string;
  /** `--stages`/`--rate-stages`: the figures of each stage. */
  stages?: StageAccumulator[];
  fatal: DbError | undefined;
  /**
   * The load threads given up on (`stopReason` 'stuck'): the clients of the main thread's share (0: not
   * given up on, or none there), and the workers terminated with their clients.
   */
  stuck: StuckLoad | undefined;
  /**
   * Rate mode: schedule lag (µs) of the measured events, events started late, events never started, events
   * skipped for being too late (`RatePlan.skipLateUs`).
   */
  rate: { lagHist: Histogram; late: number; dropped: number; skipped: number } | undefined;
  /** The workload's own counters and timed steps. */
  counters: Map<string, number>;
  steps: Map<string, { count: number; hist: Histogram }>;
  /** Connections opened for events (`connectPerEvent`), in µs; empty otherwise. */
  eventConnects: Histogram;
}

/** What a live check (`--threshold-abort`) sees after each complete interval: the run so far. */
export interface LiveView {
  plan: MeasurePlan;
  events: { count: number; hist: Histogram };
  types: ReadonlyMap<string, TypeAccumulator>;
  /** Errors so far (all kinds). */
  errors: number;
  stages: readonly StageAccumulator[] | undefined;
}
