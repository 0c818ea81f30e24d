/**
 * Linux `perf` as dbsmack uses it for `--profile-stacks` and `--count-calls`: is it there and may we use it,
 * running it in its own process group (a Ctrl-C meant for dbsmack must not cut a `perf probe --del` short),
 * and what belongs to this process, so that nothing is left behind: temporary directories named
 * `dbsmack-stacks-PID-*`, uprobe events in the group `dbsmack_PID`, and perf processes working for them.
 * Whatever a killed dbsmack left is removed at the next start (`cleanLeftovers`), and a dbsmack that exits
 * in the middle (a second Ctrl-C) removes its own on the way out (`onExitCleanup`).
 */
import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { access, readFile, readlink, stat } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import type { ProfileNote } from '../metrics/profile-types.ts';

export const PERF_INSTALL_HINT =
  'install perf: apt-get install linux-perf (Debian), linux-tools-$(uname -r) (Ubuntu), dnf install perf (Fedora)';

/** The uprobe group of this process: only dbsmack's own probes are ever removed. */
export function probeGroup(pid = process.pid): string {
  return `dbsmack_${pid}`;
}

/** Prefix of this process's temporary directories. */
export function tempPrefix(pid = process.pid): string {
  return `dbsmack-stacks-${pid}-`;
}

export interface RunOutput {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

/** Run a perf command to its end (bounded by `timeoutMs`), in its own process group. */
export function runPerf(args: string[], timeoutMs = 60_000): Promise<RunOutput> {
  return new Promise((resolve) => {
    let child: ChildProcess;
    try {
      child = spawn('perf', args, { detached: true, stdio: ['ignore', 'pipe', 'pipe'] });
    } catch (e) {
      resolve({ code: null, signal: null, stdout: '', stderr: (e as Error).message });
      return;
    }
    const out: Buffer[] = [];
    const err: Buffer[] = [];
    child.stdout?.on('data', (d: Buffer) => out.push(d));
    child.stderr?.on('data', (d: Buffer) => err.push(d));
    const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
    const finish = (code: number | null, signal: NodeJS.Signals | null, extra = ''): void => {
      clearTimeout(timer);
      resolve({
        code,
        signal,
        stdout: Buffer.concat(out).toString(),
        stderr: Buffer.concat(err).toString() + extra,
      });
    };
    child.on('error', (e: NodeJS.ErrnoException) =>
      finish(null, null, e.code === 'ENOENT' ? 'perf: command not found' : e.message),
    );
    child.on('close', (code, signal) => finish(code, signal));
  });
}

let versionCache: Promise<string | undefined> | undefined;

/** `perf version 6.1.x`, or undefined when perf cannot be run. */
export function perfVersion(): Promise<string | undefined> {
  versionCache ??= runPerf(['--version'], 10_000).then((r) =>
    r.code === 0 ? r.stdout.trim() || 'perf' : undefined,
  );
  return versionCache;
}

/**
 * Why perf cannot do `what` here, as a note with the way out; undefined when it can. Root may do everything;
 * anyone else needs CAP_PERFMON (or kernel.perf_event_paranoid -1) for tracepoints, the right to trace the
 * server's processes, and for uprobes the right to write /sys/kernel/tracing/uprobe_events (root).
 */
export async function perfBlocked(what: string, uprobes: boolean): Promise<ProfileNote | undefined> {
  const version = await perfVersion();
  if (version === undefined) return { what, why: 'perf is not installed', hint: PERF_INSTALL_HINT };
  const root = process.geteuid?.() === 0;
  if (!root && uprobes) {
    return {
      what,
      why: 'placing uprobes writes /sys/kernel/tracing/uprobe_events, which only root may do',
      hint: 'run dbsmack as root (sudo) for --count-calls',
    };
  }
  if (!root) {
    let paranoid = Number.NaN;
    try {
      paranoid = Number((await readFile('/proc/sys/kernel/perf_event_paranoid', 'utf8')).trim());
    } catch {
      // not Linux, or /proc hidden: perf itself will say
    }
    if (!(paranoid <= -1)) {
      return {
        what,
        why: `recording scheduler tracepoints of another user's server needs root or CAP_PERFMON (kernel.perf_event_paranoid is ${Number.isNaN(paranoid) ? 'unknown' : paranoid})`,
        hint: 'run dbsmack as root, or sysctl kernel.perf_event_paranoid=-1 and give it CAP_PERFMON and CAP_SYS_PTRACE',
      };
    }
  }
  // looking is enough to have the kernel mount tracefs where it can
  let tracefs: 'ok' | 'missing' | 'denied' = 'missing';
  for (const d of ['/sys/kernel/tracing', '/sys/kernel/debug/tracing']) {
    try {
      statSync(path.join(d, 'events'));
      tracefs = 'ok';
      break;
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code === 'EACCES') tracefs = 'denied';
    }
  }
  if (tracefs === 'denied') {
    return {
      what,
      why: 'tracefs (/sys/kernel/tracing) is readable by root only, and perf reads the tracepoints’ formats there',
      hint: 'run dbsmack as root, or give its user access to /sys/kernel/tracing (mount option gid=, mode=)',
    };
  }
  if (tracefs === 'missing') {
    return {
      what,
      why: 'tracefs is not available (/sys/kernel/tracing/events is missing): perf cannot see scheduler tracepoints or place uprobes',
      hint: 'mount -t tracefs nodev /sys/kernel/tracing as root; in a container, give it the host’s /sys/kernel/tracing',
    };
  }
  return undefined;
}

