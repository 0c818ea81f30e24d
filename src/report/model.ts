/**
 * The report model: everything the HTML, Markdown and image outputs show, gathered once from the inputs.
 * It reads run, sweep and compare documents defensively (a hand-edited or truncated file gives notes, not
 * a crash) and computes no statistics of its own: the medians, CVs and stalls it shows are analysis's
 * (`analysis/stats.ts`, `analysis/stability.ts`), ratios and significance come from the compare documents.
 */
import { describeSched } from '../analysis/compare.ts';
import { drawableIntervals, findTimelineStalls } from '../analysis/stability.ts';
import { coefficientOfVariation, median } from '../analysis/stats.ts';
import type { CompareResult, SweepResult } from '../analysis/types.ts';
import { byName } from '../collate.ts';
import type {
  IntervalPoint,
  RunResult,
  RunStatus,
  StageResult,
  ThresholdResult,
} from '../metrics/run-result.ts';
import { type HistogramView, histogramView } from './histogram-view.ts';
import { type ReportInput, type ReportInputs, reportRunLabel } from './inputs.ts';
import type { LabelledResult, ProfiledResult } from './profile.ts';

/** One measured run, as the charts need it. */
export interface RepeatPoint {
  label: string;
  clients: number;
  repeat: number;
  qps: number;
  eps: number;
  /** Event latency percentiles, ms. */
  p50_ms: number;
  p95_ms: number;
  p99_ms: number;
  errors: number;
  status: RunStatus;
  outlier: boolean;
  source: string;
}

/** The repeats of one label at one client count, summarised for tables and lines. */
export interface SeriesPoint {
  label: string;
  clients: number;
  /** Repeats the figures are of: the complete ones, or every one when none completed. */
  n: number;
  /** Repeats left out of the figures because they stopped early (as `sweep` leaves them out). */
  left_out?: number;
  qps_median: number;
  qps_min: number;
  qps_max: number;
  /** Coefficient of variation of qps among the repeats (0 with one repeat). */
  cv: number;
  eps_median: number;
  p50_ms: number;
  p95_ms: number;
  p99_ms: number;
  errors: number;
  stability?: string;
  stability_reason?: string;
}

export interface TimelineView {
  id: string;
  title: string;
  label: string;
  clients: number;
  repeat: number;
  intervals: IntervalPoint[];
  /** Short tail intervals left out: their rates are noise (a few queries over a few milliseconds). */
  dropped: number;
  /** [start s, end s] of intervals with near-zero throughput. */
  stalls: [number, number][];
  /** A staged run's stages (drawn as boundaries, and as a table below the timeline). */
  stages?: StageResult[];
  /** The run's thresholds with their values and verdicts. */
  thresholds?: ThresholdResult[];
}

export interface HistogramSet {
  id: string;
  title: string;
  label: string;
  clients: number;
  types: HistogramView[];
}

/** Data a probe stored in a RunResult under its own key (wait profile, thread statistics, …). */
export interface ProbeSection {
  label: string;
  clients: number;
  key: string;
  data: unknown;
}

export interface SettingsTable {
  labels: string[];
  /** key → label → value, for keys whose values differ between labels. */
  differ: Record<string, Record<string, string>>;
  /** key → value, for keys that are the same everywhere. */
  same: Record<string, string>;
}

export interface CompareView {
  source: string;
  doc: CompareResult;
}

export interface ReportModel {
  title: string;
  generatedAt: string;
  labels: string[];
  repeats: RepeatPoint[];
  series: SeriesPoint[];
  compares: CompareView[];
  timelines: TimelineView[];
  histograms: HistogramSet[];
  probes: ProbeSection[];
  /** One representative run per label that was profiled or ran a scheduling experiment (`--profile`, `--server-nice` …). */
  profiles: LabelledResult[];
  settings: SettingsTable;
  /** What is missing or odd, in words; shown at the top of the report. */
  notes: string[];
  sources: { source: string; kind: string; what: string }[];
}

/** Top-level RunResult fields the report knows; any other key is probe data, shown generically. */
const RUN_FIELDS = new Set([
  'schema',
  'status',
  'status_reason',
  'workload',
  'target',
  'label',
  'clients',
  'workers',
  'started_at',
  'elapsed_s',
  'limits',
  'totals',
  'events',
  'types',
  'connect_ms',
  'warmup',
  'intervals',
  'errors',
  'client_stats',
  'client_cpu',
  'env',
  'groups',
  // Shown in their own places: sysbench counts repeat the totals, the rate plan and server settings are
  // in the settings table, and the profile has its own side-by-side tables and wait charts.
  'sysbench',
  'rate',
  'server',
  'profile',
  'server_sched',
  // shown with the run's timeline
  'stages',
  'thresholds',
]);

