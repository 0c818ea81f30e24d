import { countByKind } from './kinds.ts';
import type { RunResult, SysbenchCounts } from './run-result.ts';

/**
 * The `sysbench` block of a result; results written before it existed get one derived from their types
 * (without 0-row writes, which they did not record, and fairness from client busy time).
 */
export function sysbenchCountsOf(r: RunResult): SysbenchCounts {
  if (r.sysbench) return r.sysbench;
  const { read, write, other } = countByKind(
    Object.values(r.types).map((t) => ({ kind: t.kind, count: t.count, zero: t.zero_rows })),
  );
  const ev = r.client_stats.map((c) => c.events);
  const avg = ev.length ? ev.reduce((a, b) => a + b, 0) / ev.length : 0;
  const e = r.events.latency_ms;
  const byCode: Record<string, number> = {};
  for (const x of r.errors) {
    if (x.ignored && x.kind !== 'reconnect') byCode[x.code] = (byCode[x.code] ?? 0) + x.count;
  }
  return {
    read,
    write,
    other,
    total: read + write + other,
    transactions: r.events.count,
    ignored_errors: Object.values(byCode).reduce((a, n) => a + n, 0),
    ignored_errors_by_code: byCode,
    reconnects: r.totals.reconnects,
    percentile: 95,
    latency_ms: { min: e.min, avg: e.mean, max: e.max, sum: e.mean * r.events.count, percentile: e.p95 },
    fairness: { events_avg: avg, events_stddev: 0, time_avg: 0, time_stddev: 0 },
    report_interval: 0,
  };
}
