/**
 * `--format pgbench` and `dbsmack pgbench`'s output: pgbench 15's final report, line for line
 * (`printResults`), and its `-P` progress lines, so that tools that read pgbench's output read dbsmack's.
 * A run that was not a pgbench script gets the same layout from its events and statement types.
 */
import { type PgbenchFigures, triesFigure } from '../metrics/pgbench-figures.ts';
import type { IntervalPoint, RunResult } from '../metrics/run-result.ts';
import { VERSION } from '../version.ts';

/** `%.3f` etc. as PostgreSQL's snprintf prints them: NaN and Infinity spelled out. */
function fx(v: number, d: number): string {
  if (Number.isNaN(v)) return 'NaN';
  if (!Number.isFinite(v)) return v > 0 ? 'Infinity' : '-Infinity';
  return v.toFixed(d);
}
const pct = (part: number, total: number): string => `${fx((100 * part) / total, 3)}%`;

/** The figures of a run that was not a pgbench script: one script, its statement types as commands. */
function genericFigures(r: RunResult): PgbenchFigures {
  const failed = r.client_stats.reduce((a, c) => a + c.errors, 0);
  const processed = r.events.count;
  const total = processed + failed;
  return {
    transaction_type: r.workload.name,
    scale: 1,
    query_mode: 'prepared',
    threads: r.workers,
    max_tries: triesFigure(r.limits.max_tries),
    ...(r.limits.rounds !== undefined ? { transactions_per_client: r.limits.rounds } : {}),
    ...(r.limits.rounds === undefined && r.limits.time_s !== undefined
      ? { duration_s: r.limits.time_s }
      : {}),
    processed,
    failed,
    serialization_failures: failed,
    deadlock_failures: 0,
    retried: 0,
    retries: r.totals.retries,
    latency_ms: { average: r.events.latency_ms.mean, stddev: r.events.latency_ms.stddev },
    connection_ms: { initial: r.connect_ms.max },
    tps: r.elapsed_s > 0 ? processed / r.elapsed_s : 0,
    failures_detailed: false,
    per_command: true,
    per_script: false,
    aborted_clients: r.client_stats.filter((c) => c.aborted).length,
    scripts: [
      {
        name: r.workload.name,
        weight: 1,
        transactions: total,
        processed,
        failed,
        serialization_failures: failed,
        deadlock_failures: 0,
        retried: 0,
        retries: r.totals.retries,
        latency_ms: { average: r.events.latency_ms.mean, stddev: r.events.latency_ms.stddev },
        commands: Object.entries(r.types).map(([name, t]) => ({
          text: name,
          type: name,
          latency_ms: t.latency_ms.mean,
          failures: t.errors,
          retries: 0,
        })),
      },
    ],
  };
}

/** The first line pgbench prints: its version, and the server's. */
export function pgbenchVersionLine(serverVersion: string): string {
  return `pgbench (dbsmack ${VERSION}, server ${serverVersion.replace(/^PostgreSQL /, '')})`;
}

export function renderPgbench(r: RunResult): string {
  const f = r.pgbench ?? genericFigures(r);
  // pgbench prints its -P progress lines on stderr, as they come; stdout has the report only
  const out: string[] = [pgbenchVersionLine(r.target.server_version), ...pgbenchReportLines(r, f)];
  return `${out.join('\n')}\n`;
}