const num = (v: unknown): number => (typeof v === 'number' && Number.isFinite(v) ? v : 0);

/** A name that is safe as a file name and an HTML id. */
export function slug(s: string): string {
  return (
    s
      .toLowerCase()
      .replace(/[^a-z0-9]+/g, '-')
      .replace(/^-|-$/g, '') || 'x'
  );
}

interface RunRef {
  label: string;
  clients: number;
  repeat: number;
  result: RunResult;
  stalls: [number, number][] | undefined;
  outlier: boolean;
  source: string;
  sweep?: SweepResult;
}

const runLabel = reportRunLabel;

function describeRun(r: RunResult): string {
  return `${r.workload?.name ?? '?'} on ${r.target?.url ?? '?'}, ${num(r.clients)} clients, ${num(r.elapsed_s).toFixed(1)} s, ${r.status}`;
}

/** Flatten the settings of a run (and its sweep) into key → value strings for the differences table. */
function settingsOf(ref: RunRef): Record<string, string> {
  const r = ref.result;
  const out: Record<string, string> = {};
  const put = (k: string, v: unknown): void => {
    if (v === undefined || v === null || v === '') return;
    out[k] = typeof v === 'object' ? JSON.stringify(v) : String(v);
  };
  put('target.driver', r.target?.driver);
  put('target.url', r.target?.url);
  put('target.server_version', r.target?.server_version);
  put('target.connector', r.target?.connector);
  put('target.shared_io_thread', r.target?.shared_io_thread);
  put('workload.name', r.workload?.name);
  for (const [k, v] of Object.entries(r.workload?.options ?? {})) put(`workload.option.${k}`, v);
  if ((r.workload?.args ?? []).length > 0) put('workload.args', (r.workload?.args ?? []).join(' '));
  put('workers', r.workers);
  for (const [k, v] of Object.entries(r.limits ?? {})) put(`limits.${k}`, v);
  for (const [k, v] of Object.entries(r.env ?? {})) put(`env.${k}`, v);
  for (const [k, v] of Object.entries(ref.sweep?.server_settings ?? {})) put(`server.${k}`, v);
  for (const [k, v] of Object.entries(r.server?.settings ?? {})) put(`server.${k}`, v);
  if (r.rate) put('limits.rate', `${r.rate.target}/s ${r.rate.shape}`);
  put('server.scheduling', describeSched((r as ProfiledResult).server_sched));
  return out;
}

function collectRuns(inputs: ReportInput[], notes: string[]): RunRef[] {
  const runs: RunRef[] = [];
  for (const input of inputs) {
    if (input.kind === 'run') {
      const r = input.doc;
      runs.push({
        label: runLabel(r),
        clients: num(r.clients),
        repeat: 0,
        result: r,
        stalls: undefined,
        outlier: false,
        source: input.source,
      });
    } else if (input.kind === 'sweep') {
      const s = input.doc;
      const points = Array.isArray(s.points) ? s.points : [];
      if (points.length === 0) {
        notes.push(`${input.source}: the sweep "${s.label ?? '?'}" has no points: nothing was measured.`);
      }
      for (const p of points) {
        const pruns = Array.isArray(p.runs) ? p.runs : [];
        if (pruns.length === 0) {
          notes.push(`${input.source}: ${s.label} at ${p.clients} clients has no runs.`);
        }
        for (const sr of pruns) {
          if (sr.result === undefined || sr.result === null) {
            notes.push(
              `${input.source}: ${s.label} at ${p.clients} clients, repeat ${sr.repeat}: the run's result is missing.`,
            );
            continue;
          }
          runs.push({
            label: s.label ?? runLabel(sr.result),
            clients: num(p.clients),
            repeat: num(sr.repeat),
            result: sr.result,
            stalls: Array.isArray(sr.stalls) ? sr.stalls : undefined,
            outlier: sr.outlier === true,
            source: input.source,
            sweep: s,
          });
        }
      }
    }
  }
  // Plain runs of one label and client count are repeats of each other: number them in input order.
  // A lone run keeps repeat 0: "repeat 1" would suggest there were more.
  const seen = new Map<string, number>();
  const plain = runs.filter((r) => r.sweep === undefined);
  const key = (r: RunRef): string => `${r.label}\0${r.clients}`;
  for (const r of plain) seen.set(key(r), (seen.get(key(r)) ?? 0) + 1);
  const next = new Map<string, number>();
  for (const r of plain) {
    if ((seen.get(key(r)) ?? 0) < 2) continue;
    const n = (next.get(key(r)) ?? 0) + 1;
    next.set(key(r), n);
    r.repeat = n;
  }
  return runs;
}

