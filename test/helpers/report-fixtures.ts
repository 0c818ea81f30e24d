/**
 * Test-only assembly of sweep and compare documents from real RunResults, so the report can be tested
 * before the sweep and compare commands exist. The ratios and verdicts here are deliberately simple
 * (ratio of medians, min/max bounds, an exact permutation p-value): the real statistics live in
 * src/analysis and are not what these tests check.
 */
import {
  COMPARE_SCHEMA,
  type CompareResult,
  type CompareRow,
  SWEEP_SCHEMA,
  type SweepResult,
} from '../../src/analysis/types.ts';
import type { RunResult } from '../../src/metrics/run-result.ts';
import { findStalls, median } from '../../src/report/model.ts';

/** Group runs by client count (in the order given) into a sweep document. */
export function sweepFromRuns(label: string, runs: RunResult[]): SweepResult {
  const byClients = new Map<number, RunResult[]>();
  for (const r of runs) byClients.set(r.clients, [...(byClients.get(r.clients) ?? []), r]);
  const first = runs[0]!;
  const points = [...byClients.entries()]
    .sort((a, b) => a[0] - b[0])
    .map(([clients, rs]) => {
      const qps = rs.map((r) => r.totals.qps);
      const mean = qps.reduce((a, b) => a + b, 0) / qps.length;
      const sd = Math.sqrt(qps.reduce((a, b) => a + (b - mean) ** 2, 0) / Math.max(1, qps.length - 1));
      return {
        clients,
        runs: rs.map((r, i) => ({
          repeat: i + 1,
          status: r.status,
          qps: r.totals.qps,
          eps: r.totals.eps,
          p95_ms: r.events.latency_ms.p95,
          p99_ms: r.events.latency_ms.p99,
          elapsed_s: r.elapsed_s,
          errors: r.totals.errors,
          stalls: findStalls(r.intervals),
          outlier: false,
          result: r,
        })),
        qps: {
          median: median(qps),
          min: Math.min(...qps),
          max: Math.max(...qps),
          cv: mean > 0 ? sd / mean : 0,
        },
        p95_ms_median: median(rs.map((r) => r.events.latency_ms.p95)),
        p99_ms_median: median(rs.map((r) => r.events.latency_ms.p99)),
        stability: 'stable' as const,
        stability_reason: 'test fixture',
      };
    });
  return {
    schema: SWEEP_SCHEMA,
    label,
    status: runs.every((r) => r.status === 'complete') ? 'complete' : 'partial',
    workload: first.workload,
    target: first.target,
    started_at: first.started_at,
    repeat: Math.max(...points.map((p) => p.runs.length)),
    points,
    env: first.env,
  };
}

/** Two-sided exact permutation p-value of the difference in means (fine for a handful of repeats). */
function permutationP(a: number[], b: number[]): number {
  const all = [...a, ...b];
  const n = a.length;
  const mean = (xs: number[]): number => xs.reduce((s, x) => s + x, 0) / xs.length;
  const observed = Math.abs(mean(a) - mean(b));
  let extreme = 0;
  let total = 0;
  const pick = (start: number, chosen: number[]): void => {
    if (chosen.length === n) {
      const rest = all.filter((_, i) => !chosen.includes(i));
      const d = Math.abs(mean(chosen.map((i) => all[i]!)) - mean(rest));
      total++;
      if (d >= observed - 1e-12) extreme++;
      return;
    }
    for (let i = start; i < all.length; i++) pick(i + 1, [...chosen, i]);
  };
  pick(0, []);
  return extreme / total;
}

/** Compare candidate sweeps with a base sweep on one metric, client count by client count. */
export function compareSweeps(
  base: SweepResult,
  cands: SweepResult[],
  metric: 'qps' | 'p95' | 'p99',
): CompareResult {
  const value = (r: { qps: number; p95_ms: number; p99_ms: number }): number =>
    metric === 'qps' ? r.qps : metric === 'p95' ? r.p95_ms : r.p99_ms;
  const rows: CompareRow[] = [];
  for (const bp of base.points) {
    const bv = bp.runs.map(value);
    const row: CompareRow = { clients: bp.clients, base: median(bv), candidates: {} };
    for (const c of cands) {
      const cp = c.points.find((p) => p.clients === bp.clients);
      if (!cp) continue;
      const cv = cp.runs.map(value);
      const ratio = median(cv) / median(bv);
      const lo = Math.min(...cv) / Math.max(...bv);
      const hi = Math.max(...cv) / Math.min(...bv);
      const enough = bv.length >= 3 && cv.length >= 3;
      const higherIsBetter = metric === 'qps';
      const verdict = !enough
        ? 'unknown'
        : lo > 1
          ? higherIsBetter
            ? 'better'
            : 'worse'
          : hi < 1
            ? higherIsBetter
              ? 'worse'
              : 'better'
            : 'same';
      row.candidates[c.label] = {
        value: median(cv),
        ratio,
        ci_low: lo,
        ci_high: hi,
        p_value: permutationP(bv, cv),
        verdict,
        n_base: bv.length,
        n_cand: cv.length,
      };
    }
    rows.push(row);
  }
  const differences: Record<string, Record<string, string>> = {};
  const all = [base, ...cands];
  const keys: [string, (s: SweepResult) => string][] = [
    ['target.server_version', (s) => s.target.server_version],
    ['target.driver', (s) => s.target.driver],
  ];
  for (const [k, f] of keys) {
    if (new Set(all.map(f)).size > 1) differences[k] = Object.fromEntries(all.map((s) => [s.label, f(s)]));
  }
  return {
    schema: COMPARE_SCHEMA,
    metric,
    base: base.label,
    candidates: cands.map((c) => c.label),
    rows,
    warnings: ['test fixture: ratios of medians with min/max bounds, not the real statistics'],
    differences,
  };
}
