/**
 * The RunResult: the one value that flows out of the engine. Everything after the engine (reports,
 * history, sweeps, comparisons) reads it; nothing reaches back. Versioned: `schema: "dbsmack/run@1"`.
 * Adding optional fields keeps @1; renaming or removing one means @2.
 */
import type { DriverName } from '../driver/types.ts';
import type { StatementKind } from './kinds.ts';
import type { PgbenchFigures } from './pgbench-figures.ts';
import type { ProfileData, ServerSched } from './profile-types.ts';

export const RUN_SCHEMA = 'dbsmack/run@1';

export type RunStatus = 'complete' | 'partial' | 'failed';

export interface LatencySummary {
  min: number;
  mean: number;
  p50: number;
  p90: number;
  p95: number;
  p99: number;
  p999: number;
  max: number;
  stddev: number;
}

export interface TypeResult {
  kind: StatementKind;
  count: number;
  /** Of `count`, statements that returned or changed no row (present when not 0). */
  zero_rows?: number;
  errors: number;
  qps: number;
  latency_ms: LatencySummary;
  /** HdrHistogram compressed base64 (V2), values in microseconds. */
  histogram: string;
}

export interface IntervalPoint {
  /** End of the interval, seconds since the measured part began. */
  t: number;
  /** Length of the interval in seconds (the last one may be shorter). */
  dur: number;
  queries: number;
  events: number;
  qps: number;
  eps: number;
  /** p95 statement latency in the interval, ms (0 when no statement finished). */
  p95_ms: number;
  /** p95 event latency in the interval, ms. */
  event_p95_ms: number;
  errors: number;
  /**
   * Of `errors`, those after which the run went on, lost connections excepted (sysbench's `err/s`); absent
   * in results written before it existed.
   */
  ignored_errors?: number;
  retries: number;
  reconnects: number;
  /** sysbench-style counts in the interval (a write that changed no row counts as other). */
  reads: number;
  writes: number;
  others: number;
  /** Event latency percentiles in the interval, ms (absent when no event finished). */
  event_latency_ms?: { p50: number; p90: number; p95: number; p99: number; p999: number; max: number };
  /** Event latency at `--percentile` in the interval, ms. */
  event_percentile_ms?: number;
  /** Rate mode, at the end of the interval: events due but not started, and events in progress. */
  rate_queue?: number;
  rate_concurrency?: number;
  /** Mean and standard deviation of the event latency in the interval, ms (absent when no event finished). */
  event_mean_ms?: number;
  event_stddev_ms?: number;
  /** The workload's own counters in the interval (`ClientContext.count`), when any moved. */
  counters?: Record<string, number>;
  /** The longest statement that ended in the interval, ms (absent when none ended). */
  max_ms?: number;
  /** Rate mode: events of the interval that started more than `--rate-late-ms` after their schedule. */
  rate_late?: number;
  /** Rate mode: the mean schedule lag of the events that started in the interval, ms. */
  rate_lag_ms?: number;
  /** Rate mode: events of the interval skipped, never run, for being too late (pgbench -L under -R). */
  rate_skipped?: number;
  /** `--stages`/`--rate-stages`: the stage (from 1) the interval belongs to. */
  stage?: number;
}

/** One stage of a staged run (`--stages`, `--rate-stages`), measured as the run is. */
export interface StageResult {
  /** From 1, in order. */
  stage: number;
  /** `--stages`: the clients running in it. */
  clients?: number;
  /** `--rate-stages`: the arrival rate it ramps to (events/s), from `rate_from` at its start. */
  rate?: number;
  rate_from?: number;
  /** Planned start and end, seconds from the start of the measured part. */
  start_s: number;
  end_s: number;
  /** Seconds of it that were measured (less than planned when the run stopped early). */
  elapsed_s: number;
  queries: number;
  events: number;
  errors: number;
  qps: number;
  /** Events (transactions) per second. */
  eps: number;
  /** Event latency (from the schedule in rate mode). */
  latency_ms: LatencySummary;
  types: Record<string, { count: number; errors: number; qps: number; latency_ms: LatencySummary }>;
}

/** One `--threshold` (or capacity SLO) and its verdict. */
export interface ThresholdResult {
  /** As given, e.g. `p95{statement=point_selects}<2ms`. */
  expr: string;
  metric: string;
  statement?: string;
  stage?: number;
  op: '<' | '<=' | '>' | '>=';
  /** The limit in `unit`. */
  limit: number;
  /** `ms` for latencies, `%` or `count` for errors, `/s` for qps/tps. */
  unit: 'ms' | '%' | 'count' | '/s';
  /** The measured value in `unit`; null when nothing was measured to judge. */
  value: number | null;
  ok: boolean;
  /** Why it failed, or a note (nothing measured, stopped by --threshold-abort). */
  note?: string;
}

