/**
 * The context switches `perf record` saw, read from `perf script` text and folded into what `profile.stacks`
 * keeps: switch counts by kind, functions ranked by the switches that had them on their stack (each
 * function once per switch), stacks for flame graphs, off-CPU time, and lock waits by caller.
 *
 * The input is the output of
 * `perf script --no-inline --ns --show-switch-events -F tid,time,event,trace,ip,sym,dso`
 * of a recording of `sched:sched_switch` with call graphs, `--switch-events` (PERF_RECORD_SWITCH, which marks
 * when each recorded thread gets a CPU back) and optionally `syscalls:sys_enter_futex` without call graphs
 * (the address a thread is about to sleep on). Pure: feed it lines, read the result.
 *
 * Off-CPU time is the time from a thread's switch-out (the sched_switch sample) to its next switch-in
 * (PERF_RECORD_SWITCH IN of the same thread): for a preempted thread the time it waited for a CPU, for a
 * blocked one the time it slept. The kernel here has no `sched:sched_stat_sleep` (no CONFIG_SCHEDSTATS), so
 * this pairing is the measurement everywhere.
 */
import path from 'node:path';
import { byName } from '../collate.ts';
import type {
  FoldedStack,
  FunctionCount,
  FunctionTime,
  LockCaller,
  OffCpuProfile,
  StacksProfile,
} from '../metrics/stacks-types.ts';
import { round3 } from '../numbers.ts';

/** Below this many switches of a kind, a ranking of functions is mostly noise: the report says so. */
export const MIN_RANK_SWITCHES = 200;
/** How many functions and stacks the RunResult keeps of each list (the rest are counted, not listed). */
export const TOP_FUNCTIONS = 100;
export const TOP_STACKS = 500;

export interface Frame {
  /** Symbol (demangled by perf), or empty when unknown. */
  sym: string;
  /** Base name of the file (`mariadbd`, `libc.so.6`, `[kernel.kallsyms]`). */
  module: string;
  kernel: boolean;
}

/** Where a thread that slept on a futex was: the address perf saw it pass to futex(2). */
type DataSymbolizer = (addr: bigint) => string | undefined;

export interface SwitchStacksOptions {
  /** Name a futex address (a global lock of the server binary), when the binary's symbols are known. */
  dataSymbol?: DataSymbolizer;
}

interface Pending {
  t: number;
  kind: 'preempted' | 'blocked';
  key: string;
  funcs: string[];
  lock?: string;
}

const HEAD = /^\s*(\d+)\s+(\d+)\.(\d+):\s+(.*)$/;
const FRAME = /^\s+([0-9a-f]+)\s+(.*?)\s+\(([^()]*)\)\s*$/;
const SWITCH = /^sched:sched_switch:.*\bprev_state=(\S+)/;
const FUTEX = /^syscalls:sys_enter_futex:\s+uaddr:\s*(0x[0-9a-f]+)/;
/** The outermost frame of a complete user stack: a thread or a process start. */
const THREAD_START = /^(clone3?|__clone\d*|start_thread|_start|__libc_start_main.*|__libc_start_call_main)$/;
/** Waiting on a condition is not waiting for a lock: threads park on conditions when they have nothing to do. */
const COND_WAIT = /pthread_cond_|cond_(timed)?wait|ConditionVariable(Timed)?Sleep/;
/**
 * The lock machinery between a sleeping thread and the server code that wanted the lock: libc's futex and
 * mutex internals, InnoDB's srw/sux locks, PostgreSQL's LWLock and semaphores. The caller is the first named
 * server function above these.
 */
const LOCK_MACHINERY =
  /lll_lock|pthread_mutex_|pthread_rwlock_|mutex_lock|rwlock|rw_lock|rw_pr_|srw_|sux_lock|ssux_|futex|^syscall$|sem_wait|sem_timedwait|PGSemaphoreLock|LWLockAcquire|LWLockWaitForVar|LWLockAcquireOrWait|ProcSleep|spin_wait|wait_and_lock|::(rd|wr|u)_?wait|^psi_|inline_mysql/;

