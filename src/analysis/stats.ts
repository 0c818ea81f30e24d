/**
 * Small descriptive statistics over plain number arrays. Written here rather than imported because the
 * handful needed (median, MAD, coefficient of variation) are a few lines each, and
 * their exact definitions (sample standard deviation, unscaled MAD) matter to the verdicts built on them.
 */

/** `round3` lives on the ground floor (src/numbers.ts); re-exported for the analyses that import it from here. */
export { round3 } from '../numbers.ts';

/** Median; NaN for an empty array. */
export function median(xs: readonly number[]): number {
  if (xs.length === 0) return Number.NaN;
  const s = [...xs].sort((a, b) => a - b);
  const mid = s.length >> 1;
  return s.length % 2 === 1 ? (s[mid] as number) : ((s[mid - 1] as number) + (s[mid] as number)) / 2;
}

export function mean(xs: readonly number[]): number {
  if (xs.length === 0) return Number.NaN;
  let sum = 0;
  for (const x of xs) sum += x;
  return sum / xs.length;
}

/** Sample standard deviation (n − 1); 0 for fewer than two values. */
export function stddev(xs: readonly number[]): number {
  if (xs.length < 2) return 0;
  const m = mean(xs);
  let ss = 0;
  for (const x of xs) ss += (x - m) ** 2;
  return Math.sqrt(ss / (xs.length - 1));
}

/** Coefficient of variation: sample standard deviation over mean; 0 when the mean is 0. */
export function coefficientOfVariation(xs: readonly number[]): number {
  const m = mean(xs);
  return m === 0 || !Number.isFinite(m) ? 0 : stddev(xs) / m;
}

/** Median absolute deviation from the median, unscaled. */
export function mad(xs: readonly number[]): number {
  const m = median(xs);
  return median(xs.map((x) => Math.abs(x - m)));
}

/** Quantile by linear interpolation between closest ranks (type 7, as R and NumPy default). */
export function quantile(xs: readonly number[], p: number): number {
  if (xs.length === 0) return Number.NaN;
  const s = [...xs].sort((a, b) => a - b);
  const h = (s.length - 1) * p;
  const lo = Math.floor(h);
  const hi = Math.ceil(h);
  return (s[lo] as number) + (h - lo) * ((s[hi] as number) - (s[lo] as number));
}

/** Standard normal cumulative distribution (Abramowitz–Stegun 7.1.26 erf, |error| < 1.5e-7). */
export function normalCdf(z: number): number {
  const x = Math.abs(z) / Math.SQRT2;
  const t = 1 / (1 + 0.3275911 * x);
  const y =
    1 -
    ((((1.061405429 * t - 1.453152027) * t + 1.421413741) * t - 0.284496736) * t + 0.254829592) *
      t *
      Math.exp(-x * x);
  return z >= 0 ? 0.5 * (1 + y) : 0.5 * (1 - y);
}
