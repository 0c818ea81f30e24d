/**
 * Per-function ratios between runs of a comparison: how much more often a candidate's server threads were
 * preempted (or blocked) in a function, or ran it, than the base's — the story's "458× more often in
 * open_table". Rates are per second of each run's code-profile window, so windows of different lengths
 * compare; a function the base never showed gets no ratio (Infinity), one the candidate never showed 0.
 */
import type { ProfileData } from '../metrics/profile-types.ts';
import type { CodeProfileFields, FunctionCount } from '../metrics/stacks-types.ts';

type CodeProfiled = { profile?: ProfileData & CodeProfileFields };

export interface FunctionRatioRow {
  function: string;
  /** Per second of window, one per run (undefined when the run has no such profile). */
  rates: Array<number | undefined>;
  /** candidate / base, one per candidate run (the runs after the first). */
  ratios: Array<number | undefined>;
}

export interface FunctionRatios {
  kind: 'preempted' | 'blocked' | 'calls';
  rows: FunctionRatioRow[];
}

/** Functions on (nearly) every stack: thread starts and main loops rank first in every run and say nothing. */
const THREAD_START =
  /^(clone3?|__clone\d*|start_thread|_start|__libc_start_main.*|__libc_start_call_main|main)$/;

function ratesOf(
  list: readonly FunctionCount[] | undefined,
  total: number,
  seconds: number,
): Map<string, number> {
  const out = new Map<string, number>();
  if (list === undefined || seconds <= 0) return out;
  const starts = list.filter((f) => THREAD_START.test(f.function)).map((f) => f.count);
  const ref = starts.length > 0 ? Math.max(...starts) : total;
  for (const f of list) {
    if (THREAD_START.test(f.function) || (ref > 0 && f.count >= ref * 0.98)) continue;
    out.set(f.function, f.count / seconds);
  }
  return out;
}

function table(
  kind: FunctionRatios['kind'],
  per: Array<Map<string, number> | undefined>,
  top: number,
): FunctionRatios {
  const names = new Map<string, number>();
  for (const m of per) {
    if (!m) continue;
    const ranked = [...m.entries()].sort((a, b) => b[1] - a[1]).slice(0, top);
    for (const [fn, v] of ranked) names.set(fn, Math.max(names.get(fn) ?? 0, v));
  }
  const base = per[0];
  const rows = [...names.entries()]
    .sort((a, b) => b[1] - a[1])
    .map(([fn]) => {
      const rates = per.map((m) => (m ? (m.get(fn) ?? 0) : undefined));
      const b = base ? (base.get(fn) ?? 0) : undefined;
      const ratios = rates.slice(1).map((r) => {
        if (r === undefined || b === undefined) return undefined;
        if (b === 0) return r === 0 ? undefined : Number.POSITIVE_INFINITY;
        return r / b;
      });
      return { function: fn, rates, ratios };
    });
  return { kind, rows };
}

/**
 * The per-function tables of runs (base first): preemptions, blocks and calls per second, with ratios
 * candidate/base. Only the kinds some run measured; `top` functions of each run.
 */
export function functionRatios(runs: readonly CodeProfiled[], top = 12): FunctionRatios[] {
  const out: FunctionRatios[] = [];
  const seconds = (r: CodeProfiled): number => r.profile?.stacks?.window_s ?? 0;
  if (runs.some((r) => r.profile?.stacks)) {
    out.push(
      table(
        'preempted',
        runs.map((r) =>
          r.profile?.stacks
            ? ratesOf(r.profile.stacks.preempted_in, r.profile.stacks.involuntary, seconds(r))
            : undefined,
        ),
        top,
      ),
    );
    out.push(
      table(
        'blocked',
        runs.map((r) =>
          r.profile?.stacks
            ? ratesOf(r.profile.stacks.blocked_in, r.profile.stacks.voluntary, seconds(r))
            : undefined,
        ),
        top,
      ),
    );
  }
  if (runs.some((r) => r.profile?.calls)) {
    out.push(
      table(
        'calls',
        runs.map((r) => {
          const c = r.profile?.calls;
          const s = r.profile?.code_window?.length_s ?? 0;
          if (c === undefined || s <= 0) return undefined;
          return new Map(Object.entries(c).map(([fn, n]) => [fn, n / s]));
        }),
        top,
      ),
    );
  }
  return out.filter((t) => t.rows.length > 0);
}
