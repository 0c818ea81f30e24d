/**
 * Is a point of a sweep trustworthy? Verdicts from the spread of its repeats (coefficient of variation),
 * outliers by the median/MAD test (flagged, never dropped: an outlier is often the finding), and stalls
 * seen in each run's own timeline.
 */
import type { IntervalPoint } from '../metrics/run-result.ts';
import { coefficientOfVariation, mad, median, round3 } from './stats.ts';
import type { Stability } from './types.ts';

/** CV at or below this is `stable`. */
export const STABLE_CV = 0.05;
/** CV above this (or a max/min ratio of 2 or more) is `erratic`. */
export const ERRATIC_CV = 0.2;
/** Modified z-score (0.6745 · |x − median| / MAD) above this marks an outlier (Iglewicz and Hoaglin). */
export const OUTLIER_Z = 3.5;
/** An interval below this share of the run's median interval throughput counts as a stall. */
export const STALL_SHARE = 0.1;

/**
 * Outlier flags by the median/MAD test. Needs at least 3 values. When more than half the values are equal
 * (MAD 0), any value more than 10% away from the median is flagged, since no spread is normal there.
 */
export function madOutliers(xs: readonly number[]): boolean[] {
  if (xs.length < 3) return xs.map(() => false);
  const m = median(xs);
  const d = mad(xs);
  if (d === 0) return xs.map((x) => Math.abs(x - m) > 0.1 * Math.abs(m));
  return xs.map((x) => (0.6745 * Math.abs(x - m)) / d > OUTLIER_Z);
}

/**
 * Stalls in a run's timeline: intervals, not the first or the last (ramp-up and the tail), whose throughput
 * falls below STALL_SHARE of the run's median interval. Adjacent ones are merged. Returned as
 * [start s, end s] from the start of the measured part.
 */
export function findStalls(intervals: readonly IntervalPoint[]): [number, number][] {
  if (intervals.length < 3) return [];
  const reference = median(intervals.map((p) => p.qps));
  if (!(reference > 0)) return [];
  const out: [number, number][] = [];
  for (let i = 1; i < intervals.length - 1; i++) {
    const p = intervals[i] as IntervalPoint;
    if (p.qps >= STALL_SHARE * reference) continue;
    const start = round3(p.t - p.dur);
    const last = out[out.length - 1];
    if (last && Math.abs(last[1] - start) < 1e-6) last[1] = p.t;
    else out.push([start, p.t]);
  }
  return out;
}

const num = (v: unknown): number => (typeof v === 'number' && Number.isFinite(v) ? v : 0);

/**
 * A run's timeline as the report draws it: trailing intervals shorter than a fifth of the typical one left
 * out (a rate over 1 ms is noise). Read defensively (a missing number counts as 0): the report reads
 * hand-edited and truncated documents.
 */
export function drawableIntervals(intervals: readonly IntervalPoint[]): IntervalPoint[] {
  const typical = median(intervals.map((p) => num(p.dur)));
  let end = intervals.length;
  while (end > 0 && num(intervals[end - 1]!.dur) < typical * 0.2) end--;
  return intervals.slice(0, end);
}

/**
 * The stalls the report marks on the timeline of a plain run (a sweep's runs carry `findStalls`'s verdicts
 * in their document): drawable intervals (`drawableIntervals`, those with a duration) whose throughput
 * falls below STALL_SHARE of their median, merged into ranges. It differs from `findStalls` on purpose and
 * is kept apart so that neither changes what it has always shown: it counts the first and the last
 * interval too (a timeline shows a run that starts or ends stalled; a verdict must not blame ramp-up or the
 * tail), leaves out a short trailing interval first, does not round the start, and needs three drawable
 * intervals rather than three intervals.
 */
export function findTimelineStalls(intervals: readonly IntervalPoint[]): [number, number][] {
  const full = drawableIntervals(intervals).filter((p) => num(p.dur) > 0);
  if (full.length < 3) return [];
  const m = median(full.map((p) => num(p.qps)));
  if (m <= 0) return [];
  const out: [number, number][] = [];
  for (const p of full) {
    if (num(p.qps) >= m * STALL_SHARE) continue;
    const start = num(p.t) - num(p.dur);
    const last = out[out.length - 1];
    if (last && Math.abs(last[1] - start) < 1e-6) last[1] = num(p.t);
    else out.push([start, num(p.t)]);
  }
  return out;
}

