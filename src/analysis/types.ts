/**
 * The documents that sweeps and comparisons produce. Like the RunResult they are versioned; reports
 * (text, Markdown, HTML) read them and never reach back into the engine.
 */
import type { RunResult, RunStatus } from '../metrics/run-result.ts';

export const SWEEP_SCHEMA = 'dbsmack/sweep@1';
export const COMPARE_SCHEMA = 'dbsmack/compare@1';

export type Stability = 'stable' | 'noisy' | 'erratic';

/** What a sweep keeps of each run: enough to redo the statistics, plus the full result. */
export interface SweepRun {
  /** History id when the run was stored. */
  id?: number;
  repeat: number;
  status: RunStatus;
  qps: number;
  eps: number;
  p95_ms: number;
  p99_ms: number;
  elapsed_s: number;
  errors: number;
  /** Intervals with near-zero throughput in the middle of the run: [start s, end s]. */
  stalls: [number, number][];
  /** Flagged by the median/MAD test among the repeats of its point (never dropped). */
  outlier: boolean;
  result: RunResult;
}

export interface SweepPoint {
  clients: number;
  runs: SweepRun[];
  qps: { median: number; min: number; max: number; cv: number };
  p95_ms_median: number;
  p99_ms_median: number;
  /**
   * Repeat numbers of the runs that did not complete, left out of `qps`, the latency medians and the
   * verdict (they stay in `runs`). Absent when every run completed, or when none did (the figures are then
   * of the partial runs, as `stability_reason` says).
   */
  left_out?: number[];
  stability: Stability;
  /** Why the point got its verdict, in words. */
  stability_reason: string;
}

export interface SweepResult {
  schema: typeof SWEEP_SCHEMA;
  label: string;
  status: RunStatus;
  /** Why the sweep is partial (interrupted, a run stopped by errors). */
  status_reason?: string;
  workload: RunResult['workload'];
  target: RunResult['target'];
  started_at: string;
  repeat: number;
  /** The client counts asked for, in order (points may lack some when the sweep was interrupted). */
  clients?: number[];
  points: SweepPoint[];
  env: RunResult['env'];
  /** Server settings read at the start (see probe/server-settings). */
  server_settings?: Record<string, string>;
  /** What shaped the runs (`sweep --resume` refuses to mix in runs made otherwise): a hash, and the settings in words. */
  resume?: { fingerprint: string; settings: Record<string, string> };
  /** The sweep's record in the history (`sweep --resume` goes on with it). */
  history?: { path: string; sweep: number };
  /** The experiment and arm this sweep is (`dbsmack experiment`: one sweep per arm). */
  experiment?: { name: string; arm: string; baseline: boolean };
}

export type Verdict = 'better' | 'worse' | 'same' | 'unknown';

/**
 * Which test gave `p_value`: Mann–Whitney U (exact for small samples); Welch's t-test on the logarithms
 * when too few repeats let the rank test reach the significance level; none with fewer than two runs a side.
 */
export type SignificanceTest = 'mann-whitney' | 'welch-log' | 'none';

export interface CompareCell {
  /** Candidate median / base median (for latency metrics too: above 1 means slower). */
  ratio: number;
  /**
   * The 95% bootstrap interval of the ratio; null with a single run on a side, whose spread is unknown
   * (resampling one run gives the same run every time, an interval of zero width that would look exact).
   */
  ci_low: number | null;
  ci_high: number | null;
  p_value: number;
  /** Which test gave `p_value` (absent in documents from before it was recorded: Mann–Whitney). */
  test?: SignificanceTest;
  /** `same` where no significant difference is shown ("~"); `unknown` when too few repeats to tell. */
  verdict: Verdict;
  n_base: number;
  n_cand: number;
}

export interface CompareRow {
  clients: number;
  base: number;
  /** Per candidate label, in the order given. */
  candidates: Record<string, CompareCell & { value: number }>;
}

export interface CompareResult {
  schema: typeof COMPARE_SCHEMA;
  metric: 'qps' | 'p95' | 'p99';
  base: string;
  candidates: string[];
  rows: CompareRow[];
  warnings: string[];
  /** Significance level the verdicts use (p below it and a CI excluding 1). */
  alpha?: number;
  /** Where each input came from: `label` → history label, run/sweep id or file. */
  sources?: Record<string, string>;
  /** Settings and environment values that differ between the inputs: key → value per label. */
  differences: Record<string, Record<string, string>>;
}