/** A stall seen under `--rate`: intervals with near-zero throughput, kept on schedule and measured. */
export interface RateStall {
  start_s: number;
  length_s: number;
  /** Events that started late (> `--rate-late-ms`) from the stall's start until lateness fell back. */
  delayed: number;
  /** The longest event latency (from the schedule) around it, ms. */
  max_event_ms: number;
  /** The longest statement that ended in or right after it, ms, and the run's usual (median interval p95). */
  max_statement_ms: number;
  usual_statement_ms: number;
  /** `server`: statements were in flight far longer than usual; `client`: connections idle, events late. */
  cause: 'server' | 'client';
  reason: string;
}

/** sysbench's own counters, computed as sysbench 1.0.20 counts them (see README "sysbench workloads"). */
export interface SysbenchCounts {
  /** Statements that returned a result set. */
  read: number;
  /** INSERT/UPDATE/DELETE… that changed at least one row. */
  write: number;
  /** Everything else: BEGIN, COMMIT, and writes that changed no row. */
  other: number;
  total: number;
  /** Events completed (sysbench's transactions). */
  transactions: number;
  /**
   * Errors after which the event was rolled back and run again, or skipped: one per failed statement, lost
   * connections excepted (those are `reconnects`). See README "Errors during a run".
   */
  ignored_errors: number;
  /** `ignored_errors` per error code (server error number, SQLSTATE or driver code). */
  ignored_errors_by_code?: Record<string, number>;
  reconnects: number;
  /** The percentile `--percentile` chose (sysbench default 95; 0 = off). */
  percentile: number;
  /** Event latency (ms): min, avg, max, sum, and the value at `percentile`. */
  latency_ms: { min: number; avg: number; max: number; sum: number; percentile: number };
  /** Threads fairness: events and execution time (s) per client, average and standard deviation. */
  fairness: { events_avg: number; events_stddev: number; time_avg: number; time_stddev: number };
  /** `--report-interval` as given on the command line (0 when not given: no interval lines, as sysbench). */
  report_interval: number;
}

/** Open-loop (`--rate`) figures. */
export interface RateResult {
  /** Target events per second, and the arrival shape. */
  target: number;
  shape: 'poisson' | 'constant';
  /** How late events started against their schedule; event latencies are measured from the schedule. */
  lag_ms: LatencySummary;
  /** Events that started more than `late_after_ms` after their scheduled time. */
  late: number;
  late_after_ms: number;
  /** Events scheduled before the deadline that never started. */
  dropped: number;
  /**
   * Events skipped, never run, because their turn came more than `skip_after_ms` after their scheduled
   * time (pgbench's -L under -R; absent when nothing is skipped).
   */
  skipped?: number;
  skip_after_ms?: number;
  /** Stalls seen in the timeline (the schedule was kept through them). */
  stalls?: RateStall[];
  /** `--rate-max-lag` in seconds, when stopping on lag was asked for. */
  max_lag_s?: number;
}

export interface ErrorCount {
  code: string;
  kind: 'retryable' | 'reconnect' | 'fatal';
  count: number;
  /** Whether the run went on after it (retried, reconnected, or ignored by --ignore-errors). */
  ignored: boolean;
  message: string;
}

export interface ClientStat {
  id: number;
  events: number;
  queries: number;
  errors: number;
  connect_ms: number;
  /** Seconds this client spent inside events. */
  busy_s: number;
  /**
   * Events of the measured part it ran in statement batches (native I/O core, one-statement events in the
   * closed loop; `?batch=off` runs none so): `events - batched` ran one statement at a time. Absent in
   * results stored before it was recorded.
   */
  batched?: number;
  aborted: boolean;
}

export interface EnvInfo {
  host: string;
  os: string;
  kernel: string;
  arch: string;
  cpu_model: string;
  cpu_count: number;
  memory_gb: number;
  node: string;
  dbsmack: string;
}

/**
 * One client type of a run whose workload has several (a smack file's client blocks started in `main`):
 * its clients, its statement types under their own names, and its connect times, in the top-level shape.
 */
