/**
 * `--format sysbench`: sysbench 1.0.20's report, line for line (`db_driver.c db_report_cumulative`,
 * `db_report_intermediate`), so that tools that parse sysbench's output parse dbsmack's. Interval lines are
 * printed when `--report-interval` was given, as sysbench does.
 */
import type { IntervalPoint, RunResult } from '../metrics/run-result.ts';
import { sysbenchCountsOf } from '../metrics/sysbench-view.ts';
import { VERSION } from '../version.ts';

const f2 = (v: number): string => v.toFixed(2);
const col = (label: string, width: number): string => label.padEnd(width);

/** One `--report-interval` line (and, under --rate, its queue line). */
export function sysbenchIntervalLines(p: IntervalPoint, threads: number, percentile: number): string[] {
  const d = p.dur > 0 ? p.dur : 1;
  const t = Math.round(p.t);
  const pct = percentile === 95 ? (p.event_percentile_ms ?? p.event_p95_ms) : (p.event_percentile_ms ?? 0);
  const lines = [
    `[ ${t}s ] thds: ${threads} tps: ${f2(p.events / d)} qps: ${f2(p.queries / d)} ` +
      `(r/w/o: ${f2(p.reads / d)}/${f2(p.writes / d)}/${f2(p.others / d)}) ` +
      `lat (ms,${Math.round(percentile)}%): ${f2(pct)} err/s: ${f2((p.ignored_errors ?? p.errors) / d)} ` +
      `reconn/s: ${f2(p.reconnects / d)}`,
  ];
  if (p.rate_queue !== undefined) {
    lines.push(`[ ${t}s ] queue length: ${p.rate_queue}, concurrency: ${p.rate_concurrency ?? 0}`);
  }
  return lines;
}

/** What sysbench prints before its threads start: known before the run, so it can be printed then. */
export interface SysbenchHead {
  workload: string;
  url: string;
  threads: number;
  /** `--rate`, events per second. */
  rate?: number | undefined;
  /** `--report-interval` when given, else 0. */
  reportInterval: number;
}

/** The report's lines up to "Threads started!" and the blank line after it. */
export function sysbenchHeadLines(h: SysbenchHead): string[] {
  const out = [`sysbench 1.0.20 compatible report (dbsmack ${VERSION}, ${h.workload} on ${h.url})`, ''];
  out.push('Running the test with following options:');
  out.push(`Number of threads: ${h.threads}`);
  if (h.rate !== undefined) out.push(`Target transaction rate: ${h.rate}/sec`);
  if (h.reportInterval > 0) out.push(`Report intermediate results every ${h.reportInterval} second(s)`);
  out.push('Initializing random number generator from current time', '', '');
  out.push('Initializing worker threads...', '', 'Threads started!', '');
  return out;
}

/**
 * The whole report; with `liveIntervals` (the head and interval lines were printed live, as sysbench does
 * on a terminal) only what follows them.
 */
export function renderSysbench(r: RunResult, o: { liveIntervals?: boolean } = {}): string {
  const s = sysbenchCountsOf(r);
  const el = r.elapsed_s > 0 ? r.elapsed_s : 1;
  const out: string[] = o.liveIntervals
    ? []
    : sysbenchHeadLines({
        workload: r.workload.name,
        url: r.target.url,
        threads: r.clients,
        rate: r.rate?.target,
        reportInterval: s.report_interval,
      });
  if (s.report_interval > 0 && !o.liveIntervals) {
    // sysbench prints whole intervals only; the last, partial one is in the final report
    for (const p of r.intervals) {
      if (p.dur >= s.report_interval - 1e-6) out.push(...sysbenchIntervalLines(p, r.clients, s.percentile));
    }
  }
  const rate = (n: number): string => `${String(n).padEnd(6)} (${f2(n / el)} per sec.)`;
  out.push('SQL statistics:');
  out.push('    queries performed:');
  out.push(`${col('        read:', 41)}${s.read}`);
  out.push(`${col('        write:', 41)}${s.write}`);
  out.push(`${col('        other:', 41)}${s.other}`);
  out.push(`${col('        total:', 41)}${s.total}`);
  out.push(`${col('    transactions:', 41)}${rate(s.transactions)}`);
  out.push(`${col('    queries:', 41)}${rate(s.total)}`);
  out.push(`${col('    ignored errors:', 41)}${rate(s.ignored_errors)}`);
  out.push(`${col('    reconnects:', 41)}${rate(s.reconnects)}`);
  out.push('');
  out.push('General statistics:');
  out.push(`${col('    total time:', 41)}${r.elapsed_s.toFixed(4)}s`);
  out.push(`${col('    total number of events:', 41)}${s.transactions}`);
  out.push('');
  const l = s.latency_ms;
  out.push('Latency (ms):');
  out.push(`         min: ${f2(l.min).padStart(39)}`);
  out.push(`         avg: ${f2(l.avg).padStart(39)}`);
  out.push(`         max: ${f2(l.max).padStart(39)}`);
  if (s.percentile > 0) {
    out.push(
      `        ${String(Math.round(s.percentile)).padStart(3)}th percentile: ${f2(l.percentile).padStart(27)}`,
    );
  } else {
    out.push('         percentile stats:               disabled');
  }
  out.push(`         sum: ${f2(l.sum).padStart(39)}`);
  out.push('');
  const fa = s.fairness;
  out.push('Threads fairness:');
  out.push(`${col('    events (avg/stddev):', 35)}${fa.events_avg.toFixed(4)}/${f2(fa.events_stddev)}`);
  out.push(`${col('    execution time (avg/stddev):', 35)}${fa.time_avg.toFixed(4)}/${f2(fa.time_stddev)}`);
  out.push('');
  if (r.status !== 'complete' && r.status_reason) out.push(`FATAL: ${r.status_reason}`);
  return `${out.join('\n')}\n`;
}
