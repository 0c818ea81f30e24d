/**
 * Comparing a base against candidates, client count by client count: the ratio of medians, a Mann–Whitney
 * p-value over the repeats, a bootstrap interval of the ratio, and a verdict that says `same` (~) unless
 * both the test and the interval show a difference. Inputs are `Series`: samples per client count, however
 * they were loaded (history label, run id, JSON file).
 */

import type { ServerSched } from '../metrics/profile-types.ts';
import type { RunResult } from '../metrics/run-result.ts';
import { bootstrapRatioOfMedians } from './bootstrap.ts';
import { mannWhitney, minimumP } from './mann-whitney.ts';
import { median } from './stats.ts';
import {
  COMPARE_SCHEMA,
  type CompareCell,
  type CompareResult,
  type CompareRow,
  type SignificanceTest,
  type SweepResult,
  type Verdict,
} from './types.ts';
import { welchTTest } from './welch.ts';

export type Metric = CompareResult['metric'];

/** Samples of one input per client count. */
export interface Series {
  name: string;
  /** Where it came from, in words (`history label nightly (sweep 12)`, `file a.json`). */
  source: string;
  points: Map<number, { qps: number[]; p95: number[]; p99: number[] }>;
  /** Flattened settings and environment, for the table of what differs. */
  facts: Record<string, string>;
  /** Runs left out because they did not complete. */
  excluded: number;
  /** Workload name, to warn when unlike things are compared. */
  workload: string;
}

function flatten(
  prefix: string,
  obj: Record<string, unknown> | undefined,
  out: Record<string, string>,
): void {
  if (!obj) return;
  for (const [k, v] of Object.entries(obj)) {
    if (v === undefined || v === null) continue;
    out[`${prefix}${k}`] = typeof v === 'object' ? JSON.stringify(v) : String(v);
  }
}

/**
 * What a scheduling request asked for, in words: `nice 5, policy fifo 10, cpus 0`. A fact of the differences
 * table (`server.scheduling`), which the report's settings table and profile lines show in the same words.
 */
export function describeSched(s: ServerSched | undefined): string {
  if (s === undefined) return 'as found';
  const r = s.requested;
  const parts: string[] = [];
  if (r.nice !== undefined) parts.push(`nice ${r.nice}`);
  if (r.policy !== undefined)
    parts.push(`policy ${r.policy}${r.priority !== undefined ? ` ${r.priority}` : ''}`);
  if (r.cpus !== undefined) parts.push(`cpus ${r.cpus}`);
  return `${parts.join(', ')}${s.applied ? '' : ' (NOT applied)'}`;
}

/** What a run ran on and with: the keys of the differences table. */
export function factsOf(
  r: Pick<RunResult, 'env' | 'target' | 'workload' | 'limits' | 'server'>,
): Record<string, string> {
  const out: Record<string, string> = {};
  out.workload = r.workload.name;
  flatten('workload.', r.workload.options, out);
  if (r.workload.args.length > 0) out['workload.args'] = r.workload.args.join(' ');
  out['target.driver'] = r.target.driver;
  out['target.url'] = r.target.url;
  if (r.target.connector) out['target.connector'] = r.target.connector;
  out['server.version'] = r.server?.version ?? r.target.server_version;
  flatten('server.', r.server?.settings, out);
  flatten('limits.', r.limits as unknown as Record<string, unknown>, out);
  // Open-loop runs (`--rate`) record their target; held back or not is the first thing a reader must see.
  const rate = (r as { rate?: { target?: unknown; shape?: unknown } }).rate;
  out['limits.rate'] =
    rate?.target !== undefined ? `${String(rate.target)}/s ${String(rate.shape ?? '')}`.trim() : 'none';
  // A scheduling experiment (--server-nice, --server-policy …) is what a reader compares against a baseline.
  out['server.scheduling'] = describeSched((r as { server_sched?: ServerSched }).server_sched);
  flatten('env.', r.env as unknown as Record<string, unknown>, out);
  return out;
}

function addRun(points: Series['points'], r: RunResult): void {
  let p = points.get(r.clients);
  if (!p) {
    p = { qps: [], p95: [], p99: [] };
    points.set(r.clients, p);
  }
  p.qps.push(r.totals.qps);
  p.p95.push(r.events.latency_ms.p95);
  p.p99.push(r.events.latency_ms.p99);
}

