/** Pearson's chi-square tests for the distribution checks (test-only statistics). */

/** ln Γ(x), Lanczos approximation (g = 7, n = 9). */
function lnGamma(x: number): number {
  const c = [
    0.99999999999980993, 676.5203681218851, -1259.1392167224028, 771.32342877765313, -176.61502916214059,
    12.507343278686905, -0.13857109526572012, 9.9843695780195716e-6, 1.5056327351493116e-7,
  ];
  if (x < 0.5) return Math.log(Math.PI / Math.sin(Math.PI * x)) - lnGamma(1 - x);
  const z = x - 1;
  let a = c[0] as number;
  const t = z + 7.5;
  for (let i = 1; i < 9; i++) a += (c[i] as number) / (z + i);
  return 0.5 * Math.log(2 * Math.PI) + (z + 0.5) * Math.log(t) - t + Math.log(a);
}

/** Regularized upper incomplete gamma Q(a, x): series below a + 1, continued fraction above. */
function gammaQ(a: number, x: number): number {
  if (x <= 0) return 1;
  const lg = lnGamma(a);
  if (x < a + 1) {
    let sum = 1 / a;
    let term = sum;
    for (let n = 1; n < 10000; n++) {
      term *= x / (a + n);
      sum += term;
      if (Math.abs(term) < Math.abs(sum) * 1e-15) break;
    }
    return 1 - sum * Math.exp(-x + a * Math.log(x) - lg);
  }
  const tiny = 1e-300;
  let b = x + 1 - a;
  let c = 1 / tiny;
  let d = 1 / b;
  let h = d;
  for (let i = 1; i < 10000; i++) {
    const an = -i * (i - a);
    b += 2;
    d = an * d + b;
    if (Math.abs(d) < tiny) d = tiny;
    c = b + an / c;
    if (Math.abs(c) < tiny) c = tiny;
    d = 1 / d;
    const del = d * c;
    h *= del;
    if (Math.abs(del - 1) < 1e-15) break;
  }
  return Math.exp(-x + a * Math.log(x) - lg) * h;
}

/** P(χ² ≥ stat) with `df` degrees of freedom. */
export function chiSquareP(stat: number, df: number): number {
  return gammaQ(df / 2, stat / 2);
}

/** Goodness of fit of observed counts to expected probabilities (bins with expected < 5 are merged). */
export function chiSquareFit(
  observed: readonly number[],
  probs: readonly number[],
): { stat: number; df: number; p: number } {
  const n = observed.reduce((a, b) => a + b, 0);
  const bins: { o: number; e: number }[] = [];
  let cur = { o: 0, e: 0 };
  for (let i = 0; i < observed.length; i++) {
    cur.o += observed[i] as number;
    cur.e += (probs[i] as number) * n;
    if (cur.e >= 5) {
      bins.push(cur);
      cur = { o: 0, e: 0 };
    }
  }
  if (cur.e > 0) {
    const last = bins[bins.length - 1];
    if (last) {
      last.o += cur.o;
      last.e += cur.e;
    } else bins.push(cur);
  }
  const stat = bins.reduce((a, b) => a + (b.o - b.e) ** 2 / b.e, 0);
  const df = bins.length - 1;
  return { stat, df, p: chiSquareP(stat, df) };
}

/** Homogeneity of two samples' counts over the same bins (do they come from one distribution?). */
export function chiSquareTwoSample(
  a: readonly number[],
  b: readonly number[],
): { stat: number; df: number; p: number } {
  const na = a.reduce((x, y) => x + y, 0);
  const nb = b.reduce((x, y) => x + y, 0);
  const rows: [number, number][] = [];
  let cur: [number, number] = [0, 0];
  for (let i = 0; i < a.length; i++) {
    cur[0] += a[i] as number;
    cur[1] += b[i] as number;
    // merge until both expected counts are at least 5
    const tot = cur[0] + cur[1];
    if ((tot * na) / (na + nb) >= 5 && (tot * nb) / (na + nb) >= 5) {
      rows.push(cur);
      cur = [0, 0];
    }
  }
  if (cur[0] + cur[1] > 0) {
    const last = rows[rows.length - 1];
    if (last) {
      last[0] += cur[0];
      last[1] += cur[1];
    } else rows.push(cur);
  }
  let stat = 0;
  for (const [x, y] of rows) {
    const tot = x + y;
    const ea = (tot * na) / (na + nb);
    const eb = (tot * nb) / (na + nb);
    stat += (x - ea) ** 2 / ea + (y - eb) ** 2 / eb;
  }
  const df = rows.length - 1;
  return { stat, df, p: chiSquareP(stat, df) };
}
