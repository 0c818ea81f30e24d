import type { IntervalPoint, RunResult, StageResult, ThresholdResult } from '../metrics/run-result.ts';
import { fmtMs, fmtRate, latencyCells, table } from './format.ts';

/** Where the clients ran: "2 workers", or with the main thread among the load threads, say so. */
function loadThreads(r: RunResult): string {
  const w = r.workers;
  if (r.main_thread !== true) return `${w} worker${w === 1 ? '' : 's'}`;
  return w === 1 ? 'the main thread' : `the main thread and ${w - 1} worker${w === 2 ? '' : 's'}`;
}

/** The default human-readable summary of one run. */
export function renderRunText(r: RunResult): string {
  const out: string[] = [];
  const limit =
    r.limits.events !== undefined
      ? `${r.limits.events} events`
      : r.limits.rounds !== undefined
        ? `${r.limits.rounds} rounds per client`
        : `${r.limits.time_s ?? 0} s`;
  const via = r.target.connector !== undefined ? `, connector ${r.target.connector}` : '';
  out.push(
    `dbsmack ${r.workload.name} on ${r.target.url} (${r.target.server_version || r.target.driver}${via})`,
  );
  out.push(
    `${r.clients} client${r.clients === 1 ? '' : 's'} in ${loadThreads(r)}, ` +
      `limit ${limit}${r.limits.warmup_s > 0 ? `, warm-up ${r.limits.warmup_s} s` : ''}, ` +
      `measured ${r.elapsed_s.toFixed(3)} s, status ${r.status}`,
  );
  if (r.status !== 'complete' && r.status_reason) {
    out.push(`${r.status.toUpperCase()}: ${r.status_reason}; the figures below cover what was measured.`);
  }
  out.push('');
  const rows = Object.entries(r.types).map(([name, t]) => [
    name,
    String(t.count),
    String(t.errors),
    fmtRate(t.qps),
    ...latencyCells(t.latency_ms),
  ]);
  const e = r.events;
  rows.push([
    'event',
    String(e.count),
    String(r.totals.errors),
    fmtRate(r.totals.eps),
    ...latencyCells(e.latency_ms),
  ]);
  out.push(
    table(['statement', 'count', 'errors', 'per sec', 'min', 'mean', 'p50', 'p95', 'p99', 'max ms'], rows),
  );
  out.push('');
  const t = r.totals;
  out.push(
    `totals: ${t.queries} queries (${fmtRate(t.qps)}/s), ${t.events} events (${fmtRate(t.eps)}/s), ` +
      `${t.errors} errors, ${t.retries} retries, ${t.reconnects} reconnects`,
  );
  if (r.rate) {
    const l = r.rate.lag_ms;
    out.push(
      `rate: target ${r.rate.target}/s (${r.rate.shape}); latencies from the schedule; schedule lag ` +
        `mean ${fmtMs(l.mean)} / p99 ${fmtMs(l.p99)} / max ${fmtMs(l.max)} ms; ` +
        `${r.rate.late} late (> ${r.rate.late_after_ms} ms), ${r.rate.dropped} dropped` +
        (r.rate.skipped !== undefined ? `, ${r.rate.skipped} skipped (> ${r.rate.skip_after_ms} ms)` : ''),
    );
    for (const st of r.rate.stalls ?? []) {
      out.push(
        `stall at ${st.start_s} s for ${st.length_s.toFixed(1)} s, ${st.delayed} events delayed: ${st.reason}`,
      );
    }
  }
  const c = r.connect_ms;
  if (c.count > 0) {
    out.push(
      `connect: ${c.count} connection${c.count === 1 ? '' : 's'}, min ${fmtMs(c.min)} / mean ${fmtMs(c.mean)} / max ${fmtMs(c.max)} ms`,
    );
  }
  if (r.warmup) out.push(`warm-up: ${r.warmup.events} events, ${r.warmup.queries} queries (not counted)`);
  out.push(
    `dbsmack CPU: ${r.client_cpu.us_per_query.toFixed(1)} µs per query (user ${r.client_cpu.user_s.toFixed(2)} s, system ${r.client_cpu.system_s.toFixed(2)} s)${ioNote(r)}`,
  );
  if (r.errors.length > 0) {
    out.push('');
    out.push('errors:');
    for (const er of r.errors) {
      const what =
        er.kind === 'retryable'
          ? 'retried'
          : er.kind === 'reconnect'
            ? 'reconnected'
            : er.ignored
              ? 'ignored'
              : 'fatal';
      out.push(`  ${String(er.count).padStart(8)}  ${er.code} (${what}): ${er.message}`);
    }
  }
  const aborted = r.client_stats.filter((s) => s.aborted).length;
  if (aborted > 0) out.push(`aborted clients: ${aborted} of ${r.clients}`);
  if (r.stages !== undefined && r.stages.length > 0) out.push('', ...stageLines(r.stages));
  if (r.thresholds !== undefined && r.thresholds.length > 0) out.push('', ...thresholdLines(r.thresholds));
  return `${out.join('\n')}\n`;
}

