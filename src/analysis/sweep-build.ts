/**
 * Turning the RunResults of a sweep into its document: one point per client count with the spread of its
 * repeats and a stability verdict. Pure: the sweep command calls it after every run, so that the file and
 * the history always hold the statistics of what was measured so far.
 */
import type { RunResult, RunStatus } from '../metrics/run-result.ts';
import { findStalls, judgeStability } from './stability.ts';
import { median } from './stats.ts';
import { SWEEP_SCHEMA, type SweepPoint, type SweepResult, type SweepRun } from './types.ts';

/** What a sweep keeps of one run. Latency figures are of events (transactions), as sysbench reports them. */
export function summarizeRun(result: RunResult, repeat: number, id?: number): SweepRun {
  return {
    ...(id !== undefined ? { id } : {}),
    repeat,
    status: result.status,
    qps: result.totals.qps,
    eps: result.totals.eps,
    p95_ms: result.events.latency_ms.p95,
    p99_ms: result.events.latency_ms.p99,
    elapsed_s: result.elapsed_s,
    errors: result.totals.errors,
    stalls: findStalls(result.intervals),
    outlier: false,
    result,
  };
}

/**
 * One point from its runs (in repeat order); marks the outliers on the runs. Its statistics (median, range,
 * CV, outliers, latency medians) are of the runs that completed, as `compare` counts them: a run stopped
 * early (interrupted, or by errors) is kept in `runs` with its status, listed in `left_out`, and named in
 * the reason. A point none of whose runs completed shows the partial runs' figures and says so.
 */
export function buildPoint(clients: number, runs: SweepRun[]): SweepPoint {
  const complete = runs.filter((r) => r.status === 'complete');
  const incomplete = runs.filter((r) => r.status !== 'complete').map((r) => r.repeat);
  const counted = complete.length > 0 ? complete : runs;
  const qps = counted.map((r) => r.qps);
  const verdict = judgeStability({
    qps,
    stalls: counted.map((r) => r.stalls),
    repeats: counted.map((r) => r.repeat),
    incomplete,
    incompleteCounted: complete.length === 0,
  });
  for (const r of runs) r.outlier = false;
  counted.forEach((r, i) => {
    r.outlier = verdict.outliers[i] === true;
  });
  return {
    clients,
    runs,
    qps: { median: median(qps), min: Math.min(...qps), max: Math.max(...qps), cv: verdict.cv },
    p95_ms_median: median(counted.map((r) => r.p95_ms)),
    p99_ms_median: median(counted.map((r) => r.p99_ms)),
    stability: verdict.stability,
    stability_reason: verdict.reason,
    ...(complete.length > 0 && incomplete.length > 0 ? { left_out: incomplete } : {}),
  };
}

export interface SweepMeta {
  label: string;
  repeat: number;
  /** Client counts in the order asked for; points follow it. */
  clients: number[];
  started_at: string;
  /** Whether every planned run was made. */
  finished: boolean;
  server_settings?: Record<string, string>;
  /** Why the sweep is partial, when it is. */
  reason?: string;
}

/** The sweep document from the runs made so far. Needs at least one run. */
export function buildSweep(
  meta: SweepMeta,
  runs: readonly { clients: number; run: SweepRun }[],
): SweepResult {
  const first = runs[0]?.run.result;
  if (first === undefined) throw new Error('buildSweep needs at least one run');
  const points: SweepPoint[] = [];
  for (const c of meta.clients) {
    const mine = runs.filter((r) => r.clients === c).map((r) => r.run);
    if (mine.length > 0)
      points.push(
        buildPoint(
          c,
          mine.sort((a, b) => a.repeat - b.repeat),
        ),
      );
  }
  const allComplete = runs.every((r) => r.run.status === 'complete');
  const status: RunStatus = meta.finished && allComplete ? 'complete' : 'partial';
  const doc: SweepResult = {
    schema: SWEEP_SCHEMA,
    label: meta.label,
    status,
    ...(status === 'partial' && meta.reason ? { status_reason: meta.reason } : {}),
    workload: first.workload,
    target: first.target,
    started_at: meta.started_at,
    repeat: meta.repeat,
    clients: meta.clients,
    points,
    env: first.env,
    ...(meta.server_settings ? { server_settings: meta.server_settings } : {}),
  };
  return doc;
}
