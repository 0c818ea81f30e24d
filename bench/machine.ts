/**
 * What kind of machine the figures come from: the traits that decided dbsmack's layouts differently on the
 * 2-core guests it has been measured on (docs/performance.md). Printed at the top of bench/peers, or alone:
 *
 *   node --import tsx bench/machine.ts
 *
 * Why these. At 8 PostgreSQL clients that only read, a load thread a client (native-core.ts
 * SOLO_IO_READS_MAX_CLIENTS) made 10–20% more queries than one load thread with the core's shared I/O thread on
 * the Xeon guests, whose shared loop lost to cross-CPU wake-ups; on the AMD EPYC guests it cost 15–20% more
 * client CPU for a few percent, its eight V8 isolates paid for in start-up (a bare Node.js worker 70 ms of CPU
 * there against the Xeon's 21) and in every second. A rule that chooses per machine needs a trait a run can
 * read and the figures of both kinds beside it; these are the candidates, each measured in a child process:
 *
 * - the hypervisor (`/sys/hypervisor/type`, else the kernel's "Hypervisor detected" line in `dmesg`): a PVM
 *   guest (software virtualisation) traps every page fault and page-table change to its host;
 * - a bare worker thread's CPU to start (`new Worker` of a one-line script, four of them, less a process
 *   that starts none), what each of dbsmack's load threads pays before its own code;
 * - the cores the CPUs are on (`/sys/devices/system/cpu/cpuN/topology`): two CPUs that are SMT siblings of
 *   one core share its caches, and the scheduler moves a woken thread between them more freely;
 * - a round trip between two threads that sleep and wake each other (`Atomics.wait`/`notify`, a futex each
 *   way), wall time: the price of the cross-CPU wake-ups a shared loop's hand-offs make; and how often the
 *   two were on different CPUs (each keeps its `/proc/thread-self/stat` line every 64th turn): whether
 *   the scheduler keeps a waker and its wakee apart or pulls them together. That share is the moment's,
 *   not the machine's: one Xeon guest read 0–76% over a session, and a native probe of it 0–100% (idle,
 *   after a sleep, beside the test suite or one busy task), so it was dropped as the rule's trait
 *   (docs/performance.md, the thirty-third session); read it beside the other traits, not alone;
 * - a first touch of a fresh page (a 64 MiB buffer filled twice: the first fill's CPU beyond the second's,
 *   divided by its pages), what a new isolate's heap and stack pay for every page they use.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import os from 'node:os';
import { fileURLToPath } from 'node:url';
import { median } from '../src/analysis/stats.ts';
import { parseStat, statField } from '../src/probe/proc-tasks.ts';
import { benchArgs } from './args.ts';
import { timed } from './tools.ts';

export interface MachineTraits {
  cpus: number;
  model: string;
  /** distinct physical cores under the CPUs; undefined where the topology cannot be read */
  cores: number | undefined;
  /** e.g. "PVM", "KVM", "xen"; "none" on bare metal; undefined when it cannot be told */
  hypervisor: string | undefined;
  /** CPU ms to start one bare Node.js worker thread */
  workerStartMs: number;
  /** wall µs of one round trip between two threads that block between turns */
  pingPongUs: number;
  /** share of the round trips' sampled turns at which the two threads ran on different CPUs, 0 to 1 */
  pingPongApart: number;
  /** CPU µs of a first touch of a fresh 4 KiB page */
  pageFaultUs: number;
}

/** The hypervisor named by `/sys/hypervisor/type` or by a "Hypervisor detected: X" line of the kernel's log. */
export function hypervisorFrom(
  sysType: string | undefined,
  kernelLog: string | undefined,
): string | undefined {
  const t = sysType?.trim();
  if (t !== undefined && t !== '') return t;
  const m = /Hypervisor detected: *([^\s]+)/.exec(kernelLog ?? '');
  return m?.[1];
}

function hypervisor(): string | undefined {
  const sys = existsSync('/sys/hypervisor/type') ? readFileSync('/sys/hypervisor/type', 'utf8') : undefined;
  const log = spawnSync('dmesg', [], { encoding: 'utf8' });
  const found = hypervisorFrom(sys, log.status === 0 ? log.stdout : undefined);
  if (found !== undefined) return found;
  // the CPU says whether it runs under one, even where the log cannot be read
  const flags = /^flags\s*:(.*)$/m.exec(readFileSync('/proc/cpuinfo', 'utf8'))?.[1] ?? '';
  return / hypervisor\b/.test(flags) ? undefined : 'none';
}

/** Distinct (package, core) pairs of the CPUs' topology files, or undefined where there are none. */
export function coresFrom(topologies: readonly { packageId: string; coreId: string }[]): number | undefined {
  if (topologies.length === 0) return undefined;
  return new Set(topologies.map((t) => `${t.packageId.trim()}/${t.coreId.trim()}`)).size;
}

function cores(): number | undefined {
  const root = '/sys/devices/system/cpu';
  const found: { packageId: string; coreId: string }[] = [];
  for (let i = 0; i < os.cpus().length; i++) {
    const dir = `${root}/cpu${i}/topology`;
    if (!existsSync(`${dir}/core_id`)) return undefined;
    found.push({
      packageId: readFileSync(`${dir}/physical_package_id`, 'utf8'),
      coreId: readFileSync(`${dir}/core_id`, 'utf8'),
    });
  }
  return coresFrom(found);
}

/** A child Node.js process running `code` (CommonJS), its CPU seconds and what it printed. */
function node(code: string): { cpuS: number; out: string } {
  const r = timed(process.execPath, ['-e', code]);
  return { cpuS: r.cpuS, out: r.stdout.trim() };
}