function lockKind(user: readonly Frame[]): string | undefined {
  for (const f of user.slice(0, 8)) {
    if (/LWLockAcquire|LWLockWaitForVar/.test(f.sym)) return 'LWLock';
    if (/^ProcSleep$/.test(f.sym)) return 'heavyweight lock (ProcSleep)';
    if (/pthread_rwlock_/.test(f.sym)) return 'rwlock';
    if (/lll_lock|pthread_mutex_/.test(f.sym)) return 'mutex';
    if (/sem_wait|sem_timedwait|PGSemaphoreLock/.test(f.sym)) return 'semaphore';
  }
  return undefined;
}

function nsOf(sec: string, frac: string): number {
  return Number(sec) * 1e9 + Number(frac.padEnd(9, '0').slice(0, 9));
}

function frameName(f: Frame): string {
  const name = f.sym === '' || f.sym === '[unknown]' ? `[${f.module}]` : f.sym;
  // `;` separates frames in the folded format
  return (f.kernel ? `${name}_[k]` : name).replaceAll(';', ':');
}

function addTo<K>(m: Map<K, number>, k: K, v: number): void {
  m.set(k, (m.get(k) ?? 0) + v);
}

function topEntries<K>(m: Map<K, number>, n: number): Array<[K, number]> {
  return [...m.entries()].sort((a, b) => b[1] - a[1] || byName(String(a[0]), String(b[0]))).slice(0, n);
}

export class SwitchStacks {
  involuntary = 0;
  voluntary = 0;
  truncated = 0;
  private first = Number.POSITIVE_INFINITY;
  private last = 0;
  private readonly tids = new Set<number>();
  private readonly funcs = { preempted: new Map<string, number>(), blocked: new Map<string, number>() };
  private readonly stacks = { preempted: new Map<string, number>(), blocked: new Map<string, number>() };
  private readonly off = {
    stacks: new Map<string, { ms: number; count: number }>(),
    funcs: new Map<string, number>(),
    preempted: 0,
    blocked: 0,
    paired: 0,
  };
  private readonly locks = new Map<string, { count: number; ms: number }>();
  private readonly pending = new Map<number, Pending>();
  private readonly futex = new Map<number, { t: number; addr: bigint }>();
  /** The sample being read: its header was seen, its frames follow. */
  private current: { tid: number; t: number; kind: 'preempted' | 'blocked'; frames: Frame[] } | undefined;

  constructor(private readonly opts: SwitchStacksOptions = {}) {}

  /** Feed one line of `perf script` output. */
  line(text: string): void {
    if (this.current !== undefined) {
      const f = FRAME.exec(text);
      if (f) {
        const module = path.basename(f[3] ?? '');
        this.current.frames.push({
          sym: f[2] ?? '',
          module,
          kernel: module === '[kernel.kallsyms]' || /^ffff/.test(f[1] ?? ''),
        });
        return;
      }
      this.finish();
    }
    const h = HEAD.exec(text);
    if (!h) return;
    const tid = Number(h[1]);
    const t = nsOf(h[2] ?? '0', h[3] ?? '0');
    const rest = h[4] ?? '';
    if (t < this.first) this.first = t;
    if (t > this.last) this.last = t;
    if (rest.startsWith('PERF_RECORD_SWITCH')) {
      if (/^PERF_RECORD_SWITCH IN/.test(rest)) this.switchIn(tid, t);
      return;
    }
    const s = SWITCH.exec(rest);
    if (s) {
      const state = s[1] ?? '';
      this.current = { tid, t, kind: /^R\+?$/.test(state) ? 'preempted' : 'blocked', frames: [] };
      return;
    }
    const fx = FUTEX.exec(rest);
    if (fx?.[1]) this.futex.set(tid, { t, addr: BigInt(fx[1]) });
  }

