/**
 * Assembly of sweep and compare documents from real RunResults for the report tests, by the same code the
 * commands use: `buildSweep` of `dbsmack sweep` and `computeComparison` (compare's `compareSeries`) of
 * `dbsmack report`, so the fixtures carry the real stability verdicts, ratios and significance.
 */
import { buildSweep, summarizeRun } from '../../src/analysis/sweep-build.ts';
import type { CompareResult, SweepResult } from '../../src/analysis/types.ts';
import type { RunResult } from '../../src/metrics/run-result.ts';
import { computeComparison } from '../../src/report/inputs.ts';

/** Group runs by client count (repeats in the order given) into a sweep document, as `dbsmack sweep` does. */
export function sweepFromRuns(label: string, runs: RunResult[]): SweepResult {
  const clients = [...new Set(runs.map((r) => r.clients))].sort((a, b) => a - b);
  const seen = new Map<number, number>();
  const done = runs.map((r) => {
    const repeat = (seen.get(r.clients) ?? 0) + 1;
    seen.set(r.clients, repeat);
    return { clients: r.clients, run: summarizeRun(r, repeat) };
  });
  return buildSweep(
    {
      label,
      repeat: Math.max(...seen.values()),
      clients,
      started_at: runs[0]!.started_at,
      finished: true,
    },
    done,
  );
}

/** The runs inside a sweep document, in client-count and repeat order. */
export function runsOfSweep(s: SweepResult): RunResult[] {
  return s.points.flatMap((p) => p.runs.map((r) => r.result));
}

/** Compare candidate sweeps with a base sweep exactly as `dbsmack compare BASE CAND…` does. */
export function compareSweeps(
  base: SweepResult,
  cands: SweepResult[],
  metric: 'qps' | 'p95' | 'p99',
): CompareResult {
  const doc = computeComparison(
    [base, ...cands].map((s) => ({ kind: 'sweep' as const, source: `file ${s.label}`, doc: s })),
    { metric },
  );
  if (!doc) throw new Error('compareSweeps needs two sweeps of different labels');
  return doc;
}
