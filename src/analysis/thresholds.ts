/**
 * Thresholds: their values and verdicts from a finished RunResult, and the live check of
 * `--threshold-abort`, which stops a run as soon as a threshold can no longer hold.
 *
 * What the live check can know for sure (and so what it does), after each complete interval:
 * - an error count (`errors<N`, `errors<=N`, with or without a statement or stage) only grows: it fails
 *   as soon as the count reaches the limit;
 * - a stage's figures are final when its last interval is in: every threshold of a stage (`{stage=N}`) is
 *   judged then;
 * - `max<L` of the whole run only grows: it fails at the first event (or statement) slower than L;
 * - a whole-run percentile `pQ<L` when the run's number of events is bounded (`--events E`, or `--rounds`
 *   × clients): it fails once more events than (100−Q)% of that bound were slower than L.
 * Everything else (qps, tps, error percentages, percentiles of a run limited by time) is judged at the end.
 */
import { summarize } from '../metrics/histogram.ts';
import type { LiveView, StageAccumulator, TypeAccumulator } from '../metrics/outcome.ts';
import type { LatencySummary, RunResult, ThresholdResult } from '../metrics/run-result.ts';
import { round3 } from './stats.ts';
import { holds, isLatency, percentileOf, type ThresholdSpec } from './threshold-spec.ts';

interface Figures {
  latency: LatencySummary | undefined;
  count: number;
  errors: number;
  qps: number;
  eps: number | undefined;
}

/** The figures a threshold reads, from the run, one of its stages, or one statement type of either. */
function figuresOf(r: RunResult, t: ThresholdSpec): Figures | string {
  let base: {
    latency: LatencySummary;
    count: number;
    errors: number;
    queries: number;
    qps: number;
    eps: number;
    types: Record<string, { count: number; errors: number; qps: number; latency_ms: LatencySummary }>;
  };
  if (t.stage !== undefined) {
    const s = r.stages?.[t.stage - 1];
    if (s === undefined) return `the run has no stage ${t.stage}`;
    base = { ...s, latency: s.latency_ms, count: s.events };
  } else {
    base = {
      latency: r.events.latency_ms,
      count: r.events.count,
      errors: r.totals.errors,
      queries: r.totals.queries,
      qps: r.totals.qps,
      eps: r.totals.eps,
      types: r.types,
    };
  }
  if (t.statement !== undefined) {
    const ty = base.types[t.statement];
    if (ty === undefined) return `no statement of type ${t.statement} was measured`;
    return { latency: ty.latency_ms, count: ty.count, errors: ty.errors, qps: ty.qps, eps: undefined };
  }
  return { latency: base.latency, count: base.count, errors: base.errors, qps: base.qps, eps: base.eps };
}

/** The measured value of a threshold in its unit, or why there is none. */
export function thresholdValue(r: RunResult, t: ThresholdSpec): number | string {
  const f = figuresOf(r, t);
  if (typeof f === 'string') return f;
  if (isLatency(t.metric)) {
    if (f.count === 0 || f.latency === undefined) return 'nothing was measured';
    return f.latency[t.metric as keyof LatencySummary];
  }
  if (t.metric === 'errors') {
    if (t.unit === 'count') return f.errors;
    const tried = f.count + f.errors;
    // of the statements tried (events when there is no statement filter): a share in percent
    const q = t.statement === undefined ? queriesOf(r, t) + f.errors : tried;
    return q > 0 ? round3((f.errors / q) * 100) : 0;
  }
  if (t.metric === 'qps') return f.qps;
  return f.eps ?? 0;
}

function queriesOf(r: RunResult, t: ThresholdSpec): number {
  if (t.stage !== undefined) return r.stages?.[t.stage - 1]?.queries ?? 0;
  return r.totals.queries;
}

/** Each threshold with its value and verdict. `aborted`: the one `--threshold-abort` stopped the run on. */
export function evaluateThresholds(
  r: RunResult,
  specs: readonly ThresholdSpec[],
  aborted?: { index: number; reason: string },
): ThresholdResult[] {
  return specs.map((t, i) => {
    const v = thresholdValue(r, t);
    const out: ThresholdResult = {
      expr: t.expr,
      metric: t.metric,
      ...(t.statement !== undefined ? { statement: t.statement } : {}),
      ...(t.stage !== undefined ? { stage: t.stage } : {}),
      op: t.op,
      limit: t.limit,
      unit: t.unit,
      value: typeof v === 'number' ? v : null,
      ok: typeof v === 'number' && holds(v, t.op, t.limit),
    };
    if (typeof v === 'string') out.note = v;
    if (aborted?.index === i) {
      out.ok = false;
      out.note = `stopped the run (--threshold-abort): ${aborted.reason}`;
    }
    return out;
  });
}

/** Whether every threshold held. */
export function thresholdsHold(results: readonly ThresholdResult[] | undefined): boolean {
  return (results ?? []).every((t) => t.ok);
}