/** pgbench's printResults. */
export function pgbenchReportLines(r: RunResult, f: PgbenchFigures): string[] {
  const out: string[] = [];
  const failures = f.failed;
  const skipped = f.skipped ?? 0;
  // as pgbench's total_cnt: the percentages are of every transaction, skipped ones too
  const total = f.processed + failures + skipped;
  out.push(`transaction type: ${f.transaction_type}`);
  out.push(`scaling factor: ${f.scale}`);
  if (f.partition !== undefined)
    out.push(`partition method: ${f.partition.method}`, `partitions: ${f.partition.partitions}`);
  out.push(`query mode: ${f.query_mode}`);
  out.push(`number of clients: ${r.clients}`);
  out.push(`number of threads: ${f.threads}`);
  if (f.max_tries > 0) out.push(`maximum number of tries: ${f.max_tries}`);
  if (f.duration_s === undefined) {
    const per = f.transactions_per_client ?? 0;
    out.push(`number of transactions per client: ${per}`);
    out.push(`number of transactions actually processed: ${f.processed}/${per * r.clients}`);
  } else {
    out.push(`duration: ${f.duration_s} s`);
    out.push(`number of transactions actually processed: ${f.processed}`);
  }
  out.push(`number of failed transactions: ${failures} (${pct(failures, total)})`);
  if (f.failures_detailed) {
    out.push(
      `number of serialization failures: ${f.serialization_failures} (${pct(f.serialization_failures, total)})`,
    );
    out.push(`number of deadlock failures: ${f.deadlock_failures} (${pct(f.deadlock_failures, total)})`);
  }
  if (f.max_tries !== 1) {
    out.push(`number of transactions retried: ${f.retried} (${pct(f.retried, total)})`);
    out.push(`total number of retries: ${f.retries}`);
  }
  // pgbench 15 prints the counts above (NaN% when none ended) and stops when none went through or was skipped
  if (f.processed + skipped <= 0) return out;
  if (r.rate !== undefined && f.latency_limit_ms !== undefined) {
    out.push(`number of transactions skipped: ${skipped} (${pct(skipped, total)})`);
  }
  if (f.latency_limit_ms !== undefined) {
    const late = f.late ?? 0;
    out.push(
      `number of transactions above the ${fx(f.latency_limit_ms, 1)} ms latency limit: ${late}/${f.processed} (${f.processed > 0 ? pct(late, f.processed) : '0.000%'})`,
    );
  }
  if (f.latency_ms.stddev !== undefined) {
    // pgbench prints its latency statistics only when some transaction went through
    if (f.processed > 0) {
      out.push(`latency average = ${fx(f.latency_ms.average, 3)} ms`);
      out.push(`latency stddev = ${fx(f.latency_ms.stddev, 3)} ms`);
    }
  } else {
    out.push(
      `latency average = ${fx(f.latency_ms.average, 3)} ms${failures > 0 ? ' (including failures)' : ''}`,
    );
  }
  if (r.rate !== undefined) {
    // pgbench's average is over the transactions that went through: NaN when none did
    const avg = f.processed > 0 ? r.rate.lag_ms.mean : Number.NaN;
    const max = f.processed > 0 ? r.rate.lag_ms.max : 0;
    out.push(`rate limit schedule lag: avg ${fx(avg, 3)} (max ${fx(max, 3)}) ms`);
  }
  if (f.connection_ms.average !== undefined) {
    out.push(`average connection time = ${fx(f.connection_ms.average, 3)} ms`);
    out.push(`tps = ${fx(f.tps, 6)} (including reconnection times)`);
  } else {
    out.push(`initial connection time = ${fx(f.connection_ms.initial ?? 0, 3)} ms`);
    out.push(`tps = ${fx(f.tps, 6)} (without initial connection time)`);
  }
  if (!f.per_script && !f.per_command) return out;
  const totalWeight = f.scripts.reduce((a, s) => a + s.weight, 0);
  f.scripts.forEach((s, i) => {
    if (f.per_script) {
      out.push(`SQL script ${i + 1}: ${s.name}`);
      out.push(` - weight: ${s.weight} (targets ${fx((100 * s.weight) / totalWeight, 1)}% of total)`);
      out.push(
        ` - ${s.processed} transactions (${fx((100 * s.processed) / f.processed, 1)}% of total, tps = ${fx(r.elapsed_s > 0 ? s.processed / r.elapsed_s : 0, 6)})`,
      );
      out.push(` - number of failed transactions: ${s.failed} (${pct(s.failed, s.transactions)})`);
      if (f.failures_detailed) {
        out.push(
          ` - number of serialization failures: ${s.serialization_failures} (${pct(s.serialization_failures, s.transactions)})`,
        );
        out.push(
          ` - number of deadlock failures: ${s.deadlock_failures} (${pct(s.deadlock_failures, s.transactions)})`,
        );
      }
      if (f.max_tries !== 1) {
        out.push(` - number of transactions retried: ${s.retried} (${pct(s.retried, s.transactions)})`);
        out.push(` - total number of retries: ${s.retries}`);
      }
      if (s.latency_ms !== undefined) {
        out.push(` - latency average = ${fx(s.latency_ms.average, 3)} ms`);
        out.push(` - latency stddev = ${fx(s.latency_ms.stddev, 3)} ms`);
      }
    }
    if (f.per_command) {
      out.push(
        `${f.per_script ? ' - ' : ''}statement latencies in milliseconds${f.max_tries === 1 ? ' and failures' : ', failures and retries'}:`,
      );
      for (const c of s.commands) {
        const lat = fx(c.latency_ms, 3).padStart(11);
        const fails = String(c.failures).padStart(10);
        out.push(
          f.max_tries === 1
            ? `   ${lat}  ${fails}  ${c.text}`
            : `   ${lat}  ${fails}  ${String(c.retries).padStart(10)}  ${c.text}`,
        );
      }
    }
  });
  return out;
}

/**
 * One `-P` line: `progress: 5.0 s, 1234.5 tps, lat 0.810 ms stddev 0.123, 0 failed`; under -R the mean
 * schedule lag follows, and under -R with -L (`skips`) the transactions skipped.
 */
export function pgbenchProgressLine(p: IntervalPoint, maxTries: number, rate?: { skips: boolean }): string {
  const d = p.dur > 0 ? p.dur : 1;
  let failed = 0;
  let retried = 0;
  let retries = 0;
  for (const [k, v] of Object.entries(p.counters ?? {})) {
    if (k.startsWith('pgbench.failed.')) failed += v;
    else if (k.startsWith('pgbench.retried.')) retried += v;
    else if (k.startsWith('pgbench.retries.')) retries += v;
  }
  let line = `progress: ${fx(p.t, 1)} s, ${fx(p.events / d, 1)} tps, lat ${fx(p.event_mean_ms ?? 0, 3)} ms stddev ${fx(p.event_stddev_ms ?? 0, 3)}, ${failed} failed`;
  if (rate !== undefined) {
    line += `, lag ${fx(p.rate_lag_ms ?? 0, 3)} ms`;
    if (rate.skips) line += `, ${p.rate_skipped ?? 0} skipped`;
  }
  if (maxTries !== 1) line += `, ${retried} retried, ${retries} retries`;
  return line;
}
