/**
 * pgbench's figures of a run (the numbers of its final report), as the RunResult stores them under
 * `pgbench`: part of the RunResult document ("dbsmack/run@1"). Computed by src/workload/pgbench/result.ts,
 * printed by src/report/pgbench.ts.
 */

/** `--max-tries 0` (no limit), as the run's plan carries it: pgbench's int range, never reached. */
export const UNLIMITED_TRIES = 2147483647;

/** A run's `limits.max_tries` as pgbench's figures give it: 0 for no limit, as pgbench's option. */
export const triesFigure = (maxTries: number | undefined): number =>
  maxTries === UNLIMITED_TRIES ? 0 : (maxTries ?? 1);

export interface PgbenchCommandFigures {
  /** The command's first line, as pgbench prints it. */
  text: string;
  /** The statement type or step it was recorded under. */
  type: string;
  /** Average latency in ms (0 when it was not timed or never ran). */
  latency_ms: number;
  failures: number;
  retries: number;
}

/** How pgbench counts transactions by their outcome, for the whole run and per script. */
export interface PgbenchOutcomes {
  /** Successful transactions. */
  processed: number;
  failed: number;
  serialization_failures: number;
  deadlock_failures: number;
  retried: number;
  retries: number;
}

export interface PgbenchScriptFigures extends PgbenchOutcomes {
  name: string;
  weight: number;
  /** Transactions that ended, failed ones included (pgbench's total per script). */
  transactions: number;
  latency_ms?: { average: number; stddev: number };
  commands: PgbenchCommandFigures[];
}

export interface PgbenchFigures extends PgbenchOutcomes {
  transaction_type: string;
  scale: number;
  partition?: { method: string; partitions: number };
  /** `-M`: pgbench's query mode (`QueryMode` of src/workload/pgbench/script.ts). */
  query_mode: 'simple' | 'extended' | 'prepared';
  threads: number;
  /** `--max-tries`; 0: no limit. */
  max_tries: number;
  transactions_per_client?: number;
  duration_s?: number;
  /** -L: transactions over the limit. */
  latency_limit_ms?: number;
  late?: number;
  /** -L under -R: transactions skipped, never run, for starting more than the limit after their schedule. */
  skipped?: number;
  latency_ms: { average: number; stddev?: number };
  /** Without -C: time to connect every client; with -C: the average time of a transaction's connection. */
  connection_ms: { initial?: number; average?: number };
  tps: number;
  failures_detailed: boolean;
  per_command: boolean;
  /** Several scripts, or per-script figures asked for. */
  per_script: boolean;
  aborted_clients: number;
  scripts: PgbenchScriptFigures[];
}