function repeatPoint(ref: RunRef): RepeatPoint {
  const r = ref.result;
  const lat = r.events?.latency_ms;
  return {
    label: ref.label,
    clients: ref.clients,
    repeat: ref.repeat,
    qps: num(r.totals?.qps),
    eps: num(r.totals?.eps),
    p50_ms: num(lat?.p50),
    p95_ms: num(lat?.p95),
    p99_ms: num(lat?.p99),
    errors: num(r.totals?.errors),
    status: r.status,
    outlier: ref.outlier,
    source: ref.source,
  };
}

function seriesOf(repeats: RepeatPoint[], sweeps: Map<string, SweepResult>): SeriesPoint[] {
  const groups = new Map<string, RepeatPoint[]>();
  for (const p of repeats) {
    const k = `${p.label}\0${p.clients}`;
    const g = groups.get(k);
    if (g) g.push(p);
    else groups.set(k, [p]);
  }
  const out: SeriesPoint[] = [];
  for (let g of groups.values()) {
    const first = g[0]!;
    // As a sweep's point (analysis/sweep-build.ts): a repeat that stopped early is left out of the figures
    // when a complete one is there; the repeats chart still draws it.
    const complete = g.filter((p) => p.status === 'complete');
    const all = g;
    if (complete.length > 0) g = complete;
    const qps = g.map((p) => p.qps);
    const sp = sweeps.get(first.label)?.points?.find((p) => p.clients === first.clients);
    out.push({
      label: first.label,
      clients: first.clients,
      n: g.length,
      qps_median: median(qps),
      qps_min: Math.min(...qps),
      qps_max: Math.max(...qps),
      cv: coefficientOfVariation(qps),
      eps_median: median(g.map((p) => p.eps)),
      p50_ms: median(g.map((p) => p.p50_ms)),
      p95_ms: median(g.map((p) => p.p95_ms)),
      p99_ms: median(g.map((p) => p.p99_ms)),
      errors: all.reduce((a, p) => a + p.errors, 0),
      ...(all.length > g.length ? { left_out: all.length - g.length } : {}),
      ...(sp?.stability ? { stability: sp.stability, stability_reason: sp.stability_reason } : {}),
    });
  }
  return out.sort((a, b) => byName(a.label, b.label) || a.clients - b.clients);
}

/** The run that stands for a label: the median-throughput repeat at its highest client count. */
function representative(runs: RunRef[]): RunRef | undefined {
  if (runs.length === 0) return undefined;
  const top = Math.max(...runs.map((r) => r.clients));
  const at = runs
    .filter((r) => r.clients === top)
    .sort((a, b) => num(a.result.totals?.qps) - num(b.result.totals?.qps));
  return at[(at.length - 1) >> 1];
}

/** At most this many timelines per label, so a sweep of many runs stays readable. */
const MAX_TIMELINES_PER_LABEL = 4;

function timelinesOf(label: string, runs: RunRef[], notes: string[]): TimelineView[] {
  const chosen: RunRef[] = [];
  const rep = representative(runs);
  const stalled = runs.filter((r) => (r.stalls ?? findTimelineStalls(r.result.intervals ?? [])).length > 0);
  // A plain-run report shows every run; of a sweep, the representative run and those that stalled.
  const candidates = runs.every((r) => r.sweep === undefined) ? runs : [...(rep ? [rep] : []), ...stalled];
  for (const r of candidates) if (!chosen.includes(r)) chosen.push(r);
  const out: TimelineView[] = [];
  for (const r of chosen.slice(0, MAX_TIMELINES_PER_LABEL)) {
    const intervals = Array.isArray(r.result.intervals) ? r.result.intervals : [];
    const name = `${label}, ${r.clients} client${r.clients === 1 ? '' : 's'}${r.repeat > 0 ? `, repeat ${r.repeat}` : ''}`;
    if (intervals.length === 0) {
      notes.push(`${r.source}: ${name} has no timeline (no intervals were recorded).`);
      continue;
    }
    const drawn = drawableIntervals(intervals);
    out.push({
      id: `timeline-${slug(label)}-c${r.clients}-r${r.repeat}`,
      title: name,
      label,
      clients: r.clients,
      repeat: r.repeat,
      intervals: drawn,
      dropped: intervals.length - drawn.length,
      stalls: r.stalls ?? findTimelineStalls(intervals),
      ...(Array.isArray(r.result.stages) ? { stages: r.result.stages } : {}),
      ...(Array.isArray(r.result.thresholds) ? { thresholds: r.result.thresholds } : {}),
    });
  }
  if (chosen.length > MAX_TIMELINES_PER_LABEL) {
    notes.push(
      `${label}: ${chosen.length - MAX_TIMELINES_PER_LABEL} more timelines (runs that stalled) are not drawn.`,
    );
  }
  return out;
}