/** A series from separate runs, pooled by client count (their repeats). Only complete runs count. */
export function seriesFromRuns(name: string, source: string, runs: readonly RunResult[]): Series {
  const points: Series['points'] = new Map();
  let excluded = 0;
  for (const r of runs) {
    if (r.status === 'complete') addRun(points, r);
    else excluded++;
  }
  const last = runs[runs.length - 1];
  return {
    name,
    source,
    points,
    facts: last ? factsOf(last) : {},
    excluded,
    workload: last?.workload.name ?? '',
  };
}

/** A series from a sweep document, from its run summaries. Only complete runs count. */
export function seriesFromSweep(name: string, source: string, s: SweepResult): Series {
  const points: Series['points'] = new Map();
  let excluded = 0;
  for (const p of s.points) {
    for (const r of p.runs) {
      if (r.status !== 'complete') {
        excluded++;
        continue;
      }
      let q = points.get(p.clients);
      if (!q) {
        q = { qps: [], p95: [], p99: [] };
        points.set(p.clients, q);
      }
      q.qps.push(r.qps);
      q.p95.push(r.p95_ms);
      q.p99.push(r.p99_ms);
    }
  }
  const first = s.points[0]?.runs[0]?.result;
  const facts: Record<string, string> = first
    ? factsOf(first)
    : factsOf({ env: s.env, target: s.target, workload: s.workload, limits: {} as RunResult['limits'] });
  flatten('server.', s.server_settings, facts);
  return { name, source, points, facts, excluded, workload: s.workload.name };
}

export interface CompareOptions {
  metric: Metric;
  /** Significance level; 0.05 by default. */
  alpha?: number;
  seed?: number;
  resamples?: number;
}

function samplesOf(p: { qps: number[]; p95: number[]; p99: number[] }, metric: Metric): number[] {
  return metric === 'qps' ? p.qps : metric === 'p95' ? p.p95 : p.p99;
}

/** One cell: the candidate's samples against the base's at one client count. */
export function compareSamples(
  base: readonly number[],
  cand: readonly number[],
  metric: Metric,
  alpha: number,
  seed: number,
  resamples = 2000,
): CompareCell & { value: number } {
  const ci = bootstrapRatioOfMedians(base, cand, { seed, resamples });
  // One run on a side has no spread to resample: no interval rather than a zero-width one.
  const hasCi = base.length >= 2 && cand.length >= 2;
  const ciExcludes1 = hasCi && (ci.low > 1 || ci.high < 1);
  let p = mannWhitney(cand, base).p;
  let test: SignificanceTest = 'mann-whitney';
  if (minimumP(base.length, cand.length) >= alpha) {
    // The rank test cannot reach alpha with so few runs, however far apart they are. Welch's t-test on the
    // logarithms can (assuming roughly log-normal runs); without two positive values a side, nothing can.
    if (base.length >= 2 && cand.length >= 2 && [...base, ...cand].every((v) => v > 0)) {
      p = welchTTest(cand.map(Math.log), base.map(Math.log)).p;
      test = 'welch-log';
    } else test = 'none';
  }
  let verdict: Verdict;
  if (p < alpha && ciExcludes1 && test !== 'none') {
    const higher = ci.ratio > 1;
    // More throughput is better; more latency is worse.
    verdict = higher === (metric === 'qps') ? 'better' : 'worse';
  } else if (test === 'none' && (hasCi ? ciExcludes1 : ci.ratio !== 1)) {
    // Not shown and not ruled out: a gap with no test able to judge it.
    verdict = 'unknown';
  } else verdict = 'same';
  return {
    value: median(cand),
    ratio: ci.ratio,
    ci_low: hasCi ? ci.low : null,
    ci_high: hasCi ? ci.high : null,
    p_value: p,
    test,
    verdict,
    n_base: base.length,
    n_cand: cand.length,
  };
}

/** Thrown when inputs cannot be compared; the CLI turns it into a usage error. */
export class CompareInputError extends Error {}

