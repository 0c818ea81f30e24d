/**
 * Recording the server's context switches with their stacks (`perf record`), and decoding the recording
 * (`perf script`) into a SwitchStacks.
 *
 * perf starts before the measured part with its events disabled (`-D -1`), so that attaching to the server's
 * threads (which takes a moment per thread) does not eat into the window; dbsmack enables and disables the
 * events through perf's control descriptors at the window's edges. Everything is bounded: the user stack
 * copied per switch (`STACK_BYTES`), the kernel buffer (`MMAP`), the file (`MAX_SIZE`: perf stops writing
 * beyond it), and perf's own life (`-- sleep N`, so that a perf whose dbsmack was killed ends by itself).
 *
 * Sizes measured here (2 cores, MariaDB, oltp_read_only, 16 clients): about 14,000 switches/s, 16 KiB of
 * stack each, so some 100-250 MB per second of window; 8 KiB stacks reached the thread's start in 83% of
 * switches, 16 KiB in 98.5% (README "Where in the server's code").
 */
import type { ChildProcess } from 'node:child_process';
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { stat } from 'node:fs/promises';
import path from 'node:path';
import { createInterface } from 'node:readline';
import type { Readable, Writable } from 'node:stream';
import { round2 } from '../numbers.ts';
import { onExitCleanup } from './perf-tool.ts';
import { clockTicks } from './proc-tasks.ts';
import type { SwitchStacks } from './switch-stacks.ts';

/** User stack bytes copied per switch: deep enough for MariaDB's executor stacks (see above). */
export const STACK_BYTES = 16384;
/** Kernel ring buffer per CPU: a smaller one drops records (LOST) at these rates. */
export const MMAP = '32M';
/** perf stops writing at this size; the window is then shorter than asked, and the report says so. */
export const MAX_SIZE = '512M';

/**
 * The futex operations that put a thread to sleep waiting for a lock word (FUTEX_WAIT, FUTEX_WAIT_BITSET,
 * FUTEX_LOCK_PI, with or without FUTEX_PRIVATE_FLAG): their address names the lock.
 */
const FUTEX_FILTER = 'op == 0 || op == 128 || op == 9 || op == 137 || op == 6 || op == 134';

export interface RecordOptions {
  dir: string;
  pids: readonly number[];
  /** Longest life of perf, seconds (it ends by itself after it). */
  lifeS: number;
  /** Also record futex waits' addresses (to name the locks threads slept on). */
  futex: boolean;
}

/**
 * A perf command started with its events disabled (`-D -1 --control fd:3,4`), in its own process group:
 * `ready()` waits until it has attached, `enable()`/`disable()` open and close the window, `stop()` ends it.
 */
export class PerfSession {
  private readonly child: ChildProcess;
  private readonly ctl: Writable;
  private readonly ack: Readable;
  private acks: Array<(ok: boolean) => void> = [];
  private stderr = '';
  private readonly exited: Promise<number | null>;
  private exitCode: number | null | undefined;

  constructor(
    private readonly name: string,
    args: string[],
  ) {
    this.child = spawn('perf', args, { detached: true, stdio: ['ignore', 'ignore', 'pipe', 'pipe', 'pipe'] });
    onExitCleanup.child(this.child);
    this.ctl = this.child.stdio[3] as Writable;
    this.ack = this.child.stdio[4] as Readable;
    this.ctl.on('error', () => {});
    this.ack.on('error', () => {});
    let buf = '';
    this.ack.on('data', (d: Buffer) => {
      buf += d.toString();
      let i = buf.indexOf('\n');
      while (i >= 0) {
        const line = buf.slice(0, i).replace(/\0/g, '').trim();
        buf = buf.slice(i + 1);
        if (line !== '') this.acks.shift()?.(true);
        i = buf.indexOf('\n');
      }
    });
    this.child.stderr?.on('data', (d: Buffer) => {
      if (this.stderr.length < 20_000) this.stderr += d.toString();
    });
    this.exited = new Promise((resolve) => {
      this.child.on('error', (e) => {
        this.stderr += e.message;
        this.exitCode = null;
        resolve(null);
      });
      this.child.on('close', (code) => {
        this.exitCode = code;
        for (const a of this.acks.splice(0)) a(false);
        resolve(code);
      });
    });
  }

  /** Send a control command and wait for perf's ack (false when perf exited or did not answer in time). */
  private command(cmd: string, timeoutMs: number): Promise<boolean> {
    if (this.exitCode !== undefined) return Promise.resolve(false);
    return new Promise((resolve) => {
      const done = (ok: boolean): void => {
        clearTimeout(timer);
        resolve(ok);
      };
      const timer = setTimeout(() => {
        this.acks = this.acks.filter((a) => a !== done);
        resolve(false);
      }, timeoutMs);
      this.acks.push(done);
      this.ctl.write(`${cmd}\n`);
    });
  }

  /** Wait until perf has attached to every thread; an error text when it failed to. */
  async ready(timeoutMs = 20_000): Promise<string | undefined> {
    const ok = await Promise.race([this.command('ping', timeoutMs), this.exited.then(() => false)]);
    if (ok) return undefined;
    if (this.exitCode === undefined) {
      this.kill();
      return `${this.name} did not get ready within ${timeoutMs / 1000} s`;
    }
    return this.failure();
  }

  /** perf's own words on why it stopped, trimmed to what matters. */
  failure(): string {
    return this.words().slice(0, 4).join(' ') || `${this.name} exited with ${this.exitCode}`;
  }

