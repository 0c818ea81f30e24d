/**
 * The text of `--profile-stacks` and `--count-calls` below a run's profile: the story's tables ("Number of
 * times preempted when in function", "Number of times function executed", plockstat's "Count nsec Lock
 * Caller"), the off-CPU time, what the window cost, and a one-line summary for sweeps. Pure functions of a
 * RunResult's `profile`.
 */

import type { ProfileData } from '../metrics/profile-types.ts';
import type { RunResult } from '../metrics/run-result.ts';
import type { CodeProfileFields, FunctionCount, StacksProfile } from '../metrics/stacks-types.ts';
import { grouped } from '../numbers.ts';
import { pad } from './format.ts';

export type CodeProfile = ProfileData & CodeProfileFields;

/** Rows shown per table (the RunResult keeps more). */
const TOP = 15;
/** A function on at least this share of a kind's stacks is on nearly every one (thread start): named apart. */
const EVERYWHERE = 0.95;

const int = (v: number): string => grouped(Math.round(v));
const f2 = (v: number): string => v.toFixed(2);
const mb = (b: number): string => `${(b / 1e6).toFixed(1)} MB`;

/** A table with an alignment per column (`l` or `r`). */
export function columns(header: string[], rows: string[][], align: readonly ('l' | 'r')[]): string {
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? '').length)));
  const line = (r: string[]): string =>
    r
      .map((c, i) => pad(c, widths[i] ?? 0, align[i] === 'l'))
      .join('  ')
      .trimEnd();
  return [line(header), ...rows.map(line)].map((l) => `  ${l}`).join('\n');
}

/** The outermost frames of a thread or process: on every complete stack, so they rank first and say nothing. */
const THREAD_START =
  /^(clone3?|__clone\d*|start_thread|_start|__libc_start_main.*|__libc_start_call_main|main)$/;

/**
 * Split a ranked list into the functions on (nearly) every stack and the rest: the thread-start frames, and
 * functions on at least 98% as many stacks as they (a thread's main loop), or on 95% of all.
 */
export function rankedFunctions(
  list: readonly FunctionCount[],
  total: number,
): { everywhere: string[]; rows: FunctionCount[] } {
  const starts = list.filter((f) => THREAD_START.test(f.function)).map((f) => f.count);
  const ref = starts.length > 0 ? Math.max(...starts) : total;
  const everywhere: string[] = [];
  const rows: FunctionCount[] = [];
  for (const f of list) {
    const common =
      THREAD_START.test(f.function) ||
      (ref > 0 && f.count >= ref * 0.98) ||
      (total > 0 && f.count >= total * EVERYWHERE);
    if (common) everywhere.push(f.function);
    else rows.push(f);
  }
  return { everywhere, rows };
}

function functionTable(
  title: string,
  list: readonly FunctionCount[],
  total: number,
  ranked: boolean,
): string[] {
  const { everywhere, rows } = rankedFunctions(list, total);
  const out: string[] = [];
  const head =
    everywhere.length > 0
      ? ` (on nearly every stack, not listed: ${everywhere.slice(0, 6).join(', ')}${everywhere.length > 6 ? ', …' : ''})`
      : '';
  out.push(`${title}${ranked ? '' : ' — too few switches to rank'}${head}:`);
  if (rows.length === 0) {
    out.push('  (none)');
    return out;
  }
  out.push(
    columns(
      ['count', '% of switches', 'function', 'in'],
      rows
        .slice(0, TOP)
        .map((f) => [
          int(f.count),
          total > 0 ? ((f.count / total) * 100).toFixed(1) : '-',
          f.function,
          f.module ?? '',
        ]),
      ['r', 'r', 'l', 'l'],
    ),
  );
  return out;
}

