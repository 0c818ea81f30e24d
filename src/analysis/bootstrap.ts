/**
 * Seeded percentile bootstrap of the ratio of medians (candidate / base): resample each side with
 * replacement, take the ratio of the resampled medians, and read the interval from the spread. The
 * resamples draw from dbsmack's one seeded generator (`seeded-random.ts`), so a seed gives the same interval.
 */
import { SeededRandom } from '../seeded-random.ts';
import { median, quantile } from './stats.ts';

export interface RatioInterval {
  ratio: number;
  low: number;
  high: number;
}

function resample(xs: readonly number[], rnd: SeededRandom): number[] {
  const out = new Array<number>(xs.length);
  for (let i = 0; i < xs.length; i++) out[i] = xs[Math.floor(rnd.next() * xs.length)] as number;
  return out;
}

/**
 * Ratio of medians with a `level` (default 0.95) percentile interval from `resamples` resamples.
 * Deterministic for a given seed. A base median of 0 gives an infinite ratio.
 */
export function bootstrapRatioOfMedians(
  base: readonly number[],
  cand: readonly number[],
  opts: { seed?: number; resamples?: number; level?: number } = {},
): RatioInterval {
  const ratio = median(cand) / median(base);
  const rnd = new SeededRandom(opts.seed ?? 1);
  const b = opts.resamples ?? 2000;
  const level = opts.level ?? 0.95;
  const ratios: number[] = [];
  for (let i = 0; i < b; i++) {
    const r = median(resample(cand, rnd)) / median(resample(base, rnd));
    if (!Number.isNaN(r)) ratios.push(r);
  }
  if (ratios.length === 0) return { ratio, low: ratio, high: ratio };
  return { ratio, low: quantile(ratios, (1 - level) / 2), high: quantile(ratios, 1 - (1 - level) / 2) };
}
