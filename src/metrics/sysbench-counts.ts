/**
 * sysbench's counters, computed from the engine's outcome the way sysbench 1.0.20 counts (`db_driver.c`):
 * read, write and other by `countByKind` (kinds.ts: an UPDATE or DELETE that matched nothing is other).
 * Transactions are events; ignored errors are the errors after which the event was re-run or skipped;
 * latency min/avg/max/sum and the percentile are per event; fairness is over clients.
 */
import { meanOf, percentileMs, summarize } from './histogram.ts';
import { countByKind } from './kinds.ts';
import type { EngineOutcome } from './outcome.ts';
import type { RateResult, SysbenchCounts } from './run-result.ts';

const r = (v: number, d = 4): number => Math.round(v * 10 ** d) / 10 ** d;

function meanStddev(xs: number[]): [number, number] {
  if (xs.length === 0) return [0, 0];
  const avg = xs.reduce((a, b) => a + b, 0) / xs.length;
  const sd = Math.sqrt(xs.reduce((a, x) => a + (x - avg) ** 2, 0) / xs.length);
  return [avg, sd];
}

export function sysbenchCounts(o: EngineOutcome): SysbenchCounts {
  const { read, write, other } = countByKind(o.types.values());
  const byCode: Record<string, number> = {};
  let ignored = 0;
  for (const e of o.errors) {
    if (!e.ignored || e.kind === 'reconnect') continue;
    ignored += e.count;
    byCode[e.code] = (byCode[e.code] ?? 0) + e.count;
  }
  const pct = o.plan.percentile ?? 95;
  const h = o.events.hist;
  const n = h.totalCount;
  const mean = meanOf(h);
  const [eAvg, eSd] = meanStddev(o.clientSummaries.map((c) => c.events));
  const [tAvg, tSd] = meanStddev(o.clientSummaries.map((c) => c.busyUs / 1e6));
  return {
    read,
    write,
    other,
    total: read + write + other,
    transactions: o.events.count,
    ignored_errors: ignored,
    ignored_errors_by_code: byCode,
    reconnects: o.reconnects,
    percentile: pct,
    latency_ms: {
      min: n > 0 ? r(h.minNonZeroValue / 1000, 3) : 0,
      avg: n > 0 ? r(mean / 1000, 3) : 0,
      max: n > 0 ? r(h.maxValue / 1000, 3) : 0,
      sum: n > 0 ? r((mean * n) / 1000, 3) : 0,
      percentile: pct > 0 ? percentileMs(h, pct) : 0,
    },
    fairness: { events_avg: r(eAvg), events_stddev: r(eSd), time_avg: r(tAvg), time_stddev: r(tSd) },
    report_interval: o.plan.reportIntervalGiven ? o.plan.reportIntervalS : 0,
  };
}

export function rateResult(o: EngineOutcome): RateResult | undefined {
  const plan = o.plan.rate;
  if (plan === undefined || o.rate === undefined) return undefined;
  return {
    target: plan.perSec,
    shape: plan.shape,
    lag_ms: summarize(o.rate.lagHist),
    late: o.rate.late,
    late_after_ms: plan.lateUs / 1000,
    dropped: o.rate.dropped,
    ...(plan.skipLateUs !== undefined
      ? { skipped: o.rate.skipped, skip_after_ms: plan.skipLateUs / 1000 }
      : {}),
    ...(Number.isFinite(plan.maxLagUs) ? { max_lag_s: plan.maxLagUs / 1e6 } : {}),
  };
}