export interface RunGroup {
  name: string;
  clients: number;
  /** The client ids (`client_stats[].id`) of this group. */
  client_ids: number[];
  /** Seconds from the start of the measured part until its last client finished. */
  elapsed_s: number;
  /** Per statement type; `qps` is the group's count over the group's `elapsed_s`. */
  types: Record<string, TypeResult>;
  connect_ms: { min: number; mean: number; max: number; count: number };
  /** Lines the workload prints before and after the group's report (smack `print`). */
  output?: { before: string[]; after: string[] };
}

/** The server as it was configured for a run (read by probe/server-settings.ts). */
export interface ServerInfo {
  version: string;
  /** Setting name → value as the server reports it (`SHOW VARIABLES`, `pg_settings`, `PRAGMA`). */
  settings: Record<string, string>;
}

export interface RunResult {
  schema: typeof RUN_SCHEMA;
  status: RunStatus;
  /** Why the run is partial or failed (interrupted, fatal error, clients aborted). */
  status_reason?: string;
  workload: { name: string; ref: string; options: Record<string, unknown>; args: string[] };
  /**
   * `connector`: the client of the load connections; `io`: how they did their socket I/O after the
   * handshake (`native`: the native I/O core; `js`: the JavaScript event loop); `shared_io_thread`: the
   * native core ran every second connection's statement batches on an I/O thread of its own, beside the
   * one load thread (8 or more PostgreSQL clients: native-core.ts `loadDesign`).
   */
  target: {
    driver: DriverName;
    url: string;
    server_version: string;
    connector?: string;
    io?: 'native' | 'js';
    shared_io_thread?: true;
  };
  label?: string;
  /** The experiment (`dbsmack experiment`) and arm this run belongs to. */
  experiment?: { name: string; arm: string };
  clients: number;
  /** Load threads the clients were spread over. */
  workers: number;
  /**
   * The first of them was the main thread (the clients of the native I/O core on dbsmack's own workloads:
   * engine/spawn.ts); absent when every one was a worker thread.
   */
  main_thread?: boolean;
  started_at: string;
  elapsed_s: number;
  limits: {
    time_s?: number;
    events?: number;
    rounds?: number;
    warmup_s: number;
    report_interval_s: number;
    /** Tries of an event on a retryable error (`--max-tries`). */
    max_tries?: number;
  };
  totals: {
    queries: number;
    events: number;
    errors: number;
    retries: number;
    reconnects: number;
    qps: number;
    eps: number;
  };
  /** Event (transaction) latency. */
  events: { count: number; latency_ms: LatencySummary; histogram: string };
  types: Record<string, TypeResult>;
  connect_ms: { min: number; mean: number; max: number; count: number };
  warmup?: { elapsed_s: number; events: number; queries: number };
  intervals: IntervalPoint[];
  errors: ErrorCount[];
  client_stats: ClientStat[];
  /** dbsmack's own CPU time over the measured part. */
  client_cpu: { user_s: number; system_s: number; us_per_query: number };
  env: EnvInfo;
  /** Client types, when the workload runs several side by side (smack files); built by `Workload.groupsOf`. */
  groups?: RunGroup[];
  /** sysbench-style counters (read/write/other, transactions, ignored errors, reconnects, latency, fairness). */
  sysbench?: SysbenchCounts;
  /** Open-loop figures, when the run had `--rate`. */
  rate?: RateResult;
  /** The workload's own counters (`ClientContext.count`), summed over the measured part. */
  counters?: Record<string, number>;
  /** The workload's timed steps that are not statements (`ClientContext.step`: pgbench meta-commands, scripts). */
  steps?: Record<string, { count: number; latency_ms: LatencySummary; histogram: string }>;
  /** Connections opened for events (`connectPerEvent`, pgbench -C): how many, and the time each took (close + open). */
  event_connects?: { count: number; total_ms: number; latency_ms: LatencySummary };
  /** pgbench's own figures of a pgbench script run (src/workload/pgbench/result.ts computes them). */
  pgbench?: PgbenchFigures;
  /** `--profile`: server waits, the server's threads, load (profile-types.ts, stacks-types.ts). */
  profile?: ProfileData;
  /** `--server-nice/--server-policy/--server-cpus`: what was applied to the server's threads, and restored. */
  server_sched?: ServerSched;
  /** The server's version and important settings, read right after the run; absent when unreadable. */
  server?: ServerInfo;
  /** `--stages`/`--rate-stages`: the figures of each stage. */
  stages?: StageResult[];
  /** `--threshold`: each threshold with its measured value and verdict. */
  thresholds?: ThresholdResult[];
}
