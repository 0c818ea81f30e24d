/**
 * A threshold (`--threshold`, and `capacity --slo`): `METRIC[{statement=NAME,stage=N}] OP VALUE[UNIT]`,
 * parsed into a spec. The parser lives in the CLI (its errors name the column); this is the shape both
 * the evaluation after a run and the live check of `--threshold-abort` read.
 */
export type ThresholdMetric =
  | 'p50'
  | 'p90'
  | 'p95'
  | 'p99'
  | 'p999'
  | 'min'
  | 'mean'
  | 'max'
  | 'errors'
  | 'qps'
  | 'tps';

export const LATENCY_METRICS: readonly ThresholdMetric[] = [
  'p50',
  'p90',
  'p95',
  'p99',
  'p999',
  'min',
  'mean',
  'max',
];

export interface ThresholdSpec {
  /** As given (spaces dropped). */
  expr: string;
  metric: ThresholdMetric;
  statement?: string;
  /** From 1. */
  stage?: number;
  op: '<' | '<=' | '>' | '>=';
  /** In `unit`: ms for latencies, % or a count for errors, per second for qps and tps. */
  limit: number;
  unit: 'ms' | '%' | 'count' | '/s';
}

export function isLatency(m: ThresholdMetric): boolean {
  return LATENCY_METRICS.includes(m);
}

/** The percentile of a latency metric, 0 for min/mean/max. */
export function percentileOf(m: ThresholdMetric): number {
  return m === 'p999' ? 99.9 : m.startsWith('p') ? Number(m.slice(1)) : 0;
}

export function holds(value: number, op: ThresholdSpec['op'], limit: number): boolean {
  return op === '<'
    ? value < limit
    : op === '<='
      ? value <= limit
      : op === '>'
        ? value > limit
        : value >= limit;
}