  /** The input ended. */
  end(): void {
    if (this.current !== undefined) this.finish();
  }

  private switchIn(tid: number, t: number): void {
    const p = this.pending.get(tid);
    if (p === undefined) return;
    this.pending.delete(tid);
    const ms = (t - p.t) / 1e6;
    if (ms < 0) return;
    const o = this.off;
    o.paired++;
    if (p.kind === 'preempted') o.preempted += ms;
    else o.blocked += ms;
    const key = `${p.kind};${p.key}`;
    const s = o.stacks.get(key) ?? { ms: 0, count: 0 };
    s.ms += ms;
    s.count++;
    o.stacks.set(key, s);
    for (const fn of p.funcs) addTo(o.funcs, fn, ms);
    if (p.lock !== undefined) {
      const l = this.locks.get(p.lock);
      if (l) l.ms += ms;
    }
  }

  private finish(): void {
    const c = this.current;
    this.current = undefined;
    if (c === undefined) return;
    this.tids.add(c.tid);
    if (c.kind === 'preempted') this.involuntary++;
    else this.voluntary++;
    const user = c.frames.filter((f) => !f.kernel);
    const root = user[user.length - 1];
    if (root === undefined || !THREAD_START.test(root.sym)) this.truncated++;
    const key = [...c.frames].reverse().map(frameName).join(';');
    addTo(this.stacks[c.kind], key, 1);
    const seen = new Set<string>();
    for (const f of user) {
      if (f.sym === '' || f.sym === '[unknown]') continue;
      seen.add(`${f.sym}\0${f.module}`);
    }
    for (const fn of seen) addTo(this.funcs[c.kind], fn, 1);
    const lock = c.kind === 'blocked' ? this.lockOf(c.tid, c.t, c.frames, user) : undefined;
    if (lock !== undefined) {
      const l = this.locks.get(lock) ?? { count: 0, ms: 0 };
      l.count++;
      this.locks.set(lock, l);
    }
    this.pending.set(c.tid, { t: c.t, kind: c.kind, key, funcs: [...seen], ...(lock ? { lock } : {}) });
  }

  /**
   * A blocked switch inside a lock wait: `lock\0caller`, or undefined for any other sleep (network, I/O,
   * conditions). A futex sleep names its lock by the address passed to futex(2) when it is a global of the
   * server binary, else by the kind of lock; PostgreSQL's LWLock and heavyweight-lock waits by their functions.
   */
  private lockOf(
    tid: number,
    t: number,
    frames: readonly Frame[],
    user: readonly Frame[],
  ): string | undefined {
    const inFutex = frames.some((f) => f.kernel && /futex_wait|futex_do_wait/.test(f.sym));
    const pgLock = user.some((f) => /^(LWLockAcquire|LWLockWaitForVar|ProcSleep)$/.test(f.sym));
    if (!inFutex && !pgLock) return undefined;
    if (user.slice(0, 8).some((f) => COND_WAIT.test(f.sym))) return undefined;
    let caller: string | undefined;
    for (const f of user) {
      if (f.sym === '' || f.sym === '[unknown]') continue;
      if (/^lib(c|pthread)[.-]/.test(f.module) || LOCK_MACHINERY.test(f.sym)) continue;
      caller = f.sym;
      break;
    }
    if (caller === undefined) return undefined;
    let lock = lockKind(user);
    const fx = this.futex.get(tid);
    if (inFutex && fx !== undefined && t - fx.t < 1e9) {
      const named = this.opts.dataSymbol?.(fx.addr);
      if (named !== undefined) lock = named;
    }
    return `${lock ?? 'futex'}\0${caller}`;
  }

  /** Seconds between the first and the last record. */
  get windowS(): number {
    return this.last > this.first ? (this.last - this.first) / 1e9 : 0;
  }

  get threads(): number {
    return this.tids.size;
  }