function stacksLines(s: StacksProfile): string[] {
  const out: string[] = [];
  const n = s.involuntary + s.voluntary;
  out.push(
    `context switches of ${s.recorded}: ${int(s.involuntary)} involuntary (preempted), ${int(s.voluntary)} voluntary (blocked) in ${f2(s.window_s)} s, ${s.threads} threads; ` +
      `${n > 0 ? ((s.truncated / n) * 100).toFixed(1) : '0.0'}% of stacks cut short at ${s.stack_bytes / 1024} KiB; ${mb(s.data_bytes)} recorded${s.lost > 0 ? `, ${s.lost} chunks lost` : ''}, decoded in ${f2(s.decode_cpu_s)} s of CPU after the run (${s.tool})`,
  );
  out.push(
    ...functionTable(
      'Number of times preempted when in function',
      s.preempted_in,
      s.involuntary,
      s.ranked.preempted,
    ),
  );
  out.push(
    ...functionTable('Number of times blocked when in function', s.blocked_in, s.voluntary, s.ranked.blocked),
  );
  const o = s.off_cpu;
  if (o) {
    out.push(
      `off-CPU time (${o.paired} switches whose thread got a CPU back in the window): ${f2(o.preempted_ms)} ms preempted (waiting for a CPU), ${f2(o.blocked_ms)} ms blocked (sleeping)`,
    );
    // the frames on nearly every stack of either kind say nothing here either
    const common = new Set([
      ...rankedFunctions(s.preempted_in, s.involuntary).everywhere,
      ...rankedFunctions(s.blocked_in, s.voluntary).everywhere,
    ]);
    const rows = o.in
      .filter((f) => !common.has(f.function) && !THREAD_START.test(f.function))
      .map((f) => ({ function: f.function, count: f.ms, ...(f.module ? { module: f.module } : {}) }));
    if (rows.length > 0)
      out.push(
        columns(
          ['ms', 'function', 'in'],
          rows.slice(0, 10).map((f) => [f2(f.count), f.function, f.module ?? '']),
          ['r', 'l', 'l'],
        ),
      );
  }
  if (s.folded_file)
    out.push(
      `folded stacks: ${s.folded_file}${s.off_cpu_file ? `; off-CPU µs by stack: ${s.off_cpu_file}` : ''}`,
    );
  return out;
}

/** The code profile's lines (empty when the run has none). */
export function codeProfileLines(res: RunResult): string[] {
  const p = (res as { profile?: CodeProfile }).profile;
  if (p === undefined) return [];
  const w = p.code_window;
  const out: string[] = [];
  if (w === undefined && p.stacks === undefined && p.calls === undefined) return out;
  if (w) {
    out.push(
      `code profile window: ${f2(w.length_s)} s from ${f2(w.start_s)} s into the measured part (${w.placement === 'centred' ? 'centred' : 'at its start'}; asked ${f2(w.requested_s)} s)`,
    );
    if (w.cost)
      out.push(
        `cost: ${int(w.cost.inside_qps)} q/s inside the window vs ${int(w.cost.outside_qps)} q/s outside it (${f2(w.cost.ratio)}×, ${w.cost.inside_intervals} vs ${w.cost.outside_intervals} intervals) with ${w.cost.what.join(', ') || 'nothing'} running; on a loaded machine part of this is noise`,
      );
  }
  if (p.stacks) out.push(...stacksLines(p.stacks));
  if (p.calls) {
    const len = w?.length_s ?? 0;
    const qps = w?.cost?.inside_qps ?? res.totals.qps;
    const statements = qps * len;
    out.push(
      `Number of times function executed (uprobes, ${f2(len)} s${w?.calls_binary ? `, ${w.calls_binary}` : ''}):`,
    );
    out.push(
      columns(
        ['count', 'per second', 'per query', 'function'],
        Object.entries(p.calls)
          .sort((a, b) => b[1] - a[1])
          .map(([fn, n]) => [
            int(n),
            len > 0 ? int(n / len) : '-',
            statements > 0 ? f2(n / statements) : '-',
            `${fn}${(w?.calls_probes?.[fn] ?? 1) > 1 ? ` (${w?.calls_probes?.[fn]} symbols)` : ''}`,
          ]),
        ['r', 'r', 'r', 'l'],
      ),
    );
  }
  if (p.lock_callers) {
    const from =
      w?.lock_callers_from === 'performance_schema'
        ? `performance_schema history: ${int(w.lock_waits_seen ?? 0)} of the window's ${int(w.lock_waits_total ?? 0)} waits seen; nsec = average wait`
        : 'blocked switches inside a lock wait; nsec = average time off the CPU';
    out.push(`Lock waits by caller (${from}):`);
    if (p.lock_callers.length === 0) out.push('  (none)');
    else
      out.push(
        columns(
          ['Count', 'nsec', 'Lock', 'Caller'],
          p.lock_callers
            .slice(0, TOP)
            .map((l) => [int(l.count), int((l.wait_ms * 1e6) / Math.max(1, l.count)), l.lock, l.caller]),
          ['r', 'r', 'l', 'l'],
        ),
      );
  }
  return out;
}

/** For a sweep's line per run: the top preempted function and the switch counts. */
export function codeSummary(res: RunResult): string | undefined {
  const p = (res as { profile?: CodeProfile }).profile;
  const s = p?.stacks;
  const parts: string[] = [];
  if (s) {
    const top = rankedFunctions(s.preempted_in, s.involuntary).rows[0];
    parts.push(
      `${int(s.involuntary)} preempted / ${int(s.voluntary)} blocked switches${top ? `, preempted most in ${top.function} (${int(top.count)})` : ''}`,
    );
  }
  if (p?.calls)
    parts.push(
      Object.entries(p.calls)
        .map(([f, n]) => `${f} ${int(n)} calls`)
        .join(', '),
    );
  return parts.length > 0 ? parts.join('; ') : undefined;
}
