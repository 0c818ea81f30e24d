/**
 * Reading Linux per-thread scheduling counters from /proc: the raw material of a `prstat -mL` for Linux.
 * Parsers are pure (tested on fixed text); readers return undefined for a thread that exited meanwhile.
 */
import { execFileSync } from 'node:child_process';
import { readdir, readFile } from 'node:fs/promises';

/** One reading of one thread (task). Times in nanoseconds or clock ticks, as the kernel counts them. */
export interface TaskReading {
  pid: number;
  tid: number;
  /** Thread name (`comm`, at most 15 characters). */
  comm: string;
  /** Process state letter (R, S, D, …). */
  state: string;
  /** User and system CPU time, clock ticks (/proc/…/stat fields 14 and 15). */
  utimeTicks: number;
  stimeTicks: number;
  nice: number;
  /** Scheduling policy number (0 other, 1 fifo, 2 rr, 3 batch, 5 idle) and real-time priority. */
  policy: number;
  rtPriority: number;
  /** From schedstat: time on a CPU and time runnable but waiting for one, ns; timeslices run. */
  runNs: number;
  waitNs: number;
  timeslices: number;
  voluntary: number;
  involuntary: number;
  /** CPUs the thread may run on, as the kernel lists them (`0-1`). */
  cpusAllowed: string;
  /** process.hrtime.bigint() when read, ns. */
  atNs: bigint;
}

/** The fields of /proc/…/stat after the command name, which may itself hold spaces and parentheses. */
export function parseStat(text: string): { comm: string; fields: string[] } {
  const open = text.indexOf('(');
  const close = text.lastIndexOf(')');
  if (open < 0 || close < open) throw new Error(`unexpected /proc stat line: ${text.slice(0, 60)}`);
  // fields[0] is field 3 (state) of proc(5).
  return {
    comm: text.slice(open + 1, close),
    fields: text
      .slice(close + 2)
      .trim()
      .split(/\s+/),
  };
}

/** Field N (1-based, as proc(5) numbers them) of a parsed stat line, as a number. */
export function statField(fields: string[], n: number): number {
  return Number(fields[n - 3] ?? 'NaN');
}

/** `run_ns wait_ns timeslices` of /proc/…/schedstat. */
export function parseSchedstat(text: string): { runNs: number; waitNs: number; timeslices: number } {
  const [run, wait, slices] = text.trim().split(/\s+/).map(Number);
  return { runNs: run ?? 0, waitNs: wait ?? 0, timeslices: slices ?? 0 };
}

/** The context switch counters and allowed CPUs of /proc/…/status. */
export function parseStatus(text: string): { voluntary: number; involuntary: number; cpusAllowed: string } {
  const v = /^voluntary_ctxt_switches:\s*(\d+)/m.exec(text);
  const i = /^nonvoluntary_ctxt_switches:\s*(\d+)/m.exec(text);
  const c = /^Cpus_allowed_list:\s*(\S+)/m.exec(text);
  return { voluntary: Number(v?.[1] ?? 0), involuntary: Number(i?.[1] ?? 0), cpusAllowed: c?.[1] ?? '' };
}

/** Combine the three files of one task into a reading. */
export function taskReading(
  pid: number,
  tid: number,
  stat: string,
  status: string,
  schedstat: string,
  atNs: bigint,
): TaskReading {
  const { comm, fields } = parseStat(stat);
  const s = parseStatus(status);
  const ss = parseSchedstat(schedstat);
  return {
    pid,
    tid,
    comm,
    state: fields[0] ?? '?',
    utimeTicks: statField(fields, 14),
    stimeTicks: statField(fields, 15),
    nice: statField(fields, 19),
    rtPriority: statField(fields, 40),
    policy: statField(fields, 41),
    ...ss,
    ...s,
    atNs,
  };
}

/** Read one task; undefined when it has gone (threads come and go while we read). */
export async function readTask(pid: number, tid: number): Promise<TaskReading | undefined> {
  const dir = `/proc/${pid}/task/${tid}`;
  try {
    const [stat, status, schedstat] = await Promise.all([
      readFile(`${dir}/stat`, 'utf8'),
      readFile(`${dir}/status`, 'utf8'),
      readFile(`${dir}/schedstat`, 'utf8').catch(() => '0 0 0'),
    ]);
    return taskReading(pid, tid, stat, status, schedstat, process.hrtime.bigint());
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT' || (e as NodeJS.ErrnoException).code === 'ESRCH')
      return undefined;
    throw e;
  }
}

/** Thread ids of a process (empty when it has gone). Throws EACCES/EPERM when we may not look. */
export async function listTasks(pid: number): Promise<number[]> {
  try {
    return (await readdir(`/proc/${pid}/task`)).map(Number).filter((n) => Number.isInteger(n));
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return [];
    throw e;
  }
}

/** Every thread of every process in `pids`. */
export async function readTasks(pids: readonly number[]): Promise<TaskReading[]> {
  const out: TaskReading[] = [];
  for (const pid of pids) {
    const tids = await listTasks(pid);
    const readings = await Promise.all(tids.map((tid) => readTask(pid, tid)));
    for (const r of readings) if (r) out.push(r);
  }
  return out;
}

/** Parent pid and command name of a process, or undefined when it does not exist. */
export async function processInfo(
  pid: number,
): Promise<{ ppid: number; comm: string; cmdline: string } | undefined> {
  try {
    const { comm, fields } = parseStat(await readFile(`/proc/${pid}/stat`, 'utf8'));
    const cmdline = (await readFile(`/proc/${pid}/cmdline`, 'utf8').catch(() => ''))
      .replace(/\0+$/, '')
      .replace(/\0/g, ' ')
      .trim();
    return { ppid: statField(fields, 4), comm, cmdline };
  } catch {
    return undefined;
  }
}

/** Pids of the direct children of `ppid`, found by scanning /proc (no per-process children file is reliable). */
export async function childPids(ppid: number): Promise<number[]> {
  const out: number[] = [];
  for (const name of await readdir('/proc')) {
    const pid = Number(name);
    if (!Number.isInteger(pid)) continue;
    try {
      const { fields } = parseStat(await readFile(`/proc/${pid}/stat`, 'utf8'));
      if (statField(fields, 4) === ppid) out.push(pid);
    } catch {
      // exited while we looked
    }
  }
  return out;
}

let clkTck: number | undefined;

/** Clock ticks per second of utime/stime (`getconf CLK_TCK`; 100 on every common Linux). */
export function clockTicks(): number {
  if (clkTck === undefined) {
    try {
      clkTck = Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim()) || 100;
    } catch {
      clkTck = 100;
    }
  }
  return clkTck;
}

/** The three load averages of /proc/loadavg. */
export async function readLoadAvg(): Promise<[number, number, number] | undefined> {
  try {
    const [a, b, c] = (await readFile('/proc/loadavg', 'utf8')).split(/\s+/).map(Number);
    return [a ?? 0, b ?? 0, c ?? 0];
  } catch {
    return undefined;
  }
}

/** Names of the scheduling policies by number, as chrt calls them. */
export const POLICY_NAMES: Record<number, string> = {
  0: 'other',
  1: 'fifo',
  2: 'rr',
  3: 'batch',
  5: 'idle',
  6: 'deadline',
};
