/**
 * Welch's t-test, two-sided, for the few-repeats case: with 3 runs against 3 the Mann–Whitney test cannot
 * reach p < 0.05 however far apart the runs are, while a t-test on the logarithms of the values can, at the
 * price of assuming roughly log-normal runs. Compare uses it only there, and says so.
 */
import { mean } from './stats.ts';

/** ln Γ(x) for x > 0 (Lanczos approximation, g = 7, nine coefficients; about 15 digits). */
function logGamma(x: number): number {
  const c = [
    0.99999999999980993, 676.5203681218851, -1259.1392167224028, 771.32342877765313, -176.61502916214059,
    12.507343278686905, -0.13857109526572012, 9.9843695780195716e-6, 1.5056327351493116e-7,
  ];
  if (x < 0.5) return Math.log(Math.PI / Math.sin(Math.PI * x)) - logGamma(1 - x);
  const z = x - 1;
  let a = c[0] as number;
  const t = z + 7.5;
  for (let i = 1; i < 9; i++) a += (c[i] as number) / (z + i);
  return 0.5 * Math.log(2 * Math.PI) + (z + 0.5) * Math.log(t) - t + Math.log(a);
}

/** Continued fraction of the incomplete beta function, evaluated by the modified Lentz method. */
function betaFraction(x: number, a: number, b: number): number {
  const tiny = 1e-300;
  let c = 1;
  let d = 1 - ((a + b) * x) / (a + 1);
  if (Math.abs(d) < tiny) d = tiny;
  d = 1 / d;
  let f = d;
  for (let m = 1; m <= 300; m++) {
    const m2 = 2 * m;
    // even step
    let num = (m * (b - m) * x) / ((a + m2 - 1) * (a + m2));
    d = 1 + num * d;
    c = 1 + num / c;
    if (Math.abs(d) < tiny) d = tiny;
    if (Math.abs(c) < tiny) c = tiny;
    d = 1 / d;
    f *= d * c;
    // odd step
    num = (-(a + m) * (a + b + m) * x) / ((a + m2) * (a + m2 + 1));
    d = 1 + num * d;
    c = 1 + num / c;
    if (Math.abs(d) < tiny) d = tiny;
    if (Math.abs(c) < tiny) c = tiny;
    d = 1 / d;
    const step = d * c;
    f *= step;
    if (Math.abs(step - 1) < 1e-15) break;
  }
  return f;
}

/** Regularized incomplete beta I_x(a, b). */
export function incompleteBeta(x: number, a: number, b: number): number {
  if (x <= 0) return 0;
  if (x >= 1) return 1;
  const front = Math.exp(logGamma(a + b) - logGamma(a) - logGamma(b) + a * Math.log(x) + b * Math.log(1 - x));
  // The fraction converges fast only on one side of the mean; use the symmetry I_x(a,b) = 1 − I_{1−x}(b,a).
  if (x < (a + 1) / (a + b + 2)) return (front * betaFraction(x, a, b)) / a;
  return 1 - (front * betaFraction(1 - x, b, a)) / b;
}

/** Two-sided tail probability P(|T| ≥ |t|) of Student's t with `df` degrees of freedom (df may be fractional). */
export function studentTwoSided(t: number, df: number): number {
  if (!Number.isFinite(t)) return 0;
  return incompleteBeta(df / (df + t * t), df / 2, 0.5);
}

export interface WelchResult {
  t: number;
  df: number;
  p: number;
}

function variance(xs: readonly number[]): number {
  const m = mean(xs);
  let ss = 0;
  for (const x of xs) ss += (x - m) ** 2;
  return ss / (xs.length - 1);
}

/** Welch's two-sided t-test of x against y; needs two values on each side. */
export function welchTTest(x: readonly number[], y: readonly number[]): WelchResult {
  if (x.length < 2 || y.length < 2) return { t: Number.NaN, df: Number.NaN, p: 1 };
  const vx = variance(x) / x.length;
  const vy = variance(y) / y.length;
  const diff = mean(x) - mean(y);
  if (vx + vy === 0)
    return {
      t: diff === 0 ? 0 : Math.sign(diff) * Number.POSITIVE_INFINITY,
      df: Number.NaN,
      p: diff === 0 ? 1 : 0,
    };
  const t = diff / Math.sqrt(vx + vy);
  const df = (vx + vy) ** 2 / (vx ** 2 / (x.length - 1) + vy ** 2 / (y.length - 1));
  return { t, df, p: Math.min(1, studentTwoSided(t, df)) };
}