/** The stages of a staged run: clients or rate, time span, throughput, event latency. */
export function stageLines(stages: readonly StageResult[]): string[] {
  const rows = stages.map((s) => [
    String(s.stage),
    s.clients !== undefined
      ? `${s.clients} clients`
      : s.rate_from !== undefined && s.rate_from !== s.rate
        ? `${s.rate_from}→${s.rate ?? 0}/s`
        : `${s.rate ?? 0}/s`,
    `${s.start_s}–${s.end_s} s`,
    fmtRate(s.qps),
    fmtRate(s.eps),
    String(s.errors),
    ...latencyCells(s.latency_ms).slice(2),
  ]);
  return [
    'stages:',
    table(['stage', 'load', 'time', 'q/s', 'events/s', 'errors', 'p50', 'p95', 'p99', 'max ms'], rows),
  ];
}

/** Each threshold with its value and verdict. */
export function thresholdLines(ts: readonly ThresholdResult[]): string[] {
  const failed = ts.filter((t) => !t.ok).length;
  const out = [`thresholds: ${failed === 0 ? `all ${ts.length} held` : `${failed} of ${ts.length} failed`}`];
  for (const t of ts) {
    const v =
      t.value === null
        ? (t.note ?? 'not measured')
        : `${t.value}${t.unit === 'ms' ? ' ms' : t.unit === '%' ? '%' : t.unit === '/s' ? '/s' : ''}`;
    const note = t.value !== null && t.note ? ` (${t.note})` : '';
    out.push(`  ${t.ok ? 'ok    ' : 'FAILED'}  ${t.expr.padEnd(24)}  ${v}${note}`);
  }
  return out;
}

/** One progress line per interval, sysbench-style, for stderr. */
export function renderIntervalLine(p: IntervalPoint, clients: number): string {
  const d = p.dur > 0 ? p.dur : 1;
  return (
    `[ ${p.t.toFixed(p.t % 1 === 0 ? 0 : 1)}s ] clients: ${clients} eps: ${fmtRate(p.eps)} qps: ${fmtRate(p.qps)} ` +
    `(r/w/o: ${fmtRate(p.reads / d)}/${fmtRate(p.writes / d)}/${fmtRate(p.others / d)}) ` +
    `lat (ms,95%): ${fmtMs(p.p95_ms)} err/s: ${fmtRate(p.errors / d)} reconn/s: ${fmtRate(p.reconnects / d)}`
  );
}

/**
 * How the load connections did their I/O, after the CPU figure it explains: the native I/O core (and the
 * share of the events it ran in statement batches) or the JavaScript event loop. Nothing for SQLite.
 */
function ioNote(r: RunResult): string {
  if (r.target.driver === 'sqlite') return '';
  if (r.target.io === 'js') return '; JavaScript I/O';
  if (r.target.io !== 'native') return '';
  const events = r.client_stats.reduce((n, c) => n + c.events, 0);
  const batched = r.client_stats.reduce((n, c) => n + (c.batched ?? 0), 0);
  const native =
    r.target.shared_io_thread === true ? '; native I/O with a shared I/O thread' : '; native I/O';
  if (events === 0) return native;
  return batched === 0
    ? `${native}, one statement at a time`
    : `${native}, ${batched === events ? 100 : Math.min(99, Math.round((100 * batched) / events))}% of events in statement batches`;
}