const WORKERS = 4;

function workerStartMs(): number {
  const start = (n: number): string =>
    `const { Worker } = require('node:worker_threads');
     for (let i = 0; i < ${n}; i++) {
       const w = new Worker('require("node:worker_threads").parentPort.postMessage(1)', { eval: true });
       w.on('message', () => w.terminate());
     }`;
  const pairs = [0, 1, 2].map(() => node(start(WORKERS)).cpuS - node(start(0)).cpuS);
  return (median(pairs) * 1000) / WORKERS;
}

const ROUND_TRIPS = 20_000;

const SAMPLE_EVERY = 64;

/** The share of sampled turns at which the two threads' stat lines name different CPUs (field 39). */
export function apartShare(x: readonly string[], y: readonly string[]): number {
  const cpu = (stat: string): number => statField(parseStat(stat).fields, 39);
  const n = Math.min(x.length, y.length);
  let apart = 0;
  for (let i = 0; i < n; i++) if (cpu(x[i] as string) !== cpu(y[i] as string)) apart++;
  return n === 0 ? 0 : apart / n;
}

function pingPong(): { us: number; apart: number } {
  // Two workers take turns on one Int32Array cell: each waits (a futex sleep) until the other hands it over.
  // Every SAMPLE_EVERY-th turn each keeps its own stat line, after the hand-over it waited for; the lines
  // are parsed here, after the round trips.
  const code = `
    const { Worker } = require('node:worker_threads');
    const sab = new SharedArrayBuffer(8);
    const side = (me, other, n) => \`
      const { workerData, parentPort } = require('node:worker_threads');
      const { readFileSync } = require('node:fs');
      const a = new Int32Array(workerData);
      const stats = [];
      for (let i = 0; i < \${n}; i++) {
        while (Atomics.load(a, 0) !== \${me}) Atomics.wait(a, 0, \${other});
        if (i % ${SAMPLE_EVERY} === 0) stats.push(readFileSync('/proc/thread-self/stat', 'latin1'));
        Atomics.store(a, 0, \${other});
        Atomics.notify(a, 0);
      }
      parentPort.postMessage(stats);\`;
    const a = new Int32Array(sab);
    a[0] = 2; // neither's turn until both run
    let ready = 0, t0 = 0, us = 0;
    const ws = [side(0, 1, ${ROUND_TRIPS}), side(1, 0, ${ROUND_TRIPS})].map(
      (src) => new Worker(src, { eval: true, workerData: sab }));
    const stats = [];
    for (const w of ws) w.on('online', () => { if (++ready === 2) { t0 = performance.now(); Atomics.store(a, 0, 0); Atomics.notify(a, 0); } });
    ws.forEach((w, k) => w.on('message', (s) => { stats[k] = s; }));
    let ended = 0;
    for (const w of ws) w.on('exit', () => {
      if (++ended === 1) us = ((performance.now() - t0) * 1000) / ${ROUND_TRIPS};
      if (ended === 2) console.log(JSON.stringify({ us, stats }));
    });`;
  const runs = [0, 1, 2].map(() => {
    const r = JSON.parse(node(code).out) as { us: number; stats: [string[], string[]] };
    return { us: r.us, apart: apartShare(r.stats[0], r.stats[1]) };
  });
  return { us: median(runs.map((r) => r.us)), apart: median(runs.map((r) => r.apart)) };
}

const FAULT_BYTES = 64 * 1024 * 1024;

function pageFaultUs(): number {
  const code = `
    const cpu = () => { const u = process.cpuUsage(); return u.user + u.system; };
    const b = Buffer.allocUnsafeSlow(${FAULT_BYTES});
    const t0 = cpu(); b.fill(1); const t1 = cpu(); b.fill(2); const t2 = cpu();
    console.log(((t1 - t0) - (t2 - t1)) / (${FAULT_BYTES} / 4096));`;
  return median([0, 1, 2].map(() => Number(node(code).out)));
}

export function machineTraits(): MachineTraits {
  const pp = pingPong();
  return {
    cpus: os.cpus().length,
    model: os.cpus()[0]?.model ?? '?',
    cores: cores(),
    hypervisor: hypervisor(),
    workerStartMs: workerStartMs(),
    pingPongUs: pp.us,
    pingPongApart: pp.apart,
    pageFaultUs: pageFaultUs(),
  };
}

/** One comment line for a bench's output. */
export function machineLine(m: MachineTraits): string {
  const hv =
    m.hypervisor === undefined
      ? 'a guest of an unnamed hypervisor'
      : m.hypervisor === 'none'
        ? 'no hypervisor'
        : `a ${m.hypervisor} guest`;
  const on =
    m.cores === undefined
      ? ''
      : ` on ${m.cores} core${m.cores === 1 ? '' : 's'}${m.cores < m.cpus ? ' (SMT)' : ''}`;
  return (
    `# machine: ${m.cpus} CPUs${on} (${m.model}), ${hv}; a bare Node.js worker thread ` +
    `${m.workerStartMs.toFixed(0)} ms of CPU to start; a round trip between two sleeping threads ` +
    `${m.pingPongUs.toFixed(1)} µs, on different CPUs at ${(m.pingPongApart * 100).toFixed(0)}% of turns; ` +
    `a fresh page ${m.pageFaultUs.toFixed(2)} µs to touch`
  );
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  // no options: --help prints the head comment, anything else is refused (bench/args.ts)
  benchArgs(import.meta.url, { options: {} });
  console.log(machineLine(machineTraits()));
}
