/**
 * pgbench's figures of a run (the numbers of its final report), computed from the RunResult in the main
 * thread: totals from the engine, per-script and per-command figures from the workload's counters and
 * timed steps. Stored in the RunResult as `pgbench`, so that `--format pgbench`, `show` and `report`
 * print pgbench's report of a stored run too.
 */
import {
  type PgbenchFigures,
  type PgbenchScriptFigures,
  triesFigure,
} from '../../metrics/pgbench-figures.ts';
import type { RunResult } from '../../metrics/run-result.ts';
import { round3 } from '../../numbers.ts';
import { type FailureKind, K } from './run-script.ts';
import type { QueryMode, Script } from './script.ts';

export interface FiguresInput {
  scripts: Script[];
  scale: number;
  partition?: { method: string; partitions: number };
  mode: QueryMode;
  threads: number;
  perCommand: boolean;
  failuresDetailed: boolean;
  connect: boolean;
  /** -P, -R or -L given: pgbench then measures each transaction and prints the stddev. */
  detailed: boolean;
  latencyLimitMs: number;
}

export function pgbenchFigures(r: RunResult, inp: FiguresInput): PgbenchFigures {
  const c = r.counters ?? {};
  const n = (k: string): number => c[k] ?? 0;
  const fail = (s: number, k: FailureKind): number => n(K.failed(s, k));
  const scripts: PgbenchScriptFigures[] = inp.scripts.map((s, i) => {
    // one script is timed as the events are
    const step = inp.scripts.length === 1 ? r.events : r.steps?.[K.script(i)];
    const processed = step?.count ?? 0;
    const ser = fail(i, 'serialization');
    const dl = fail(i, 'deadlock');
    const figures: PgbenchScriptFigures = {
      name: s.desc,
      weight: s.weight,
      transactions: processed + ser + dl,
      processed,
      failed: ser + dl,
      serialization_failures: ser,
      deadlock_failures: dl,
      retried: n(K.retried(i)),
      retries: n(K.retries(i)),
      commands: s.commands.map((cmd) => {
        const timed = cmd.kind === 'sql' ? r.types[cmd.type] : r.steps?.[cmd.type];
        return {
          text: cmd.firstLine,
          type: cmd.type,
          latency_ms: timed !== undefined && timed.count > 0 ? timed.latency_ms.mean : 0,
          failures: n(K.cmdFailures(cmd.type)),
          retries: n(K.cmdRetries(cmd.type)),
        };
      }),
    };
    if (step !== undefined && step.count > 0) {
      figures.latency_ms = { average: step.latency_ms.mean, stddev: step.latency_ms.stddev };
    }
    return figures;
  });
  const sum = (f: (s: PgbenchScriptFigures) => number): number => scripts.reduce((a, s) => a + f(s), 0);
  const processed = sum((s) => s.processed);
  const failed = sum((s) => s.failed);
  const total = processed + failed;
  const el = r.elapsed_s;
  const perScript = inp.scripts.length > 1;
  const latency: PgbenchFigures['latency_ms'] = inp.detailed
    ? { average: r.events.latency_ms.mean, stddev: r.events.latency_ms.stddev }
    : { average: total > 0 ? round3((el * 1000 * r.clients) / total) : 0 };
  const connectTotal =
    r.client_stats.reduce((a, s) => a + s.connect_ms, 0) + (r.event_connects?.total_ms ?? 0);
  const f: PgbenchFigures = {
    transaction_type: inp.scripts.length === 1 ? (inp.scripts[0] as Script).desc : 'multiple scripts',
    scale: inp.scale,
    query_mode: inp.mode,
    threads: inp.threads > 0 ? Math.min(inp.threads, r.clients) : r.workers,
    max_tries: triesFigure(r.limits.max_tries),
    processed,
    failed,
    serialization_failures: sum((s) => s.serialization_failures),
    deadlock_failures: sum((s) => s.deadlock_failures),
    retried: sum((s) => s.retried),
    retries: sum((s) => s.retries),
    latency_ms: latency,
    connection_ms: inp.connect
      ? { average: total > 0 ? round3(connectTotal / total) : 0 }
      : { initial: r.connect_ms.max },
    tps: el > 0 ? processed / el : 0,
    failures_detailed: inp.failuresDetailed,
    per_command: inp.perCommand,
    per_script: perScript,
    aborted_clients: r.client_stats.filter((s) => s.aborted).length,
    scripts,
  };
  if (inp.partition !== undefined) f.partition = inp.partition;
  if (r.limits.rounds !== undefined) f.transactions_per_client = r.limits.rounds;
  else if (r.limits.time_s !== undefined) f.duration_s = r.limits.time_s;
  if (inp.latencyLimitMs > 0) {
    f.latency_limit_ms = inp.latencyLimitMs;
    f.late = n(K.late);
  }
  if (r.rate?.skipped !== undefined) f.skipped = r.rate.skipped;
  return f;
}
