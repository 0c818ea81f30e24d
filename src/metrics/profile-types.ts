/**
 * What `--profile` stores in the RunResult under `profile`, and what the scheduling experiments store under
 * `server_sched`. Part of the RunResult document ("dbsmack/run@1"): add optional fields only. The probes
 * (src/probe/) fill it; the reports and comparisons read it.
 */

/** Something that could not be measured, and why: shown in the report, never an error. */
export interface ProfileNote {
  /** What is missing: `server waits`, `server threads`, `scheduling`. */
  what: string;
  why: string;
  hint?: string;
}

/** One wait event name of the performance schema, as a difference over the run. */
export interface MysqlWaitRow {
  /** e.g. `wait/synch/mutex/sql/LOCK_open`, `wait/io/file/innodb/innodb_log_file`. */
  event: string;
  count: number;
  /** Total wait, ms (the schema counts picoseconds). */
  wait_ms: number;
}

/** One statement digest, as a difference over the run. */
export interface MysqlDigestRow {
  schema: string | null;
  digest: string;
  text: string;
  count: number;
  total_ms: number;
  lock_ms: number;
  rows_examined: number;
  rows_sent: number;
}

export interface MysqlWaitProfile {
  kind: 'mysql';
  /** Wait instruments dbsmack turned on for the run (and off again after), because they were off. */
  instruments_enabled: number;
  /** Every event name whose count grew, by total wait, longest first (`idle` excluded: see `idle_ms`). */
  waits: MysqlWaitRow[];
  /** Time connections spent waiting for their client (`idle`), ms. */
  idle_ms: number;
  /**
   * The statement digests that ran, by total time, at most 20. MariaDB digests no prepared statement
   * executions: those show only in `statements`, as `statement/com/Execute`.
   */
  digests: MysqlDigestRow[];
  /** Statements by event name (`statement/sql/insert`, `statement/com/Execute`), `wait_ms` = total time. */
  statements: MysqlWaitRow[];
}

/** A share of pg_stat_activity samples of the run's own backends. */
export interface PgWaitShare {
  /** `wait_event_type` (`LWLock`, `Lock`, `IO`, `Client`, …), or `CPU` for an active backend with no wait event. */
  type: string;
  event: string;
  samples: number;
  /** Fraction of all backend samples, 0..1. */
  share: number;
}

export interface PgLockShare {
  locktype: string;
  mode: string;
  samples: number;
  share: number;
}

export interface PgWaitProfile {
  kind: 'postgres';
  rate_hz: number;
  /** Sampling rounds taken, and backend samples in them (rounds × backends seen). */
  rounds: number;
  samples: number;
  backends: number;
  events: PgWaitShare[];
  /** Ungranted locks (pg_locks) the run's backends waited on, as shares of backend samples. */
  locks: PgLockShare[];
}

export interface SqliteBusyProfile {
  kind: 'sqlite';
  busy_timeout_ms: number;
  /** SQLITE_BUSY/SQLITE_LOCKED errors the clients saw (each one retried or failed), by code. */
  busy: Array<{ code: string; count: number }>;
  retries: number;
  /** Share of the clients' time spent in events, 0..1 per client on average (busy waits happen inside). */
  client_busy_share: number;
}

export type WaitProfile = MysqlWaitProfile | PgWaitProfile | SqliteBusyProfile;

/** One server thread (or PostgreSQL backend process) over the run: a row of `prstat -mL`. */
export interface ThreadStat {
  pid: number;
  tid: number;
  /** Name from the server (performance_schema.threads, the backend's title) or the thread's comm. */
  name: string;
  /** One of the run's own connections. */
  session: boolean;
  /** Percent of the thread's observed time in user mode, system mode, runnable waiting for a CPU. */
  usr_pct: number;
  sys_pct: number;
  lat_pct: number;
  /** Percent on a CPU, from schedstat (ns resolution; usr+sys come in clock ticks). */
  cpu_pct: number;
  /** Runnable but waiting for a CPU, ms in total. */
  lat_ms: number;
  /**
   * Percent of the thread's time waiting on mutexes, rwlocks and table locks (prstat's LCK), and that time in
   * ms: MariaDB/MySQL with the performance schema only.
   */
  lck_pct?: number;
  lck_ms?: number;
  /** Voluntary and involuntary context switches over the run. */
  vcx: number;
  icx: number;
  nice: number;
  policy: string;
  /** Seconds this thread was observed (shorter when it started or ended during the run). */
  observed_s: number;
}

export interface ServerThreads {
  pid: number;
  command: string;
  /** How the process was found: `pid_file`, `backend_pid`, `server_pid` (given with --server-pid). */
  found_by: string;
  /** Threads (tasks) seen; rows are sorted by CPU, busiest first. */
  threads: ThreadStat[];
  totals: {
    threads: number;
    /** CPU seconds (schedstat) and user/system seconds (stat) used by the server over the run. */
    cpu_s: number;
    usr_s: number;
    sys_s: number;
    /** Seconds runnable waiting for a CPU, summed over threads. */
    lat_s: number;
    /** Seconds waiting on locks (performance schema), summed over threads, when measured. */
    lck_s?: number;
    vcx: number;
    icx: number;
    /** Server CPU time per query of the run, µs (next to `client_cpu.us_per_query`). */
    cpu_us_per_query: number;
  };
  /** Threads that ended during the run (their figures stop at the last sample). */
  ended: number;
  started: number;
}

export interface ProfileData {
  /** Seconds between the first and last reading. */
  elapsed_s: number;
  waits?: WaitProfile;
  threads?: ServerThreads;
  /** Host load averages (1, 5, 15 min) at the start and the end, and the highest 1-min value seen. */
  load_avg?: { start: number[]; end: number[]; max_1m: number };
  /** dbsmack's own CPU per query (copied from `client_cpu`, to sit next to the server's). */
  client_cpu_us_per_query?: number;
  notes: ProfileNote[];
}

/** What `--server-nice/--server-policy/--server-cpus` asked for. */
export interface SchedRequest {
  nice?: number;
  policy?: 'fifo' | 'rr' | 'other' | 'batch' | 'idle';
  priority?: number;
  cpus?: string;
}

export interface ServerSched {
  requested: SchedRequest;
  /** Whether the setting was applied to every thread of the server. */
  applied: boolean;
  pid?: number;
  threads: number;
  /** The settings the threads had before (most common value), e.g. `nice 0, other 0, cpus 0-1`. */
  before?: string;
  /** Whether every thread got its earlier setting back after the run. */
  restored: boolean;
  notes: ProfileNote[];
}
