/**
 * The experiment document (`dbsmack/experiment@1`): the arms of one plan, each with its runs, rewritten after
 * every run. Its statistics are the sweep's and the comparison's, not a copy of them: an arm is turned into a
 * sweep document (`armSweep`, through `buildSweep`), and the arms are compared as sweeps are
 * (`seriesFromSweep`, `compareSeries`), the baseline as the base.
 */
import { type CompareOptions, compareSeries, type Series, seriesFromSweep } from './compare.ts';
import { buildSweep } from './sweep-build.ts';
import type { CompareResult, Stability, SweepResult, SweepRun } from './types.ts';

export const EXPERIMENT_SCHEMA = 'dbsmack/experiment@1';

/** One run of an arm: the sweep's summary of it, its client count and its place in the experiment's order. */
export interface ExperimentRun extends SweepRun {
  clients: number;
  /** Position in the experiment's order of runs (1-based). */
  seq: number;
  /** Stopped by Ctrl-C: kept here as measured, not in the history, and made again on --resume. */
  interrupted?: boolean;
}

export interface ExperimentArm {
  label: string;
  baseline: boolean;
  /** Hash of what shapes the arm's runs (workload, target, settings, server commands, checks). */
  fingerprint: string;
  /** The arm's settings as the plan gives them (run and workload options). */
  settings: Record<string, string | number | boolean>;
  server?: { stop?: string; start?: string };
  check?: Record<string, string>;
  /** What the checked server variables showed the last time the arm was set up. */
  checked?: Record<string, string>;
  /** The server's settings as read after the arm's first run (probe/server-settings). */
  server_settings?: Record<string, string>;
  /** History id of the arm's sweep, and the history it is in. */
  history?: { path: string; sweep: number };
  /** Per client count: median q/s and stability of the arm so far (the figures of `armSweep`). */
  points?: { clients: number; runs: number; qps_median: number; cv: number; stability: Stability }[];
  runs: ExperimentRun[];
}

export interface ExperimentDocument {
  schema: typeof EXPERIMENT_SCHEMA;
  name: string;
  status: 'complete' | 'partial';
  status_reason?: string;
  plan: {
    file: string;
    workload: string;
    /** Redacted. */
    target: string;
    clients: number[];
    repeat: number;
    baseline: string;
    order: 'interleaved';
  };
  started_at: string;
  updated_at: string;
  arms: ExperimentArm[];
  warnings: string[];
  /** The comparison of the arms with the baseline, as `dbsmack compare` computes it, when two arms have runs. */
  comparison?: CompareResult;
}

/** The history label of an arm's runs and sweep: `EXPERIMENT/ARM`. */
export const armLabel = (experiment: string, arm: string): string => `${experiment}/${arm}`;

/** An arm as a sweep document (label `EXPERIMENT/ARM`); undefined while it has no run. */
export function armSweep(
  doc: ExperimentDocument,
  arm: ExperimentArm,
  finished = false,
): SweepResult | undefined {
  const runs = arm.runs.filter((r) => r.result !== undefined && r.result !== null);
  if (runs.length === 0) return undefined;
  const sweep = buildSweep(
    {
      label: armLabel(doc.name, arm.label),
      repeat: doc.plan.repeat,
      clients: doc.plan.clients,
      started_at: doc.started_at,
      finished,
      ...(arm.server_settings ? { server_settings: arm.server_settings } : {}),
      ...(doc.status_reason ? { reason: doc.status_reason } : {}),
    },
    runs.map((r) => ({ clients: r.clients, run: r })),
  );
  sweep.experiment = { name: doc.name, arm: arm.label, baseline: arm.baseline };
  return sweep;
}

/**
 * The arms of an experiment document as sweeps (label `EXPERIMENT/ARM`), the baseline first: how `compare`
 * and `report` read an experiment, as they read sweeps. Arms without a run are left out.
 */
export function experimentSweeps(doc: ExperimentDocument): { arm: string; sweep: SweepResult }[] {
  const ordered = [...doc.arms].sort((a, b) => Number(b.baseline) - Number(a.baseline));
  return ordered.flatMap((arm) => {
    const sweep = armSweep(doc, arm, doc.status === 'complete');
    return sweep ? [{ arm: arm.label, sweep }] : [];
  });
}

/** Whether a parsed document looks like an experiment document this version reads. */
export function isExperimentDocument(x: unknown): x is ExperimentDocument {
  const d = x as Partial<ExperimentDocument> | null;
  return (
    typeof d === 'object' &&
    d !== null &&
    d.schema === EXPERIMENT_SCHEMA &&
    Array.isArray(d.arms) &&
    Array.isArray(d.plan?.clients) &&
    d.arms.every(
      (a) =>
        typeof a?.label === 'string' &&
        Array.isArray(a.runs) &&
        a.runs.every(
          (r) => typeof r?.clients === 'number' && typeof r.qps === 'number' && typeof r.status === 'string',
        ),
    )
  );
}

/** Refresh each arm's point summaries from its runs. */
export function summarizeArms(doc: ExperimentDocument): void {
  for (const arm of doc.arms) {
    const s = armSweep(doc, arm);
    if (!s) {
      delete arm.points;
      continue;
    }
    arm.points = s.points.map((p) => ({
      clients: p.clients,
      runs: p.runs.length,
      qps_median: p.qps.median,
      cv: p.qps.cv,
      stability: p.stability,
    }));
  }
}

/** The arms as compare's series, the baseline first; arms without runs are left out. */
export function experimentSeries(doc: ExperimentDocument, source: string): Series[] {
  const ordered = [...doc.arms].sort((a, b) => Number(b.baseline) - Number(a.baseline));
  const out: Series[] = [];
  for (const arm of ordered) {
    const s = armSweep(doc, arm);
    if (s) out.push(seriesFromSweep(arm.label, `${source}, arm ${arm.label}`, s));
  }
  return out;
}

/** The comparison of every arm with the baseline; undefined until the baseline and another arm have runs. */
export function compareArms(
  doc: ExperimentDocument,
  source: string,
  o: CompareOptions = { metric: 'qps' },
): CompareResult | undefined {
  const series = experimentSeries(doc, source);
  const baseline = doc.arms.find((a) => a.baseline)?.label;
  if (series.length < 2 || series[0]?.name !== baseline) return undefined;
  const [base, ...cands] = series;
  // An arm with no client count in common with the baseline yet (early in the experiment) waits its turn.
  const shared = cands.filter((c) => [...c.points.keys()].some((k) => base!.points.has(k)));
  if (shared.length === 0) return undefined;
  return compareSeries(base!, shared, o);
}