/** The file a process runs, when it can be read here (not another mount namespace, not hidden). */
export async function serverBinary(pid: number): Promise<{ path: string } | { note: ProfileNote }> {
  const what = 'stacks';
  let exe: string;
  try {
    exe = await readlink(`/proc/${pid}/exe`);
  } catch (e) {
    return {
      note: {
        what,
        why: `cannot read /proc/${pid}/exe (${(e as NodeJS.ErrnoException).code}): the server runs as another user`,
        hint: 'run dbsmack as root or as the server’s user',
      },
    };
  }
  const real = exe.replace(/ \(deleted\)$/, '');
  try {
    await access(real);
    const a = await stat(`/proc/${pid}/exe`);
    const b = await stat(real);
    if (a.ino !== b.ino || a.dev !== b.dev) throw new Error('another file');
  } catch {
    return {
      note: {
        what,
        why: exe.endsWith(' (deleted)')
          ? `the server's binary ${real} was replaced after the server started (an upgrade): its symbols no longer match`
          : `the server's binary ${real} cannot be read here: the server runs in a container or another mount namespace`,
        hint: exe.endsWith(' (deleted)')
          ? 'restart the server'
          : 'run dbsmack inside the server’s container, or install perf there',
      },
    };
  }
  return { path: real };
}

function pidAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ESRCH') return false;
  }
  // a reused pid is not ours
  try {
    return readFileSync(`/proc/${pid}/cmdline`, 'utf8').includes('dbsmack');
  } catch {
    return false;
  }
}

/** Perf processes whose command line names something of a dbsmack process `owner`. */
function perfProcessesOf(owner: number): number[] {
  const out: number[] = [];
  let entries: string[];
  try {
    entries = readdirSync('/proc');
  } catch {
    return out;
  }
  const marks = [`${probeGroup(owner)}:`, tempPrefix(owner)];
  for (const e of entries) {
    if (!/^\d+$/.test(e)) continue;
    try {
      const argv = readFileSync(`/proc/${e}/cmdline`, 'utf8').split('\0');
      if (!/(^|\/)perf$/.test(argv[0] ?? '')) continue;
      if (argv.some((a) => marks.some((m) => a.includes(m)))) out.push(Number(e));
    } catch {
      // gone meanwhile
    }
  }
  return out;
}

