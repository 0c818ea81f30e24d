/**
 * `dbsmack capacity`: the highest open-loop rate whose latencies hold an SLO. Bracketing first (from
 * `--rate-min`, doubling until a step breaks or `--rate-max` holds), then bisection between the highest
 * rate that held and the lowest that broke, until they are within `--precision` of each other. A step runs
 * the workload `--repeat` times at its rate; it holds when every run completed, kept the rate (at most 1% of
 * the events due, or one per client, never started) and held every SLO threshold, and its runs' throughputs are not erratic
 * (the stability verdict of a sweep's point). A step that breaks says why: errors, latency (an SLO
 * threshold failed), rate (the schedule was not kept), or unstable repeats.
 */
import type { RunResult, ThresholdResult } from '../metrics/run-result.ts';
import { round2 } from '../numbers.ts';
import { findStalls, judgeStability } from './stability.ts';
import { median } from './stats.ts';
import type { ThresholdSpec } from './threshold-spec.ts';
import { evaluateThresholds, limitText } from './thresholds.ts';

export const CAPACITY_SCHEMA = 'dbsmack/capacity@1';

/**
 * At most this share of the events due may never start for a step to have kept its rate (and never fewer
 * than one per client: the arrival each client has due at the deadline may find it busy).
 */
export const DROPPED_SHARE = 0.01;

export type BreakReason = 'errors' | 'latency' | 'rate' | 'unstable';

export interface CapacityRun {
  repeat: number;
  status: RunResult['status'];
  status_reason?: string;
  /** Events per second achieved, and the events due that never started. */
  eps: number;
  events: number;
  dropped: number;
  late: number;
  latency_ms: { p50: number; p90: number; p95: number; p99: number; max: number };
  thresholds: ThresholdResult[];
  /** Whether this run held: complete, the rate kept, every threshold held. */
  holds: boolean;
  why: BreakReason[];
}

export interface CapacityStep {
  step: number;
  phase: 'bracket' | 'bisect';
  rate: number;
  holds: boolean;
  /** Why it broke (empty when it held), and in words. */
  why: BreakReason[];
  reason: string;
  stability: string;
  stability_reason: string;
  eps_median: number;
  /** Medians over the runs of the event latency (from the schedule). */
  latency_ms: { p50: number; p90: number; p95: number; p99: number; max: number };
  runs: CapacityRun[];
}

export interface CapacityResult {
  schema: typeof CAPACITY_SCHEMA;
  status: 'complete' | 'partial';
  status_reason?: string;
  workload: { name: string; options: Record<string, unknown> };
  target: { driver: string; url: string; server_version: string };
  clients: number;
  started_at: string;
  /** The SLO thresholds as given. */
  slo: string[];
  /** The highest rate that held the SLO (events per second), or null when even `rate_min` broke. */
  rate: number | null;
  /** The step where it broke above `rate`: the lowest rate that broke, and why. Null when `rate_max` held. */
  broke: { rate: number; step: number; why: BreakReason[]; reason: string } | null;
  rate_min: number;
  rate_max: number;
  repeat: number;
  step_time_s: number | null;
  precision: number;
  steps: CapacityStep[];
}

/** Judge one run of a step against the SLO. */
export function judgeRun(r: RunResult, repeat: number, slo: readonly ThresholdSpec[]): CapacityRun {
  const thresholds = evaluateThresholds(r, slo);
  const why: BreakReason[] = [];
  const dropped = r.rate?.dropped ?? 0;
  const due = r.totals.events + dropped;
  if (r.status !== 'complete' || thresholds.some((t) => !t.ok && t.metric === 'errors')) why.push('errors');
  if (thresholds.some((t) => !t.ok && t.metric !== 'errors')) why.push('latency');
  if (due > 0 && dropped > Math.max(DROPPED_SHARE * due, r.clients)) why.push('rate');
  const l = r.events.latency_ms;
  return {
    repeat,
    status: r.status,
    ...(r.status_reason !== undefined ? { status_reason: r.status_reason } : {}),
    eps: r.totals.eps,
    events: r.totals.events,
    dropped,
    late: r.rate?.late ?? 0,
    latency_ms: { p50: l.p50, p90: l.p90, p95: l.p95, p99: l.p99, max: l.max },
    thresholds,
    holds: why.length === 0,
    why,
  };
}

const REASON_ORDER: BreakReason[] = ['errors', 'latency', 'rate', 'unstable'];

