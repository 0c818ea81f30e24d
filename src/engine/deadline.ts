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

export class Deadline {
  /** Grace for statements in flight after a stop or the deadline, in ms. */
  readonly graceMs: number;
  private readonly clock: DeadlineClock;
  private times: RunTimes | undefined;
  private requested: StopRequest | undefined;
  private requestDetail: string | undefined;
  /** Wall-clock ms of the stop request. */
  private requestedAt: number | undefined;

  constructor(graceMs: number, clock: DeadlineClock = systemClock) {
    this.graceMs = graceMs;
    this.clock = clock;
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
   * stop request, whichever comes first; Infinity when neither bounds it. At 0 or below, those that have not
   * stopped are stuck.
   */
  remainingMs(): number {
    const now = this.clock.nowMs();
    const deadlineMs = (this.endAt - this.clock.nowUs()) / 1000;
    const limits: number[] = [];
    if (Number.isFinite(deadlineMs)) limits.push(deadlineMs + this.graceMs);
    if (this.requestedAt !== undefined) limits.push(this.requestedAt + this.graceMs - now);
    return limits.length ? Math.min(...limits) : Number.POSITIVE_INFINITY;
  }

  /** Where the measured part of a worker given up on ends: now, or the deadline when that came first. */
  cutOffUs(): number {
    return Math.min(this.clock.nowUs(), this.endAt);
  }

  /** What a client of a stuck worker is told. */
  get stuckReason(): string {
    return `did not stop within ${this.graceMs / 1000} s of the deadline (blocked in a statement)`;
  }

  /** Why the run stopped: a fatal error, stuck workers, else the stop request (undefined: it ran its course). */
  stopReason(fatal: boolean, stuck: number): EngineOutcome['stopReason'] {
    return fatal ? 'fatal' : stuck > 0 ? 'stuck' : this.requested;
  }
}