  private words(): string[] {
    return this.stderr
      .split('\n')
      .map((l) => l.trim())
      .filter((l) => l !== '' && !/^\[ perf record:|^Warning:$/.test(l));
  }

  /**
   * perf exited before it was ready without saying why. `perf record -q` keeps quiet about failing to
   * attach (a pid that is gone: exit 244, nothing on stderr); in CI it once exited 255 without a word as
   * the second arm of a comparison started, most likely a thread of the server that ended between perf
   * listing the threads and opening its events on each. Another try lists them again.
   */
  get exitedSilently(): boolean {
    return this.exitCode !== undefined && this.exitCode !== null && this.words().length === 0;
  }

  enable(): Promise<boolean> {
    return this.command('enable', 5000);
  }

  disable(): Promise<boolean> {
    return this.command('disable', 5000);
  }

  /**
   * Stop perf (it writes its output and exits); resolves when it has exited. The signal goes to perf's whole
   * process group: `perf stat` waits for its `sleep` to end before it exits.
   */
  async stop(timeoutMs = 30_000): Promise<void> {
    if (this.exitCode === undefined) {
      try {
        if (this.child.pid !== undefined) process.kill(-this.child.pid, 'SIGINT');
      } catch {
        // exited meanwhile
      }
    }
    const timer = setTimeout(() => this.kill(), timeoutMs);
    await this.exited;
    clearTimeout(timer);
  }

  private kill(): void {
    try {
      if (this.child.pid !== undefined) process.kill(-this.child.pid, 'SIGKILL');
    } catch {
      // gone
    }
  }

  /** What perf wrote on stderr. */
  get messages(): string {
    return this.stderr;
  }
}

/** `perf record` of the server's context switches with their stacks, into `dir/perf.data`. */
export function startRecord(o: RecordOptions): { session: PerfSession; file: string } {
  const file = path.join(o.dir, 'perf.data');
  const args = [
    'record',
    '-q',
    '-B', // no build-id pass over the file at the end (it reads the whole file again)
    '-N',
    '-k',
    'mono', // timestamps on CLOCK_MONOTONIC, the clock dbsmack times the window with
    '-D',
    '-1', // start disabled: enabled through the control descriptor
    '--control',
    'fd:3,4',
    '-o',
    file,
    '-m',
    MMAP,
    '--max-size',
    MAX_SIZE,
    '--switch-events',
    '--call-graph',
    `dwarf,${STACK_BYTES}`,
    '-e',
    'sched:sched_switch',
    ...(o.futex ? ['-e', 'syscalls:sys_enter_futex/call-graph=no/', '--filter', FUTEX_FILTER] : []),
    '-p',
    o.pids.join(','),
    '--',
    'sleep',
    String(Math.max(1, Math.ceil(o.lifeS))),
  ];
  return { session: new PerfSession('perf record', args), file };
}

function childCpuSeconds(): number {
  try {
    const f = readFileSync('/proc/self/stat', 'utf8');
    const fields = f.slice(f.lastIndexOf(')') + 2).split(' ');
    // cutime and cstime: CPU of the children waited for, in clock ticks
    return (Number(fields[13]) + Number(fields[14])) / clockTicks();
  } catch {
    return 0;
  }
}

export interface Decoded {
  bytes: number;
  /** Chunks or events perf says were lost (the kernel buffer was full). */
  lost: number;
  cpuS: number;
  error?: string;
}

/** Run `perf script` over a recording and feed every line to `into`. */
export async function decodeRecording(
  file: string,
  into: SwitchStacks,
  timeoutMs = 300_000,
): Promise<Decoded> {
  let bytes = 0;
  try {
    bytes = (await stat(file)).size;
  } catch {
    return { bytes: 0, lost: 0, cpuS: 0, error: 'perf wrote no recording' };
  }
  const cpu0 = process.cpuUsage();
  const child0 = childCpuSeconds();
  const child = spawn(
    'perf',
    [
      'script',
      '-i',
      file,
      '--no-inline',
      '--ns',
      '--show-switch-events',
      '-F',
      'tid,time,event,trace,ip,sym,dso',
    ],
    { detached: true, stdio: ['ignore', 'pipe', 'pipe'] },
  );
  onExitCleanup.child(child);
  let stderr = '';
  child.stderr?.on('data', (d: Buffer) => {
    if (stderr.length < 20_000) stderr += d.toString();
  });
  const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
  const closed = new Promise<number | null>((resolve) => {
    child.on('error', () => resolve(null));
    child.on('close', (code) => resolve(code));
  });
  if (child.stdout) {
    const rl = createInterface({ input: child.stdout, crlfDelay: Number.POSITIVE_INFINITY });
    for await (const line of rl) into.line(line);
  }
  into.end();
  const code = await closed;
  clearTimeout(timer);
  const used = process.cpuUsage(cpu0);
  const cpuS = childCpuSeconds() - child0 + (used.user + used.system) / 1e6;
  const lost = Number(/lost (\d+) chunks/.exec(stderr)?.[1] ?? /LOST (\d+) events/.exec(stderr)?.[1] ?? 0);
  const out: Decoded = { bytes, lost, cpuS: round2(cpuS) };
  if (code !== 0)
    out.error = `perf script exited with ${code}: ${stderr.split('\n').filter(Boolean).slice(-2).join(' ')}`;
  return out;
}
