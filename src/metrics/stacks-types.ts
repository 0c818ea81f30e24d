/**
 * What `--profile-stacks` and `--count-calls` store in the RunResult, under `profile` beside the wait profile:
 * `profile.stacks` (context switches of the server's threads with their stacks), `profile.calls` (uprobe
 * counts), `profile.lock_callers` (lock waits by caller) and `profile.code_window` (when they were taken and
 * what taking them cost). Part of the RunResult document ("dbsmack/run@1"): add optional fields only.
 */

/** A function of the server and how many switches had it anywhere on their stack (once per switch). */
export interface FunctionCount {
  function: string;
  count: number;
  /** The file it lives in (`mariadbd`, `libc.so.6`), when known. */
  module?: string;
}

/** Off-CPU time of the switches that had a function anywhere on their stack. */
export interface FunctionTime {
  function: string;
  ms: number;
  module?: string;
}

/** One distinct stack, root first, frames joined by `;` (the folded format of FlameGraph and speedscope). */
export interface FoldedStack {
  stack: string;
  count: number;
  /** Off-CPU time of those switches, ms, when measured. */
  ms?: number;
}

export interface OffCpuProfile {
  /** How the time was measured, in words. */
  measured_by: string;
  /** Switches whose return to a CPU was seen inside the window (the others have no off-CPU time). */
  paired: number;
  total_ms: number;
  /** Time preempted threads waited for a CPU, and time blocked threads slept. */
  preempted_ms: number;
  blocked_ms: number;
  /** Off-CPU time by function (counted once per switch), longest first. */
  in: FunctionTime[];
  /** Off-CPU time by stack, longest first; the first frame is `preempted` or `blocked`. */
  stacks: FoldedStack[];
  /** Stacks left out of `stacks` (beyond the limit) and their time. */
  other_stacks: number;
  other_ms: number;
}

export interface StacksProfile {
  /** The recorder, e.g. `perf version 6.1.x`. */
  tool: string;
  /** Seconds between the first and the last switch recorded. */
  window_s: number;
  /** What was recorded: `process PID (all threads)` or `N backends of postmaster PID`. */
  recorded: string;
  /** Threads (or backend processes) seen switching. */
  threads: number;
  /** Involuntary switches (preempted: still runnable) and voluntary ones (blocked: sleeping, waiting). */
  involuntary: number;
  voluntary: number;
  /** Functions on the stacks of involuntary / voluntary switches, most switches first. */
  preempted_in: FunctionCount[];
  blocked_in: FunctionCount[];
  /** Whether there were enough switches of each kind to rank functions (see `min_switches`). */
  ranked: { preempted: boolean; blocked: boolean };
  min_switches: number;
  /** Stacks of the involuntary switches (count = switches), for flame graphs, most frequent first. */
  preempted_stacks: FoldedStack[];
  other_preempted_stacks: number;
  off_cpu?: OffCpuProfile;
  /** User stack bytes copied per switch, and stacks that did not reach the thread's start (cut short). */
  stack_bytes: number;
  truncated: number;
  /** Size of the recording, records the kernel dropped, and CPU seconds spent decoding it after the run. */
  data_bytes: number;
  lost: number;
  decode_cpu_s: number;
  /** Where the folded stacks were written (`--stacks-out`). */
  folded_file?: string;
  off_cpu_file?: string;
}

/** A lock wait and where it came from: plockstat's "Count nsec Lock Caller". */
export interface LockCaller {
  /** The lock: a performance schema instrument (`wait/synch/mutex/sql/LOCK_open`) or a symbol (`LOCK_open`). */
  lock: string;
  /** Who waited: a source location (`sql_base.cc:1234`) or the server function that called the lock. */
  caller: string;
  count: number;
  wait_ms: number;
}

/** Throughput in the window against the rest of the measured part: what recording cost the server. */
export interface WindowCost {
  /** What was running in the window: `stack recording`, `uprobes on 2 functions`, `lock wait history`. */
  what: string[];
  inside_qps: number;
  outside_qps: number;
  /** inside / outside. */
  ratio: number;
  /** Timeline intervals wholly inside and wholly outside the window. */
  inside_intervals: number;
  outside_intervals: number;
}

/** When the code profile was taken and how. */
export interface CodeWindow {
  /** Seconds asked for (`--stacks-window`) and taken; start in seconds since the measured part began. */
  requested_s: number;
  start_s: number;
  length_s: number;
  /** Centred in the measured part (known length), or from its start (a run limited by events or rounds). */
  placement: 'centred' | 'start';
  cost?: WindowCost;
  /** The binary uprobes were placed in, and the probe events per function (overloads add up). */
  calls_binary?: string;
  calls_probes?: Record<string, number>;
  /** Where `lock_callers` came from, and how much of the window's lock waits the history showed. */
  lock_callers_from?: 'performance_schema' | 'stacks';
  lock_waits_seen?: number;
  lock_waits_total?: number;
}

/** The fields `--profile-stacks` and `--count-calls` add to `profile`. */
export interface CodeProfileFields {
  stacks?: StacksProfile;
  /** Calls of each function named in `--count-calls` during the window. */
  calls?: Record<string, number>;
  lock_callers?: LockCaller[];
  code_window?: CodeWindow;
}