/** `p99 3.2 ms`, `errors 0.12%`, `qps 10500/s`: a threshold's value in words. */
export function thresholdValueText(t: ThresholdResult): string {
  if (t.value === null) return t.note ?? 'not measured';
  const v =
    t.unit === 'ms'
      ? `${t.value} ms`
      : t.unit === '%'
        ? `${t.value}%`
        : t.unit === '/s'
          ? `${t.value}/s`
          : `${t.value}`;
  return `${t.metric} ${v}`;
}

/** The limit in the threshold's unit, as words (`5 ms`). */
export function limitText(t: { limit: number; unit: ThresholdResult['unit'] }): string {
  return t.unit === 'ms'
    ? `${round3(t.limit)} ms`
    : t.unit === '%'
      ? `${t.limit}%`
      : t.unit === '/s'
        ? `${t.limit}/s`
        : `${t.limit}`;
}

/** The live check of `--threshold-abort` (see the module's comment for what it can judge early). */
export class ThresholdWatch {
  /** The threshold that stopped the run, when one did. */
  aborted: { index: number; reason: string } | undefined;
  private readonly specs: readonly ThresholdSpec[];

  constructor(specs: readonly ThresholdSpec[]) {
    this.specs = specs;
  }

  check(live: LiveView): string | undefined {
    for (const [index, t] of this.specs.entries()) {
      const why = this.cannotHold(t, live);
      if (why !== undefined) {
        this.aborted = { index, reason: why };
        return `${t.expr} can no longer hold: ${why}`;
      }
    }
    return undefined;
  }

  private cannotHold(t: ThresholdSpec, live: LiveView): string | undefined {
    const growsOnly = t.op === '<' || t.op === '<=';
    if (t.stage !== undefined) {
      const s = live.stages?.[t.stage - 1];
      if (s === undefined) return undefined;
      if (t.metric === 'errors' && t.unit === 'count' && growsOnly) {
        const n = t.statement !== undefined ? (s.types.get(t.statement)?.errors ?? 0) : s.errors;
        return holds(n, t.op, t.limit) ? undefined : `stage ${t.stage} has ${n} errors`;
      }
      if (!s.closed) return undefined;
      const v = stageValue(s, t);
      if (v === undefined || holds(v, t.op, t.limit)) return undefined;
      return `stage ${t.stage} ended with ${t.metric} ${v}${t.unit === 'ms' ? ' ms' : t.unit === '%' ? '%' : t.unit === '/s' ? '/s' : ''}`;
    }
    const ty: TypeAccumulator | undefined =
      t.statement !== undefined ? live.types.get(t.statement) : undefined;
    if (t.metric === 'errors' && t.unit === 'count' && growsOnly) {
      const n = t.statement !== undefined ? (ty?.errors ?? 0) : live.errors;
      return holds(n, t.op, t.limit) ? undefined : `${n} errors so far`;
    }
    if (!isLatency(t.metric) || !growsOnly) return undefined;
    const hist = t.statement !== undefined ? ty?.hist : live.events.hist;
    const count = t.statement !== undefined ? (ty?.count ?? 0) : live.events.count;
    if (hist === undefined || count === 0) return undefined;
    if (t.metric === 'max') {
      const maxMs = hist.maxValue / 1000;
      return holds(maxMs, t.op, t.limit) ? undefined : `one took ${round3(maxMs)} ms`;
    }
    const q = percentileOf(t.metric);
    if (q === 0) return undefined;
    // the most events the run can have: a percentile over them is then bounded from below
    const plan = live.plan;
    const bound =
      t.statement === undefined
        ? (plan.events ?? (plan.rounds !== undefined ? plan.rounds * plan.clients : undefined))
        : undefined;
    if (bound === undefined) return undefined;
    const allowed = ((100 - q) / 100) * bound;
    if (allowed >= count) return undefined;
    const atMs = hist.getValueAtPercentile(100 * (1 - allowed / count)) / 1000;
    if (holds(atMs, t.op, t.limit)) return undefined;
    return `more than ${Math.floor(allowed)} of at most ${bound} events took over ${limitText(t)}`;
  }
}

function stageValue(s: StageAccumulator, t: ThresholdSpec): number | undefined {
  const el = s.measuredS;
  const ty = t.statement !== undefined ? s.types.get(t.statement) : undefined;
  if (t.statement !== undefined && ty === undefined) return undefined;
  if (isLatency(t.metric)) {
    const h = ty?.hist ?? s.eventHist;
    if (h.totalCount === 0) return undefined;
    return summarize(h)[t.metric as keyof LatencySummary];
  }
  if (t.metric === 'errors') {
    const errors = ty?.errors ?? s.errors;
    if (t.unit === 'count') return errors;
    const tried = (ty?.count ?? s.queries) + errors;
    return tried > 0 ? round3((errors / tried) * 100) : 0;
  }
  if (t.metric === 'qps') return el > 0 ? Math.round(((ty?.count ?? s.queries) / el) * 100) / 100 : 0;
  return el > 0 ? Math.round((s.events / el) * 100) / 100 : 0;
}
