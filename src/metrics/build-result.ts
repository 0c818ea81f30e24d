import { byName } from '../collate.ts';
import type { Target } from '../driver/types.ts';
import { round, round2 } from '../numbers.ts';
import { encodeHistogram, meanOf, summarize } from './histogram.ts';
import type { EngineOutcome, StageAccumulator, StuckLoad } from './outcome.ts';
import {
  type EnvInfo,
  RUN_SCHEMA,
  type RunResult,
  type RunStatus,
  type StageResult,
  type TypeResult,
} from './run-result.ts';
import { rateResult, sysbenchCounts } from './sysbench-counts.ts';

export interface ResultContext {
  workloadName: string;
  options: Record<string, unknown>;
  target: Target;
  connector?: string;
  io?: 'native' | 'js';
  label?: string;
  /** The machine the client ran on (`captureEnv`, read by the caller: the builder does no I/O). */
  env: EnvInfo;
}

/** Turn the engine's merged outcome into the versioned RunResult document. */
export function buildRunResult(o: EngineOutcome, ctx: ResultContext): RunResult {
  const el = o.elapsedS;
  const types: Record<string, TypeResult> = {};
  let queries = 0;
  for (const [name, t] of [...o.types].sort((a, b) => byName(a[0], b[0]))) {
    if (t.count === 0 && t.errors === 0) continue;
    types[name] = {
      kind: t.kind,
      count: t.count,
      errors: t.errors,
      qps: el > 0 ? round2(t.count / el) : 0,
      ...(t.zero > 0 ? { zero_rows: t.zero } : {}),
      latency_ms: summarize(t.hist),
      histogram: encodeHistogram(t.hist),
    };
    queries += t.count;
  }
  const errors = o.errors.reduce((a, e) => a + e.count, 0);
  const aborted = o.clientSummaries.filter((c) => c.aborted);
  let status: RunStatus = 'complete';
  let reason: string | undefined;
  if (o.stopReason === 'interrupted') {
    status = 'partial';
    reason = 'interrupted by a signal';
  } else if (o.stopReason === 'fatal') {
    status = queries > 0 || o.events.count > 0 ? 'partial' : 'failed';
    reason = `stopped by an error: ${o.fatal?.code}: ${o.fatal?.message}`;
  } else if (o.stopReason === 'threshold') {
    status = 'partial';
    reason = `stopped by --threshold-abort: ${o.stopDetail ?? 'a threshold can no longer hold'}`;
  } else if (o.stopReason === 'stuck') {
    status = 'partial';
    reason = stuckReason(o.stuck);
  } else if (aborted.length > 0) {
    status = aborted.length === o.plan.clients ? 'failed' : 'partial';
    reason = `${aborted.length} of ${o.plan.clients} clients aborted: ${aborted[0]?.abortReason ?? ''}`;
  }
  const cm = o.connectMs;
  const cpuS = o.cpu.userS + o.cpu.systemS;
  const result: RunResult = {
    schema: RUN_SCHEMA,
    status,
    workload: {
      name: ctx.workloadName,
      ref: o.plan.workload.ref,
      options: ctx.options,
      args: o.plan.workload.args,
    },
    target: {
      driver: ctx.target.driver,
      url: ctx.target.redactedUrl,
      server_version: o.serverVersion,
      ...(ctx.connector ? { connector: ctx.connector } : {}),
      ...(ctx.io ? { io: ctx.io } : {}),
      ...(o.sharedIoThread === true && ctx.io === 'native' ? { shared_io_thread: true } : {}),
    },
    clients: o.plan.clients,
    workers: o.workers,
    ...(o.mainThread === true ? { main_thread: true } : {}),
    started_at: o.startedAt.toISOString(),
    elapsed_s: round(el, 6),
    limits: {
      ...(o.plan.timeS !== undefined ? { time_s: o.plan.timeS } : {}),
      ...(o.plan.events !== undefined ? { events: o.plan.events } : {}),
      ...(o.plan.rounds !== undefined ? { rounds: o.plan.rounds } : {}),
      warmup_s: o.plan.warmupS,
      report_interval_s: o.plan.reportIntervalS,
      max_tries: o.plan.maxTries,
    },
    totals: {
      queries,
      events: o.events.count,
      errors,
      retries: o.retries,
      reconnects: o.reconnects,
      qps: el > 0 ? round2(queries / el) : 0,
      eps: el > 0 ? round2(o.events.count / el) : 0,
    },
    events: {
      count: o.events.count,
      latency_ms: summarize(o.events.hist),
      histogram: encodeHistogram(o.events.hist),
    },
    types,
    connect_ms: {
      min: cm.length ? round(Math.min(...cm), 3) : 0,
      mean: cm.length ? round(cm.reduce((a, b) => a + b, 0) / cm.length, 3) : 0,
      max: cm.length ? round(Math.max(...cm), 3) : 0,
      count: cm.length,
    },
    intervals: o.intervals,
    errors: o.errors,
    client_stats: o.clientSummaries.map((c) => ({
      id: c.id,
      events: c.events,
      queries: c.queries,
      errors: c.errors,
      connect_ms: round(c.connectMs, 3),
      busy_s: round(c.busyUs / 1e6, 3),
      batched: c.batched,
      aborted: c.aborted,
    })),
    client_cpu: {
      user_s: round(o.cpu.userS, 3),
      system_s: round(o.cpu.systemS, 3),
      us_per_query: queries > 0 ? round((cpuS * 1e6) / queries, 2) : 0,
    },
    env: ctx.env,
  };
  if (reason !== undefined) result.status_reason = reason;
  if (o.warmup) {
    result.warmup = {
      elapsed_s: round(o.warmup.elapsedS, 3),
      events: o.warmup.events,
      queries: o.warmup.queries,
    };
  }
  if (ctx.label !== undefined) result.label = ctx.label;
  if (o.counters.size > 0) {
    result.counters = Object.fromEntries([...o.counters].sort((a, b) => byName(a[0], b[0])));
  }
  if (o.steps.size > 0) {
    result.steps = {};
    for (const [name, s] of [...o.steps].sort((a, b) => byName(a[0], b[0]))) {
      result.steps[name] = {
        count: s.count,
        latency_ms: summarize(s.hist),
        histogram: encodeHistogram(s.hist),
      };
    }
  }
  if (o.eventConnects.totalCount > 0) {
    const h = o.eventConnects;
    result.event_connects = {
      count: h.totalCount,
      total_ms: round((meanOf(h) * h.totalCount) / 1000, 3),
      latency_ms: summarize(h),
    };
  }
  if (o.stages !== undefined) result.stages = o.stages.map((s) => stageResult(s, o));
  result.sysbench = sysbenchCounts(o);
  const rate = rateResult(o);
  if (rate !== undefined) result.rate = rate;
  return result;
}

