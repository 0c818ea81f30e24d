/**
 * Messages between the engine (main thread) and its load workers. Everything here is structured-clone safe.
 * Control that must reach a worker busy in a synchronous loop (SQLite) goes through shared memory instead:
 * see `CTRL_*`.
 */
import type { SerializedDbError } from '../driver/errors.ts';
import type { Target } from '../driver/types.ts';
import type { SerializedUserError } from '../errors.ts';
import type { StatementKind } from '../metrics/kinds.ts';
import type { ClientSummary, MeasurePlan } from '../metrics/outcome.ts';
import type { HistogramCounts } from '../metrics/recording-histogram.ts';
import type { WorkloadRef } from '../workload/types.ts';

/** Int32 slots of the shared control array. */
export const CTRL_STOP = 0; // 1 = stop before the next event
export const CTRL_EVENTS = 1; // measured events claimed so far (for --events)
export const CTRL_LEFT = 2; // clients (of every worker) that have left their event loop: the grace runs again
export const CTRL_SIZE = 3;

/** A run's plan: what the figures read of it (`MeasurePlan`), and how to connect and run the clients. */
export interface RunPlan extends MeasurePlan {
  workload: WorkloadRef;
  /** Target for every client (passwords included: this never leaves the process). */
  target: Target;
  /** When true, the workload's own per-client targets (smack `client` blocks) are ignored. */
  targetOverridden: boolean;
  ignoreErrors: string[];
  connectTimeoutMs: number;
  reconnectTimeoutMs: number;
  seed: number;
}

export interface InitMessage {
  type: 'init';
  plan: RunPlan;
  workerIndex: number;
  clientIds: number[];
  ctrl: SharedArrayBuffer;
}

export interface StartMessage {
  type: 'start';
  /** Epoch microseconds: warm-up starts, measurement starts, deadline (Infinity for no time limit). */
  startAt: number;
  measureAt: number;
  endAt: number;
}

/** `release`: the engine has seen every worker stop measuring; clients may now close their connections. */
export type ToWorker = InitMessage | StartMessage | { type: 'release' } | { type: 'close' };

/** A worker has stopped measuring; its connections stay open until the engine releases it. */
export interface MeasuredMessage {
  type: 'measured';
  workerIndex: number;
}

export interface TypeSnapshot {
  name: string;
  kind: StatementKind;
  count: number;
  /** Of `count`, statements that returned or changed no row. */
  zero?: number;
  errors: number;
  /** The statements' latencies (a recording histogram's counts), absent when count is 0. */
  hist?: HistogramCounts;
}

export interface ErrorSnapshot {
  code: string;
  kind: 'retryable' | 'reconnect' | 'fatal';
  count: number;
  ignored: boolean;
  message: string;
}

export interface CounterSnapshot {
  types: TypeSnapshot[];
  events: number;
  eventHist?: HistogramCounts;
  errors: ErrorSnapshot[];
  retries: number;
  reconnects: number;
  /** Rate mode: schedule lag of the events started (µs), events started late, and at the snapshot the
   * events due but not started (queue) and the events in progress (concurrency). */
  lagHist?: HistogramCounts;
  late?: number;
  /** Rate mode: events skipped, never run, for being too late (RatePlan.skipLateUs). */
  skipped?: number;
  queue?: number;
  concurrency?: number;
  /** The workload's own counters and timed steps (`ClientContext.count`, `step`). */
  counters?: Record<string, number>;
  steps?: { name: string; count: number; hist: HistogramCounts }[];
  /** Connections opened for events (`connectPerEvent`): the time to close the old one and open the new. */
  connectHist?: HistogramCounts;
}

export interface IntervalMessage extends CounterSnapshot {
  type: 'interval';
  workerIndex: number;
  idx: number;
}

export interface ReadyMessage {
  type: 'ready';
  workerIndex: number;
  connectMs: number[];
  serverVersion: string;
  sessionIds: number[];
  /** The statement types the clients declared in their set-up. */
  types?: string[];
  /** The thread's native core runs every second connection's batches on its shared I/O thread (design 4). */
  sharedIoThread?: true;
}

export interface DoneMessage {
  type: 'done';
  workerIndex: number;
  /** The last, partial interval. */
  last: IntervalMessage;
  warmup: CounterSnapshot & { elapsedUs: number };
  clientSummaries: ClientSummary[];
  /** Epoch µs when this worker's last measured event ended (0 if none). */
  lastEndUs: number;
  /**
   * The worker ran to the deadline: its last interval ends there, complete in time (the accumulator may
   * close it before `finish`). Its `last` may be the late part of an interval it reported at the deadline.
   */
  pastDeadline?: boolean;
  /** Rate mode: events scheduled before the deadline that never started. */
  dropped?: number;
  /** A fatal error that stopped this worker (and the run). */
  fatal?: SerializedDbError;
}

export interface FailMessage {
  type: 'fail';
  workerIndex: number;
  phase: 'load' | 'connect' | 'setup';
  error: SerializedDbError;
  /** When the failure is a user error (bad input in a workload, a bad URL): its code, exit code and hint. */
  userError?: SerializedUserError;
  clientId?: number;
}

export type FromWorker = ReadyMessage | IntervalMessage | MeasuredMessage | DoneMessage | FailMessage;
