/**
 * Mann–Whitney U test (Wilcoxon rank-sum), two-sided. Sweeps have few repeats (3 to 10), where the normal
 * approximation is poor, so the p-value is exact there: the null distribution of the rank sum is counted
 * over every way of choosing the first sample's ranks from the pooled midranks, which is exact with ties too.
 * Larger samples use the normal approximation with tie and continuity corrections.
 */
import { normalCdf } from './stats.ts';

export interface MannWhitneyResult {
  /** U of the first sample: the number of (x, y) pairs with x > y, ties counting one half. */
  u: number;
  /** Two-sided p-value. */
  p: number;
  method: 'exact' | 'normal';
}

/** Pooled sizes up to this use the exact distribution (a few million additions at most). */
const EXACT_MAX_N = 50;

/** Midranks of the pooled sample (1-based; tied values share the mean of their ranks). */
function midranks(values: readonly number[]): number[] {
  const order = values.map((v, i) => [v, i] as const).sort((a, b) => a[0] - b[0]);
  const ranks = new Array<number>(values.length);
  let i = 0;
  while (i < order.length) {
    let j = i;
    while (
      j + 1 < order.length &&
      (order[j + 1] as readonly [number, number])[0] === (order[i] as readonly [number, number])[0]
    )
      j++;
    const r = (i + j + 2) / 2;
    for (let k = i; k <= j; k++) ranks[(order[k] as readonly [number, number])[1]] = r;
    i = j + 1;
  }
  return ranks;
}

/**
 * Exact two-sided p for rank sum `observed` (doubled, so that midranks are integers) of a sample of
 * size n1 drawn from `doubled` ranks: counts subsets of size n1 by their sum.
 */
function exactP(doubled: readonly number[], n1: number, observed: number): number {
  const total = doubled.reduce((a, b) => a + b, 0);
  const width = total + 1;
  // ways[k * width + s]: subsets of size k with doubled rank sum s among the ranks seen so far.
  let ways = new Float64Array((n1 + 1) * width);
  ways[0] = 1;
  for (const r of doubled) {
    const next = ways.slice();
    for (let k = 0; k < n1; k++) {
      for (let s = 0; s + r < width; s++) {
        const w = ways[k * width + s] as number;
        if (w !== 0) next[(k + 1) * width + s + r] = (next[(k + 1) * width + s + r] as number) + w;
      }
    }
    ways = next;
  }
  let all = 0;
  let le = 0;
  let ge = 0;
  for (let s = 0; s < width; s++) {
    const w = ways[n1 * width + s] as number;
    all += w;
    if (s <= observed) le += w;
    if (s >= observed) ge += w;
  }
  return Math.min(1, (2 * Math.min(le, ge)) / all);
}

/** Two-sided Mann–Whitney U test of x against y. Both need at least one value. */
export function mannWhitney(x: readonly number[], y: readonly number[]): MannWhitneyResult {
  const n1 = x.length;
  const n2 = y.length;
  if (n1 === 0 || n2 === 0) return { u: Number.NaN, p: 1, method: 'exact' };
  const ranks = midranks([...x, ...y]);
  let r1 = 0;
  for (let i = 0; i < n1; i++) r1 += ranks[i] as number;
  const u = r1 - (n1 * (n1 + 1)) / 2;
  const n = n1 + n2;
  if (n <= EXACT_MAX_N) {
    return {
      u,
      p: exactP(
        ranks.map((r) => Math.round(r * 2)),
        n1,
        Math.round(r1 * 2),
      ),
      method: 'exact',
    };
  }
  const counts = new Map<number, number>();
  for (const v of [...x, ...y]) counts.set(v, (counts.get(v) ?? 0) + 1);
  let tie = 0;
  for (const t of counts.values()) tie += t ** 3 - t;
  const mu = (n1 * n2) / 2;
  const sigma = Math.sqrt(((n1 * n2) / 12) * (n + 1 - tie / (n * (n - 1))));
  if (sigma === 0) return { u, p: 1, method: 'normal' };
  const z = Math.max(0, Math.abs(u - mu) - 0.5) / sigma;
  return { u, p: Math.min(1, 2 * (1 - normalCdf(z))), method: 'normal' };
}

/** The smallest two-sided p-value samples of these sizes can reach (no ties): 2 / C(n1 + n2, n1). */
export function minimumP(n1: number, n2: number): number {
  let c = 1;
  for (let i = 1; i <= n1; i++) c = (c * (n2 + i)) / i;
  return Math.min(1, 2 / c);
}
