/**
 * The open-loop schedule of one worker under `--rate`: intended start times drawn ahead of time, as
 * arrivals that do not wait for the clients (Poisson gaps as sysbench, or even gaps as wrk2). Clients take
 * the next time in order; latency is then measured from that time, so queueing is not hidden
 * (coordinated omission).
 */

import type { RatePlan, StagePlan } from '../metrics/outcome.ts';
import type { Random } from '../workload/types.ts';
import { RampedRate, rateSegments } from './stages.ts';

export class RateSchedule {
  /** Times generated but not taken yet, from `head`. */
  private readonly pending: number[] = [];
  private head = 0;
  private last: number;
  private readonly meanGapUs: number;
  private readonly poisson: boolean;
  private readonly random: Random;
  /** `--rate-stages`: the varying rate; arrivals then come from the inverse of its integral. */
  private readonly ramp: RampedRate | undefined;

  constructor(
    startUs: number,
    plan: RatePlan,
    share: number,
    random: Random,
    stages?: { stages: readonly StagePlan[]; measureAt: number },
  ) {
    this.meanGapUs = 1e6 / (plan.perSec * share);
    this.poisson = plan.shape === 'poisson';
    this.random = random;
    this.last = startUs;
    if (stages !== undefined) {
      this.ramp = new RampedRate(rateSegments(stages.stages, plan.perSec, stages.measureAt, share));
    }
  }

  private gap(): number {
    return this.poisson ? -this.meanGapUs * Math.log(1 - this.random.next()) : this.meanGapUs;
  }

  private generate(): number {
    if (this.ramp !== undefined) {
      // a mass of one arrival, exponential for Poisson arrivals of a varying rate
      const mass = this.poisson ? -Math.log(1 - this.random.next()) : 1;
      this.last = this.ramp.advance(this.last, mass);
    } else this.last += this.gap();
    this.pending.push(this.last);
    return this.last;
  }

  /** The intended start of the next event. */
  take(): number {
    if (this.head === this.pending.length) this.generate();
    const t = this.pending[this.head++] as number;
    if (this.head > 1024 && this.head * 2 > this.pending.length) {
      this.pending.splice(0, this.head);
      this.head = 0;
    }
    return t;
  }

  /** Events due by `now` that no client has taken yet (sysbench's "queue length"). */
  backlog(now: number): number {
    while (this.last <= now) this.generate();
    let n = 0;
    for (let i = this.head; i < this.pending.length && (this.pending[i] as number) <= now; i++) n++;
    return n;
  }
}