  private functionList(kind: 'preempted' | 'blocked'): FunctionCount[] {
    return topEntries(this.funcs[kind], TOP_FUNCTIONS).map(([k, count]) => {
      const [fn, module] = k.split('\0');
      return { function: fn ?? '', count, ...(module ? { module } : {}) };
    });
  }

  /** Everything `profile.stacks` keeps but the recording's own figures (tool, sizes, what was recorded). */
  result(): Omit<
    StacksProfile,
    'tool' | 'recorded' | 'stack_bytes' | 'data_bytes' | 'lost' | 'decode_cpu_s'
  > {
    const pre = topEntries(this.stacks.preempted, TOP_STACKS);
    const keptPre = pre.reduce((s, [, n]) => s + n, 0);
    const o = this.off;
    let off: OffCpuProfile | undefined;
    if (o.paired > 0) {
      const all = [...o.stacks.entries()].sort((a, b) => b[1].ms - a[1].ms);
      const kept = all.slice(0, TOP_STACKS);
      const rest = all.slice(TOP_STACKS);
      const inFn: FunctionTime[] = topEntries(o.funcs, TOP_FUNCTIONS).map(([k, ms]) => {
        const [fn, module] = k.split('\0');
        return { function: fn ?? '', ms: round3(ms), ...(module ? { module } : {}) };
      });
      off = {
        measured_by:
          'perf: each switch-out (sched:sched_switch) to the next switch-in of the same thread (PERF_RECORD_SWITCH)',
        paired: o.paired,
        total_ms: round3(o.preempted + o.blocked),
        preempted_ms: round3(o.preempted),
        blocked_ms: round3(o.blocked),
        in: inFn,
        stacks: kept.map(([stack, v]) => ({ stack, count: v.count, ms: round3(v.ms) })),
        other_stacks: rest.length,
        other_ms: round3(rest.reduce((s, [, v]) => s + v.ms, 0)),
      };
    }
    const preemptedStacks: FoldedStack[] = pre.map(([stack, count]) => ({ stack, count }));
    return {
      window_s: round3(this.windowS),
      threads: this.tids.size,
      involuntary: this.involuntary,
      voluntary: this.voluntary,
      preempted_in: this.functionList('preempted'),
      blocked_in: this.functionList('blocked'),
      ranked: {
        preempted: this.involuntary >= MIN_RANK_SWITCHES,
        blocked: this.voluntary >= MIN_RANK_SWITCHES,
      },
      min_switches: MIN_RANK_SWITCHES,
      preempted_stacks: preemptedStacks,
      other_preempted_stacks: this.involuntary - keptPre,
      ...(off ? { off_cpu: off } : {}),
      truncated: this.truncated,
    };
  }

  /** Every stack with its switch count, root frame `preempted` or `blocked`: the `--stacks-out` file. */
  foldedCounts(): string {
    const lines: string[] = [];
    for (const kind of ['preempted', 'blocked'] as const) {
      for (const [stack, n] of [...this.stacks[kind].entries()].sort((a, b) => b[1] - a[1]))
        lines.push(`${kind};${stack} ${n}`);
    }
    return lines.length > 0 ? `${lines.join('\n')}\n` : '';
  }

  /** Off-CPU microseconds by stack: the `.off-cpu` file beside `--stacks-out`. */
  foldedOffCpu(): string {
    const lines = [...this.off.stacks.entries()]
      .sort((a, b) => b[1].ms - a[1].ms)
      .map(([stack, v]) => `${stack} ${Math.max(1, Math.round(v.ms * 1000))}`);
    return lines.length > 0 ? `${lines.join('\n')}\n` : '';
  }

  /** Lock waits by lock and caller, most waits first. */
  lockCallers(): LockCaller[] {
    return [...this.locks.entries()]
      .map(([k, v]) => {
        const [lock, caller] = k.split('\0');
        return { lock: lock ?? '', caller: caller ?? '', count: v.count, wait_ms: round3(v.ms) };
      })
      .sort((a, b) => b.count - a.count || b.wait_ms - a.wait_ms);
  }
}
