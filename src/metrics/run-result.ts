/**
 * The RunResult: the one value that flows out of the engine. Everything after the engine (reports,
 * history, sweeps, comparisons) reads it; nothing reaches back. Versioned: `schema: "dbsmack/run@1"`.
 * Adding optional fields keeps @1; renaming or removing one means @2.
 */
import type { DriverName } from '../driver/types.ts';
import type { StatementKind } from '../workload/types.ts';

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
  retries: number;
  reconnects: number;
  /** sysbench-style counts in the interval. */
  reads: number;
  writes: number;
  others: number;
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
  target: { driver: DriverName; url: string; server_version: string; connector?: string };
  label?: string;
  clients: number;
  workers: number;
  started_at: string;
  elapsed_s: number;
  limits: { time_s?: number; events?: number; rounds?: number; warmup_s: number; report_interval_s: number };
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
  /** The server's version and important settings, read right after the run; absent when unreadable. */
  server?: ServerInfo;
}
