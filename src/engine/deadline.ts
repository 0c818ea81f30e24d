/**
 * A run's deadline: when it starts, when its measured part starts and ends (`--warmup`, `--time`), the stop
 * requests it takes (Ctrl-C, `--threshold-abort`: the first one wins) and the grace it gives statements in
 * flight after the deadline or a stop before the engine gives up on the workers that did not stop (they are
 * "stuck"). It only reads a clock (injected, so that tests drive it): no worker, no timer.
 */
import { nowUs } from '../metrics/clock.ts';
import type { EngineOutcome } from '../metrics/outcome.ts';

/** The run's microsecond clock (metrics/clock.ts, the one the workers switch phase on) and the wall clock. */
export interface DeadlineClock {
  nowUs(): number;
  nowMs(): number;
}

export const systemClock: DeadlineClock = { nowUs, nowMs: () => Date.now() };

/** Why a run was asked to stop early. */
export type StopRequest = 'interrupted' | 'threshold';

/**
 * How far in the future the start is set, so that the start message reaches every worker before it (they
 * spin for the last millisecond).
 */
export const START_LEAD_US = 20_000;

/** Epoch microseconds: warm-up starts, measurement starts, deadline (Infinity for no time limit). */
export interface RunTimes {
  startAt: number;
  measureAt: number;
  endAt: number;
}

/**
 * The grace, and why it is not a fixed cut. sysbench and pgbench wait for the events in flight at the end
 * however long they take; dbsmack gives up on a worker that does not stop, so that a server that stopped
 * answering cannot hold a run for ever. But under heavy lock contention a statement can wait seconds for a
 * row (PostgreSQL, 16 clients on one hot row: lock waits of 9.5 s were seen while the run was healthy), and
 * a fixed 5 s cut then marked such runs partial where the peers complete. So the grace is at least twice
 * the longest event seen in the run (`stretch`), and it runs again from each client that finishes its last
 * event (`progress`): a worker is stuck only when none of its clients has finished for a whole grace.
 */
export class Deadline {
  /** The least grace for statements in flight after a stop or the deadline, in ms. */
  readonly baseGraceMs: number;
  private longestMs = 0;
  /** Wall-clock ms a client last finished its last event (after the deadline or a stop). */
  private progressAt: number | undefined;
  private readonly clock: DeadlineClock;
  private times: RunTimes | undefined;
  private requested: StopRequest | undefined;
  private requestDetail: string | undefined;
  /** Wall-clock ms of the stop request. */
  private requestedAt: number | undefined;

  constructor(graceMs: number, clock: DeadlineClock = systemClock) {
    this.baseGraceMs = graceMs;
    this.clock = clock;
  }

  /** Grace for statements in flight after a stop or the deadline, in ms: the base, or twice the longest event. */
  get graceMs(): number {
    return Math.max(this.baseGraceMs, 2 * this.longestMs);
  }

  /** The longest event measured so far, in ms (the grace is at least twice it). */
  stretch(longestEventMs: number): void {
    if (longestEventMs > this.longestMs) this.longestMs = longestEventMs;
  }

  /** A client finished its last event: the grace runs again from now. */
  progress(): void {
    this.progressAt = this.clock.nowMs();
  }

  /** Ask the run to stop; only the first request counts. Whether this one did. */
  request(reason: StopRequest, detail?: string): boolean {
    if (this.requestedAt !== undefined) return false;
    this.requested = reason;
    this.requestDetail = detail;
    this.requestedAt = this.clock.nowMs();
    return true;
  }

  /** Whether a stop was requested. */
  get stopRequested(): boolean {
    return this.requestedAt !== undefined;
  }

  /** The stop request's reason (undefined: none). */
  get reason(): StopRequest | undefined {
    return this.requested;
  }

  /** `threshold`: which threshold could no longer hold, in words. */
  get detail(): string | undefined {
    return this.requestDetail;
  }

  /** Set the run's times from now: the start a little ahead, the warm-up, then `timeS` measured (if given). */
  schedule(plan: { warmupS: number; timeS: number | undefined }): RunTimes {
    const startAt = this.clock.nowUs() + START_LEAD_US;
    const measureAt = startAt + plan.warmupS * 1e6;
    const endAt = plan.timeS !== undefined ? measureAt + plan.timeS * 1e6 : Number.POSITIVE_INFINITY;
    this.times = { startAt, measureAt, endAt };
    return this.times;
  }

  /** Epoch µs the measured part starts at (0 before `schedule`). */
  get measureAt(): number {
    return this.times?.measureAt ?? 0;
  }

  /** Epoch µs of the deadline (Infinity without a time limit, and before `schedule`). */
  get endAt(): number {
    return this.times?.endAt ?? Number.POSITIVE_INFINITY;
  }

  /** Milliseconds until the measured part starts (0 once it has). */
  untilMeasureMs(): number {
    return Math.max(0, (this.measureAt - this.clock.nowUs()) / 1000);
  }

  /**
   * Milliseconds the engine may still wait for the workers: until the grace after the deadline or after the
   * stop request, whichever comes first, or after the last client that finished, when that is later;
   * Infinity when neither the deadline nor a stop bounds it. At 0 or below, those that have not stopped are
   * stuck.
   */
  remainingMs(): number {
    const now = this.clock.nowMs();
    const grace = this.graceMs;
    const deadlineMs = (this.endAt - this.clock.nowUs()) / 1000;
    const limits: number[] = [];
    if (Number.isFinite(deadlineMs)) limits.push(deadlineMs + grace);
    if (this.requestedAt !== undefined) limits.push(this.requestedAt + grace - now);
    if (limits.length === 0) return Number.POSITIVE_INFINITY;
    const bound = Math.min(...limits);
    return this.progressAt !== undefined ? Math.max(bound, this.progressAt + grace - now) : bound;
  }

  /** Where the measured part of a worker given up on ends: now, or the deadline when that came first. */
  cutOffUs(): number {
    return Math.min(this.clock.nowUs(), this.endAt);
  }

  /** What a client of a stuck worker is told. */
  get stuckReason(): string {
    return `did not stop: no client finished for ${this.graceMs / 1000} s after the deadline (blocked in a statement)`;
  }

  /** Why the run stopped: a fatal error, stuck workers, else the stop request (undefined: it ran its course). */
  stopReason(fatal: boolean, stuck: number): EngineOutcome['stopReason'] {
    return fatal ? 'fatal' : stuck > 0 ? 'stuck' : this.requested;
  }
}