export interface StabilityInput {
  qps: readonly number[];
  /** Stalls per run, in the same order. */
  stalls: readonly (readonly [number, number][])[];
  /** The run (repeat) number of each value, for the words; 1, 2, 3 … by default. */
  repeats?: readonly number[];
  /**
   * Runs that did not complete, by repeat number. They are not among `qps` (a sweep leaves them out of
   * its statistics) unless `incompleteCounted`: when no run of the point completed, its figures are theirs.
   */
  incomplete?: readonly number[];
  incompleteCounted?: boolean;
}

export interface StabilityVerdict {
  stability: Stability;
  reason: string;
  cv: number;
  outliers: boolean[];
}

const pct = (x: number): string => `${(x * 100).toFixed(x < 0.1 ? 1 : 0)}%`;
const rate = (x: number): string => (x >= 100 ? x.toFixed(0) : String(Number(x.toPrecision(3))));

function stallWords(stalls: StabilityInput['stalls'], runNo: (i: number) => number): string | undefined {
  const parts: string[] = [];
  stalls.forEach((s, i) => {
    if (s.length > 0) parts.push(`run ${runNo(i)} stalled at ${s.map(([a, b]) => `${a}–${b} s`).join(', ')}`);
  });
  return parts.length > 0 ? parts.join('; ') : undefined;
}

/** The verdict for one point and why, in words. */
export function judgeStability(input: StabilityInput): StabilityVerdict {
  const { qps } = input;
  const runNo = (i: number): number => input.repeats?.[i] ?? i + 1;
  const cv = coefficientOfVariation(qps);
  const outliers = madOutliers(qps);
  const reasons: string[] = [];
  let level = 0; // 0 stable, 1 noisy, 2 erratic
  if (qps.length < 2) {
    level = 1;
    reasons.push('one run only: repeat it (--repeat 5, the default of sweep) to judge its stability');
  } else {
    const lo = Math.min(...qps);
    const hi = Math.max(...qps);
    const spread = lo > 0 ? hi / lo : Number.POSITIVE_INFINITY;
    const range = `${rate(lo)} to ${rate(hi)} q/s`;
    if (cv > ERRATIC_CV || spread >= 2) {
      level = 2;
      const times = Number.isFinite(spread) ? `${spread.toFixed(spread < 10 ? 1 : 0)}×` : 'infinitely';
      reasons.push(
        `the ${qps.length} runs disagree: CV ${pct(cv)}, ${range} (the fastest is ${times} the slowest)`,
      );
    } else if (cv > STABLE_CV) {
      level = 1;
      reasons.push(
        `CV ${pct(cv)} over ${qps.length} runs (${range}), above the ${pct(STABLE_CV)} of a stable point`,
      );
    } else {
      reasons.push(`CV ${pct(cv)} over ${qps.length} runs (${range})`);
    }
  }
  const m = median(qps);
  const flagged = outliers.flatMap((o, i) => (o ? [i] : []));
  if (flagged.length > 0) {
    level = Math.max(level, 1);
    reasons.push(
      `outlier${flagged.length > 1 ? 's' : ''} by the median/MAD test (kept): ${flagged
        .map(
          (i) =>
            `run ${runNo(i)} at ${rate(qps[i] as number)} q/s ${(qps[i] as number) < m ? 'below' : 'above'} the median ${rate(m)}`,
        )
        .join(', ')}`,
    );
  }
  const stalls = stallWords(input.stalls, runNo);
  if (stalls) {
    level = Math.max(level, 1);
    reasons.push(`throughput collapsed mid-run: ${stalls}`);
  }
  if (input.incomplete && input.incomplete.length > 0) {
    level = Math.max(level, 1);
    const many = input.incomplete.length > 1;
    const which = `run${many ? 's' : ''} ${input.incomplete.join(', ')}`;
    reasons.push(
      input.incompleteCounted
        ? `no run completed (${which}): these figures are of partial runs`
        : `${which} did not complete and ${many ? 'are' : 'is'} left out of the median, range and CV`,
    );
  }
  const stability: Stability = level === 0 ? 'stable' : level === 1 ? 'noisy' : 'erratic';
  return { stability, reason: reasons.join('; '), cv, outliers };
}