/** One stage's figures, in the shape of the run's own (`qps` over the stage's measured seconds). */
function stageResult(s: StageAccumulator, o: EngineOutcome): StageResult {
  const el = s.measuredS;
  const per = (n: number): number => (el > 0 ? round2(n / el) : 0);
  const types: StageResult['types'] = {};
  for (const [name, t] of [...s.types].sort((a, b) => byName(a[0], b[0]))) {
    if (t.count === 0 && t.errors === 0) continue;
    types[name] = { count: t.count, errors: t.errors, qps: per(t.count), latency_ms: summarize(t.hist) };
  }
  const prev = s.index === 0 ? o.plan.rate?.perSec : o.plan.stages?.[s.index - 1]?.rate;
  return {
    stage: s.index + 1,
    ...(s.plan.clients !== undefined ? { clients: s.plan.clients } : {}),
    ...(s.plan.rate !== undefined ? { rate: s.plan.rate, rate_from: prev ?? s.plan.rate } : {}),
    start_s: s.startS,
    end_s: s.endS,
    elapsed_s: round(el, 3),
    queries: s.queries,
    events: s.events,
    errors: s.errors,
    qps: per(s.queries),
    eps: per(s.events),
    latency_ms: summarize(s.eventHist),
    types,
  };
}

/**
 * Why a run whose clients did not stop in time is partial, naming what was given up on: "1 worker (4 clients)
 * did not stop in time and was terminated", "1 client in the main thread did not stop in time and was given
 * up on (connections closed)", or both, joined by "; ".
 */
export function stuckReason(s: StuckLoad | undefined): string {
  if (s === undefined || (s.workers === 0 && s.mainThreadClients === 0))
    return 'clients did not stop in time';
  const clients = (n: number): string => `${n} client${n === 1 ? '' : 's'}`;
  const parts: string[] = [];
  if (s.mainThreadClients > 0) {
    parts.push(
      `${clients(s.mainThreadClients)} in the main thread did not stop in time and ${s.mainThreadClients === 1 ? 'was' : 'were'} given up on (connections closed)`,
    );
  }
  if (s.workers > 0) {
    const one = s.workers === 1;
    parts.push(
      `${s.workers} worker${one ? '' : 's'} (${clients(s.workerClients)}) did not stop in time and ${one ? 'was' : 'were'} terminated`,
    );
  }
  return parts.join('; ');
}
