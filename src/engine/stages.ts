/**
 * Stages of one run (`--stages 30s:8,60s:64`, `--rate-stages 30s:1000,60s:5000`): the run's measured part
 * cut into consecutive stages, each with its own number of active clients (closed loop) or its own arrival
 * rate (open loop, ramping linearly from the previous stage's rate). Stage lengths are whole multiples of
 * the report interval, so that every interval belongs to one stage and a stage's figures are the exact
 * merge of its intervals.
 */
import type { StagePlan } from '../metrics/outcome.ts';

/** [start s, end s) of each stage from the start of the measured part. */
export function stageBounds(stages: readonly StagePlan[]): [number, number][] {
  const out: [number, number][] = [];
  let t = 0;
  for (const s of stages) {
    out.push([t, t + s.durationS]);
    t += s.durationS;
  }
  return out;
}

/** Total length of the stages, seconds. */
export function stagesLength(stages: readonly StagePlan[]): number {
  return stages.reduce((a, s) => a + s.durationS, 0);
}

/** Index (from 0) of the stage that holds time `t` s of the measured part; the last one beyond the end. */
export function stageAt(stages: readonly StagePlan[], t: number): number {
  let end = 0;
  for (let i = 0; i < stages.length; i++) {
    end += (stages[i] as StagePlan).durationS;
    if (t < end - 1e-9) return i;
  }
  return Math.max(0, stages.length - 1);
}

/** The most clients any stage asks for (the run's client count under `--stages`). */
export function maxStageClients(stages: readonly StagePlan[]): number {
  return Math.max(1, ...stages.map((s) => s.clients ?? 0));
}

/**
 * The windows (epoch µs, [from, to)) in which client `id` runs events under closed-loop stages: a client
 * runs in every stage with more than `id` clients. Adjacent stages merge, so a client that stays active
 * keeps its connection over the boundary. The first stage's clients also run the warm-up (from -∞); the
 * last window ends at +∞ (the deadline ends it).
 */
export function clientWindows(
  stages: readonly StagePlan[],
  id: number,
  measureAt: number,
): [number, number][] {
  const out: [number, number][] = [];
  let t = measureAt;
  stages.forEach((s, i) => {
    const from = i === 0 ? Number.NEGATIVE_INFINITY : t;
    const to = i === stages.length - 1 ? Number.POSITIVE_INFINITY : t + s.durationS * 1e6;
    t += s.durationS * 1e6;
    if ((s.clients ?? 0) <= id) return;
    const last = out[out.length - 1];
    if (last !== undefined && last[1] === from) last[1] = to;
    else out.push([from, to]);
  });
  return out;
}

/** A piece of a piecewise-linear arrival rate: from `s` to `e` (epoch µs), `a` events/µs at `s`, slope `b`. */
export interface RateSegment {
  s: number;
  e: number;
  a: number;
  b: number;
}

/**
 * The arrival rate of one worker (its `share` of the total) as linear pieces: the warm-up at the first
 * stage's starting rate, then each stage ramping from the previous stage's rate (the first from `startRate`)
 * to its own, then the last rate held.
 */
export function rateSegments(
  stages: readonly StagePlan[],
  startRate: number,
  measureAt: number,
  share: number,
): RateSegment[] {
  const k = share / 1e6;
  const out: RateSegment[] = [{ s: Number.NEGATIVE_INFINITY, e: measureAt, a: startRate * k, b: 0 }];
  let t = measureAt;
  let prev = startRate;
  for (const st of stages) {
    const r = st.rate ?? 0;
    const d = st.durationS * 1e6;
    out.push({ s: t, e: t + d, a: prev * k, b: d > 0 ? ((r - prev) * k) / d : 0 });
    t += d;
    prev = r;
  }
  out.push({ s: t, e: Number.POSITIVE_INFINITY, a: prev * k, b: 0 });
  return out;
}

/**
 * A piecewise-linear rate function and the inverse of its integral: from time `x`, the time by which
 * `mass` arrivals are expected. Poisson arrivals of a varying rate draw exponential masses; even arrivals
 * take a mass of 1 each. Times only move forward, so the segment in use is remembered.
 */
export class RampedRate {
  private i = 0;
  constructor(private readonly segs: RateSegment[]) {}

  advance(x: number, mass: number): number {
    let m = mass;
    let at = x;
    while (this.i < this.segs.length) {
      const g = this.segs[this.i] as RateSegment;
      if (at >= g.e) {
        this.i++;
        continue;
      }
      const from = Math.max(at, g.s);
      const r0 = g.a + g.b * (from - (Number.isFinite(g.s) ? g.s : from));
      const len = g.e - from;
      const whole = Number.isFinite(len) ? r0 * len + (g.b / 2) * len * len : Number.POSITIVE_INFINITY;
      if (m <= whole && (r0 > 0 || g.b > 0)) {
        let d: number;
        if (Math.abs(g.b) < 1e-18) d = m / r0;
        else {
          const disc = r0 * r0 + 2 * g.b * m;
          d = (-r0 + Math.sqrt(Math.max(0, disc))) / g.b;
        }
        return from + Math.min(Math.max(0, d), Number.isFinite(len) ? len : d);
      }
      if (!Number.isFinite(len)) return Number.POSITIVE_INFINITY;
      m -= Math.max(0, whole);
      at = g.e;
      this.i++;
    }
    return Number.POSITIVE_INFINITY;
  }
}