/** Compare candidates against a base. Names must be distinct. */
export function compareSeries(base: Series, cands: readonly Series[], o: CompareOptions): CompareResult {
  const alpha = o.alpha ?? 0.05;
  const seed = o.seed ?? 1;
  const warnings: string[] = [];
  for (const c of cands) {
    const common = [...c.points.keys()].filter((k) => base.points.has(k));
    if (common.length === 0) {
      const list = (s: Series): string => [...s.points.keys()].sort((a, b) => a - b).join(',') || 'none';
      throw new CompareInputError(
        `${c.name} and ${base.name} have no client count in common (${c.name}: ${list(c)}; ${base.name}: ${list(base)})`,
      );
    }
  }
  const clients = [...base.points.keys()]
    .filter((k) => cands.some((c) => c.points.has(k)))
    .sort((a, b) => a - b);
  const tooFew: string[] = [];
  const noInterval: string[] = [];
  const rows: CompareRow[] = clients.map((k, ki) => {
    const b = samplesOf(base.points.get(k)!, o.metric);
    const row: CompareRow = { clients: k, base: median(b), candidates: {} };
    cands.forEach((c, ci) => {
      const p = c.points.get(k);
      if (!p) return;
      const cell = compareSamples(
        b,
        samplesOf(p, o.metric),
        o.metric,
        alpha,
        seed + ki * 7919 + ci * 104729,
        o.resamples,
      );
      const where = `${k} clients (${cell.n_base} run${cell.n_base === 1 ? '' : 's'} of ${base.name}, ${cell.n_cand} of ${c.name})`;
      if (cell.test !== 'mann-whitney') tooFew.push(where);
      if (cell.ci_low === null) noInterval.push(where);
      row.candidates[c.name] = cell;
    });
    return row;
  });
  if (tooFew.length > 0) {
    warnings.push(
      `too few repeats at ${tooFew.join('; ')}: the Mann–Whitney test cannot reach p < ${alpha} with so few, so ` +
        "these cells use Welch's t-test on the logarithms (which assumes roughly log-normal runs), or show ? " +
        'where even that cannot judge; run at least 4 repeats of each (--repeat 5, the default of sweep, is better)',
    );
  }
  if (noInterval.length > 0) {
    warnings.push(
      `no confidence interval at ${noInterval.join('; ')}: a single run on a side shows nothing of how much ` +
        'its runs vary, so neither an interval nor a test can be given; repeat the runs (sweep --repeat 5)',
    );
  }
  for (const s of [base, ...cands]) {
    if (s.excluded > 0)
      warnings.push(
        `${s.name}: ${s.excluded} run${s.excluded > 1 ? 's' : ''} that did not complete left out`,
      );
    const missing = [...base.points.keys()].sort((a, b) => a - b).filter((k) => !s.points.has(k));
    if (s !== base && missing.length > 0)
      warnings.push(`${s.name} has no runs at ${missing.join(', ')} clients`);
    if (s.workload !== base.workload)
      warnings.push(`${s.name} ran workload ${s.workload}, ${base.name} ran ${base.workload}`);
  }
  return {
    schema: COMPARE_SCHEMA,
    metric: o.metric,
    base: base.name,
    candidates: cands.map((c) => c.name),
    rows,
    warnings,
    alpha,
    sources: Object.fromEntries([base, ...cands].map((s) => [s.name, s.source])),
    differences: differences([base, ...cands]),
  };
}

/** Keys whose values are not the same in every input: key → value per input name ('' where missing). */
export function differences(series: readonly Series[]): Record<string, Record<string, string>> {
  const keys = new Set(series.flatMap((s) => Object.keys(s.facts)));
  const out: Record<string, Record<string, string>> = {};
  for (const k of [...keys].sort()) {
    const values = series.map((s) => s.facts[k] ?? '');
    if (values.every((v) => v === values[0])) continue;
    out[k] = Object.fromEntries(series.map((s, i) => [s.name, values[i] as string]));
  }
  return out;
}

export interface GuardOutcome {
  /** Cells with a significant ratio beyond the threshold: "B at 4 clients: 0.61". */
  failed: string[];
  /** Cells beyond the threshold that too few repeats cannot confirm. */
  inconclusive: string[];
}

/** `--fail-below R` / `--fail-above R`: which cells cross the threshold. */
export function guard(r: CompareResult, below?: number, above?: number): GuardOutcome {
  const out: GuardOutcome = { failed: [], inconclusive: [] };
  for (const row of r.rows) {
    for (const [name, c] of Object.entries(row.candidates)) {
      const crosses = (below !== undefined && c.ratio < below) || (above !== undefined && c.ratio > above);
      if (!crosses) continue;
      const what = `${name} at ${row.clients} client${row.clients === 1 ? '' : 's'}: ${Number(c.ratio.toPrecision(3))} (p=${c.p_value.toPrecision(2)})`;
      if (c.verdict === 'better' || c.verdict === 'worse') out.failed.push(what);
      else if (c.verdict === 'unknown') out.inconclusive.push(what);
    }
  }
  return out;
}