function histogramsOf(label: string, runs: RunRef[], notes: string[]): HistogramSet | undefined {
  const rep = representative(runs);
  if (rep === undefined) return undefined;
  const types: HistogramView[] = [];
  for (const [name, t] of Object.entries(rep.result.types ?? {})) {
    if (typeof t?.histogram !== 'string' || t.histogram === '') {
      notes.push(`${rep.source}: statement type "${name}" of ${label} has no histogram.`);
      continue;
    }
    try {
      types.push(histogramView(name, t.kind, t.histogram));
    } catch (e) {
      notes.push(
        `${rep.source}: the histogram of "${name}" (${label}) cannot be decoded: ${(e as Error).message}`,
      );
    }
  }
  if (types.length === 0) return undefined;
  return {
    id: `histogram-${slug(label)}-c${rep.clients}`,
    title: `${label}, ${rep.clients} client${rep.clients === 1 ? '' : 's'}${rep.repeat > 0 ? `, repeat ${rep.repeat}` : ''}`,
    label,
    clients: rep.clients,
    types,
  };
}

function settingsTable(
  labels: string[],
  byLabel: Map<string, RunRef[]>,
  compares: CompareView[],
): SettingsTable {
  const per = new Map<string, Record<string, string>>();
  for (const label of labels) {
    const merged: Record<string, Set<string>> = {};
    for (const r of byLabel.get(label) ?? []) {
      for (const [k, v] of Object.entries(settingsOf(r))) {
        const set = merged[k] ?? new Set<string>();
        set.add(v);
        merged[k] = set;
      }
    }
    per.set(label, Object.fromEntries(Object.entries(merged).map(([k, vs]) => [k, [...vs].join(' | ')])));
  }
  const keys = new Set<string>();
  for (const s of per.values()) for (const k of Object.keys(s)) keys.add(k);
  const differ: Record<string, Record<string, string>> = {};
  const same: Record<string, string> = {};
  for (const k of [...keys].sort()) {
    const vals = labels.map((l) => per.get(l)?.[k] ?? '—');
    if (labels.length > 1 && new Set(vals).size > 1) {
      differ[k] = Object.fromEntries(labels.map((l, i) => [l, vals[i]!]));
    } else {
      same[k] = vals[0]!;
    }
  }
  // The comparison may know settings the runs do not carry (server variables read by compare).
  for (const c of compares) {
    for (const [k, v] of Object.entries(c.doc.differences ?? {})) differ[k] ??= v;
  }
  return { labels, differ, same };
}

/**
 * A profiled run's wait events as rows for a bar chart and table: MariaDB/MySQL waits in ms (condition
 * waits, where idle threads park, left out), PostgreSQL wait events as a share of backend samples, SQLite
 * busy waits by code. Undefined when the run has no wait profile.
 */
function waitRows(r: ProfiledResult): Record<string, unknown>[] | undefined {
  const w = r.profile?.waits;
  if (w?.kind === 'mysql') {
    const rows = w.waits
      .filter((x) => !x.event.startsWith('wait/synch/cond/'))
      .map((x) => ({ event: x.event, wait_ms: x.wait_ms, count: x.count }));
    return rows.length > 0 ? rows : undefined;
  }
  if (w?.kind === 'postgres') {
    const rows = w.events.map((x) => ({
      wait_event: `${x.type}:${x.event}`,
      share_pct: Math.round(x.share * 1000) / 10,
      samples: x.samples,
    }));
    return rows.length > 0 ? rows : undefined;
  }
  if (w?.kind === 'sqlite') {
    const rows = w.busy.map((x) => ({ code: x.code, count: x.count }));
    return rows.length > 0 ? rows : undefined;
  }
  return undefined;
}