/** The uprobe groups of dbsmack processes that hold probes now, from the kernel's list. */
function dbsmackProbeGroups(): number[] {
  for (const f of ['/sys/kernel/tracing/uprobe_events', '/sys/kernel/debug/tracing/uprobe_events']) {
    let text: string;
    try {
      text = readFileSync(f, 'utf8');
    } catch {
      continue;
    }
    const owners = new Set<number>();
    for (const m of text.matchAll(/^[pr]:dbsmack_(\d+)\//gm)) owners.add(Number(m[1]));
    return [...owners];
  }
  return [];
}

/**
 * A note a run keeps in its temporary directory while it has changed a server setting (the performance
 * schema's consumers): a run killed meanwhile leaves it, and the next run against that server puts the
 * setting back. No password is in it.
 */
export const MARKER = 'server-settings.json';

/** A killed run's marker, left in its directory until a run against that server has put the settings back. */
export interface LeftMarker {
  dir: string;
  marker: unknown;
}

/** Remove a run's temporary directory, except its marker while that still names settings to put back. */
export function removeRunDir(dir: string): void {
  let keep = false;
  try {
    keep = readFileSync(path.join(dir, MARKER), 'utf8').trim() !== '';
  } catch {
    // no marker
  }
  if (!keep) {
    rmSync(dir, { recursive: true, force: true });
    return;
  }
  for (const e of readdirSync(dir))
    if (e !== MARKER) rmSync(path.join(dir, e), { recursive: true, force: true });
}

/**
 * Remove what dbsmack processes that no longer run left behind: their perf processes (stopped), uprobe
 * groups and temporary directories. Never touches a live dbsmack's. Returns what was cleaned, in words, and
 * the markers of server settings still to be put back (by a run against that server).
 */
export async function cleanLeftovers(): Promise<{ cleaned: string[]; markers: LeftMarker[] }> {
  const cleaned: string[] = [];
  const markers: LeftMarker[] = [];
  const owners = new Set<number>();
  for (const o of dbsmackProbeGroups()) owners.add(o);
  const tmp = os.tmpdir();
  let dirs: string[] = [];
  try {
    dirs = readdirSync(tmp).filter((d) => /^dbsmack-stacks-\d+-/.test(d));
  } catch {
    // no temporary directory to look at
  }
  for (const d of dirs) owners.add(Number(/^dbsmack-stacks-(\d+)-/.exec(d)?.[1]));
  for (const owner of owners) {
    if (owner === process.pid || pidAlive(owner)) continue;
    for (const p of perfProcessesOf(owner)) {
      try {
        // perf runs as the leader of its own process group, with its `sleep`
        process.kill(-p, 'SIGINT');
        cleaned.push(`stopped perf process ${p} of dbsmack ${owner}`);
      } catch {
        // already gone
      }
    }
    if (dbsmackProbeGroups().includes(owner)) {
      let r = await runPerf(['probe', '-q', '-d', `${probeGroup(owner)}:*`], 30_000);
      // a perf that still counts them holds the probes until it has exited
      for (let i = 0; i < 20 && r.code !== 0 && perfProcessesOf(owner).length > 0; i++) {
        await new Promise((res) => setTimeout(res, 100));
        r = await runPerf(['probe', '-q', '-d', `${probeGroup(owner)}:*`], 30_000);
      }
      if (r.code === 0) cleaned.push(`removed the uprobes ${probeGroup(owner)}:* of dbsmack ${owner}`);
    }
    for (const d of dirs.filter((x) => x.startsWith(tempPrefix(owner)))) {
      const dir = path.join(tmp, d);
      removeRunDir(dir);
      try {
        markers.push({ dir, marker: JSON.parse(readFileSync(path.join(dir, MARKER), 'utf8')) });
      } catch {
        cleaned.push(`removed ${dir}`);
      }
    }
  }
  return { cleaned, markers };
}

/** What to undo synchronously if this process exits before a probe's stop() ran. */
interface ExitDuty {
  children: Set<ChildProcess>;
  dirs: Set<string>;
  probes: boolean;
}

const duty: ExitDuty = { children: new Set(), dirs: new Set(), probes: false };
let hooked = false;

function exitCleanup(): void {
  for (const c of duty.children) {
    try {
      if (c.pid !== undefined && c.exitCode === null) process.kill(-c.pid, 'SIGINT');
    } catch {
      // gone
    }
  }
  if (duty.probes) {
    // the perf stat just stopped may hold the probes for a moment: try for up to a second
    const wait = new Int32Array(new SharedArrayBuffer(4));
    for (let i = 0; i < 20; i++) {
      try {
        execFileSync('perf', ['probe', '-q', '-d', `${probeGroup()}:*`], { stdio: 'ignore', timeout: 5000 });
        break;
      } catch {
        Atomics.wait(wait, 0, 0, 50);
      }
    }
  }
  for (const d of duty.dirs) removeRunDir(d);
}

function hook(): void {
  if (hooked) return;
  hooked = true;
  process.on('exit', exitCleanup);
}

/** Track a perf child, a temporary directory or this process's uprobes until `release`. */
export const onExitCleanup = {
  child(c: ChildProcess): void {
    hook();
    duty.children.add(c);
    c.on('close', () => duty.children.delete(c));
  },
  dir(d: string): void {
    hook();
    duty.dirs.add(d);
  },
  releaseDir(d: string): void {
    duty.dirs.delete(d);
  },
  probes(on: boolean): void {
    hook();
    duty.probes = on;
  },
};