/** Judge a step from its runs (in repeat order). */
export function judgeStep(
  step: number,
  phase: CapacityStep['phase'],
  rate: number,
  runs: CapacityRun[],
  results: readonly RunResult[],
): CapacityStep {
  const verdict = judgeStability({
    qps: runs.map((r) => r.eps),
    stalls: results.map((r) => findStalls(r.intervals)),
  });
  const why = new Set<BreakReason>(runs.flatMap((r) => r.why));
  if (why.size === 0 && verdict.stability === 'erratic') why.add('unstable');
  const ordered = REASON_ORDER.filter((w) => why.has(w));
  const med = (f: (r: CapacityRun) => number): number => median(runs.map(f));
  return {
    step,
    phase,
    rate,
    holds: ordered.length === 0,
    why: ordered,
    reason: stepReason(rate, runs, ordered, verdict.reason),
    stability: verdict.stability,
    stability_reason: verdict.reason,
    eps_median: med((r) => r.eps),
    latency_ms: {
      p50: med((r) => r.latency_ms.p50),
      p90: med((r) => r.latency_ms.p90),
      p95: med((r) => r.latency_ms.p95),
      p99: med((r) => r.latency_ms.p99),
      max: med((r) => r.latency_ms.max),
    },
    runs,
  };
}

function stepReason(rate: number, runs: CapacityRun[], why: BreakReason[], stability: string): string {
  if (why.length === 0) return `held at ${rate}/s on ${runs.length} run${runs.length === 1 ? '' : 's'}`;
  const parts: string[] = [];
  const failing = runs.filter((r) => !r.holds);
  if (why.includes('errors')) {
    const r = failing.find((x) => x.why.includes('errors'));
    const t = r?.thresholds.find((x) => !x.ok && x.metric === 'errors');
    parts.push(
      t !== undefined
        ? `errors: ${t.expr} measured ${t.value ?? 'nothing'}${t.unit === '%' ? '%' : ''}`
        : `errors: run ${r?.repeat} ${r?.status}${r?.status_reason ? ` (${r.status_reason})` : ''}`,
    );
  }
  if (why.includes('latency')) {
    const r = failing.find((x) => x.why.includes('latency'));
    for (const t of r?.thresholds.filter((x) => !x.ok && x.metric !== 'errors') ?? []) {
      parts.push(
        `latency: ${t.metric}${t.statement ? ` of ${t.statement}` : ''} ${t.value ?? 'not measured'}${t.unit === 'ms' ? ' ms' : t.unit === '/s' ? '/s' : ''} against ${t.op} ${limitText(t)} (run ${r?.repeat})`,
      );
    }
  }
  if (why.includes('rate')) {
    const r = failing.find((x) => x.why.includes('rate'));
    if (r) {
      const due = r.events + r.dropped;
      parts.push(
        `rate not kept: ${r.dropped} of ${due} events due never started (${((100 * r.dropped) / due).toFixed(1)}%), ${r.eps}/s achieved (run ${r.repeat})`,
      );
    }
  }
  if (why.includes('unstable')) parts.push(`unstable repeats: ${stability}`);
  return parts.join('; ');
}

export interface SearchOptions {
  rateMin: number;
  rateMax: number;
  /** Stop bisecting when the rates that held and broke are within this share of the one that held. */
  precision: number;
  /** At most this many steps in all. */
  maxSteps: number;
}

/**
 * The search itself: `tryRate` runs and judges one step. Returns the steps in order, the highest rate that
 * held and the step that broke above it.
 */
export async function searchCapacity(
  o: SearchOptions,
  tryRate: (rate: number, step: number, phase: CapacityStep['phase']) => Promise<CapacityStep | undefined>,
): Promise<{
  steps: CapacityStep[];
  rate: number | null;
  broke: CapacityStep | undefined;
  stopped: boolean;
}> {
  const steps: CapacityStep[] = [];
  let lo: CapacityStep | undefined;
  let hi: CapacityStep | undefined;
  const run = async (rate: number, phase: CapacityStep['phase']): Promise<CapacityStep | undefined> => {
    const s = await tryRate(rate, steps.length + 1, phase);
    if (s !== undefined) steps.push(s);
    return s;
  };
  let rate = o.rateMin;
  // bracketing
  for (;;) {
    if (steps.length >= o.maxSteps) break;
    const s = await run(rate, 'bracket');
    if (s === undefined) return { steps, rate: lo?.rate ?? null, broke: hi, stopped: true };
    if (!s.holds) {
      hi = s;
      break;
    }
    lo = s;
    if (rate >= o.rateMax) break;
    rate = Math.min(rate * 2, o.rateMax);
  }
  // bisection
  while (lo !== undefined && hi !== undefined && steps.length < o.maxSteps) {
    if (hi.rate - lo.rate <= o.precision * lo.rate) break;
    const mid = roundRate((lo.rate + hi.rate) / 2);
    if (mid <= lo.rate || mid >= hi.rate) break;
    const s = await run(mid, 'bisect');
    if (s === undefined) return { steps, rate: lo.rate, broke: hi, stopped: true };
    if (s.holds) lo = s;
    else hi = s;
  }
  return { steps, rate: lo?.rate ?? null, broke: hi, stopped: false };
}

/** A rate as people write it: whole events per second above 10, two decimals below. */
export function roundRate(r: number): number {
  return r >= 10 ? Math.round(r) : round2(r);
}