/** Gather everything the outputs show from the resolved inputs. */
export function buildReportModel(resolved: ReportInputs, now: Date = new Date()): ReportModel {
  const notes: string[] = [];
  for (const s of resolved.skipped) notes.push(`${s.source}: skipped: ${s.reason}.`);
  const runs = collectRuns(resolved.inputs, notes);
  const sweeps = new Map<string, SweepResult>();
  for (const i of resolved.inputs) if (i.kind === 'sweep') sweeps.set(i.doc.label, i.doc);
  const compares: CompareView[] = resolved.inputs
    .filter((i): i is Extract<ReportInput, { kind: 'compare' }> => i.kind === 'compare')
    .map((i) => ({ source: i.source, doc: { ...i.doc, rows: Array.isArray(i.doc.rows) ? i.doc.rows : [] } }));
  for (const c of compares) {
    if (c.doc.rows.length === 0) notes.push(`${c.source}: the comparison has no rows.`);
  }

  const labels: string[] = [];
  const byLabel = new Map<string, RunRef[]>();
  const completeAt = new Set(
    runs.filter((r) => r.result.status === 'complete').map((r) => `${r.label}\0${r.clients}`),
  );
  for (const r of runs) {
    if (!byLabel.has(r.label)) {
      labels.push(r.label);
      byLabel.set(r.label, []);
    }
    byLabel.get(r.label)!.push(r);
    if (r.result.status !== 'complete') {
      notes.push(
        `${r.source}: ${r.label} at ${r.clients} clients is ${r.result.status}${r.result.status_reason ? ` (${r.result.status_reason})` : ''}; its figures cover what was measured${completeAt.has(`${r.label}\0${r.clients}`) ? ', and it is left out of the medians there' : ''}.`,
      );
    }
  }
  if (labels.length > 1 && compares.length === 0) {
    notes.push('There is no ratio table: the labels could not be compared (see the skipped inputs above).');
  }
  if (runs.length === 0 && compares.length === 0)
    notes.push('No run was found in the inputs: there is nothing to chart.');

  const repeats = runs.map(repeatPoint);
  const timelines: TimelineView[] = [];
  const histograms: HistogramSet[] = [];
  const probes: ProbeSection[] = [];
  const profiles: LabelledResult[] = [];
  for (const label of labels) {
    const lr = byLabel.get(label)!;
    timelines.push(...timelinesOf(label, lr, notes));
    const h = histogramsOf(label, lr, notes);
    if (h) histograms.push(h);
    const rep = representative(lr);
    const prof = rep?.result as ProfiledResult | undefined;
    if (rep && prof && (prof.profile !== undefined || prof.server_sched !== undefined)) {
      profiles.push({ label, result: rep.result });
      const waits = waitRows(prof);
      if (waits) probes.push({ label, clients: rep.clients, key: 'server waits', data: waits });
    }
    if (rep) {
      for (const [key, data] of Object.entries(rep.result)) {
        if (!RUN_FIELDS.has(key) && data !== undefined && data !== null) {
          probes.push({ label, clients: rep.clients, key, data });
        }
      }
    }
  }

  const first = runs[0]?.result;
  const title =
    labels.length > 0
      ? `dbsmack report: ${first?.workload?.name ?? 'workload'}, ${labels.join(' vs ')}`
      : 'dbsmack report';
  const sources = [
    ...resolved.inputs.map((i) => ({
      source: i.source,
      kind: i.kind,
      what:
        i.kind === 'run'
          ? describeRun(i.doc)
          : i.kind === 'sweep'
            ? `sweep "${i.doc.label}": ${(i.doc.points ?? []).length} client counts × ${num(i.doc.repeat)} repeats`
            : `compare ${i.doc.metric}: ${i.doc.base} vs ${(i.doc.candidates ?? []).join(', ')}`,
    })),
    ...resolved.skipped.map((s) => ({ source: s.source, kind: 'skipped', what: s.reason })),
  ];
  return {
    title,
    generatedAt: now.toISOString(),
    labels,
    repeats,
    series: seriesOf(repeats, sweeps),
    compares,
    timelines,
    histograms,
    probes,
    profiles,
    settings: settingsTable(labels, byLabel, compares),
    notes,
    sources,
  };
}
