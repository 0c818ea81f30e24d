/**
 * The steady state of a timed run: the CPU its process spends a query once start-up and the first seconds
 * are behind it, the same way for dbsmack and its peers. While `timed` waits for the command (spawnSync), a
 * worker thread of this process samples the command's CPU from /proc/PID/stat (user + system of all its
 * threads, by the kernel's accounting, 10 ms ticks) every 100 ms; the tool's own per-second report says
 * how many queries each second made. The window is the tool's seconds 4 to T-1 (T ≥ 6): the CPU over it is
 * read off the samples counted back from the process's end (what follows the last second, the report and
 * the exit, takes a few tens of milliseconds, and the rates are steady there by choice of the window).
 *
 * Why: the whole-process figure mixes three things, start-up (the one-event runs measure it), the first
 * seconds (every thread's code being compiled, fresh server backends) and the steady state, and only the
 * last says what a client costs a query for as long as a benchmark runs.
 */
import { Worker } from 'node:worker_threads';
import { clockTicks } from '../src/probe/proc-tasks.ts';

/** Most samples a run keeps (100 ms apart: about 400 s). */
const CAP = 4096;
const IDLE = 0;
const ARMED = 1;
const STOPPING = 2;

/**
 * The sampler, plain JavaScript run by the worker: it waits until armed, finds the command (the child of
 * this process's child `time`, /usr/bin/time), samples it until asked to stop, then acknowledges.
 */
const SAMPLER = `
const { workerData } = require('node:worker_threads');
const { readFileSync, readdirSync } = require('node:fs');
const ctrl = new Int32Array(workerData.ctrl);
const data = new Float64Array(workerData.data);
const { parent, tick, cap } = workerData;
function stat(pid) {
  try {
    const s = readFileSync('/proc/' + pid + '/stat', 'utf8');
    const f = s.slice(s.lastIndexOf(')') + 2).split(' ');
    return { comm: s.slice(s.indexOf('(') + 1, s.lastIndexOf(')')), ppid: Number(f[1]), cpu: (Number(f[11]) + Number(f[12])) / tick };
  } catch {
    return undefined;
  }
}
function childOf(ppid, comm) {
  for (const d of readdirSync('/proc')) {
    if (d.charCodeAt(0) > 57) continue;
    const s = stat(d);
    if (s !== undefined && s.ppid === ppid && (comm === undefined || s.comm === comm)) return Number(d);
  }
  return 0;
}
for (;;) {
  while (Atomics.load(ctrl, 0) !== ${ARMED}) Atomics.wait(ctrl, 0, Atomics.load(ctrl, 0), 1000);
  const t0 = performance.now();
  let pid = 0;
  let n = 0;
  while (Atomics.load(ctrl, 0) === ${ARMED}) {
    if (pid === 0) {
      // /usr/bin/time among this process's children (tsx keeps an esbuild service among them too)
      const time = childOf(parent, 'time');
      if (time !== 0) pid = childOf(time);
    }
    const s = pid === 0 ? undefined : stat(pid);
    if (s !== undefined && n < cap) {
      data[2 * n] = (performance.now() - t0) / 1000;
      data[2 * n + 1] = s.cpu;
      n++;
    }
    Atomics.wait(ctrl, 0, ${ARMED}, 100);
  }
  Atomics.store(ctrl, 2, n);
  Atomics.store(ctrl, 1, 1);
  Atomics.notify(ctrl, 1);
}
`;

let sampler: { ctrl: Int32Array; data: Float64Array } | undefined;
/** Whether `startSampling` armed the sampler and `stopSampling` has not taken its samples yet. */
let armed = false;

/** Start sampling the command the next spawnSync of /usr/bin/time runs. */
export function startSampling(): void {
  if (sampler === undefined) {
    const ctrl = new SharedArrayBuffer(3 * 4);
    const data = new SharedArrayBuffer(2 * CAP * 8);
    const worker = new Worker(SAMPLER, {
      eval: true,
      workerData: { ctrl, data, parent: process.pid, tick: clockTicks(), cap: CAP },
    });
    worker.unref();
    sampler = { ctrl: new Int32Array(ctrl), data: new Float64Array(data) };
  }
  const c = sampler.ctrl;
  armed = true;
  Atomics.store(c, 1, 0);
  Atomics.store(c, 0, ARMED);
  Atomics.notify(c, 0);
}

/** Stop sampling: the samples, [seconds since armed, CPU seconds so far], in time order; none unarmed. */
export function stopSampling(): [number, number][] {
  if (sampler === undefined || !armed) return [];
  armed = false;
  const { ctrl, data } = sampler;
  Atomics.store(ctrl, 0, STOPPING);
  Atomics.notify(ctrl, 0);
  // the worker acknowledges within one sampling interval (more only while it starts, the first time)
  for (let i = 0; i < 100 && Atomics.load(ctrl, 1) === 0; i++) Atomics.wait(ctrl, 1, 0, 100);
  const n = Atomics.load(ctrl, 1) === 1 ? Atomics.load(ctrl, 2) : 0;
  Atomics.store(ctrl, 0, IDLE);
  const out: [number, number][] = [];
  for (let i = 0; i < n; i++) out.push([data[2 * i] as number, data[2 * i + 1] as number]);
  return out;
}

/** A second of a tool's own report: its end (seconds since the tool's measuring began) and its rate. */
export interface Second {
  t: number;
  rate: number;
}

/** CPU seconds at time `t` of the samples, by linear interpolation; undefined outside them. */
function cpuAt(series: readonly [number, number][], t: number): number | undefined {
  for (let i = 1; i < series.length; i++) {
    const [t1, c1] = series[i] as [number, number];
    if (t1 < t) continue;
    const [t0, c0] = series[i - 1] as [number, number];
    if (t0 > t) return undefined;
    return t1 === t0 ? c1 : c0 + ((c1 - c0) * (t - t0)) / (t1 - t0);
  }
  return undefined;
}

/**
 * CPU µs a query (or a transaction, as `seconds` counts) over the tool's seconds 4 to `time` - 1, or
 * undefined when the run is shorter than 6 s or the samples or the report do not cover that window.
 */
export function steadyUs(
  series: readonly [number, number][],
  seconds: readonly Second[],
  time: number,
): number | undefined {
  if (time < 6 || series.length < 2) return undefined;
  const end = (series[series.length - 1] as [number, number])[0];
  const a = end - (time - 3);
  const b = end - 1;
  const ca = cpuAt(series, a);
  const cb = cpuAt(series, b);
  const inside = seconds.filter((s) => s.t > 3.5 && s.t < time - 0.5);
  if (ca === undefined || cb === undefined || inside.length < time - 4) return undefined;
  const rate = inside.reduce((sum, s) => sum + s.rate, 0) / inside.length;
  return rate > 0 ? ((cb - ca) / (b - a) / rate) * 1e6 : undefined;
}

/** sysbench's `--report-interval=1` lines: `[ 4s ] thds: 8 tps: … qps: 1234.56 …`. */
export function sysbenchSeconds(stdout: string): Second[] {
  return [...stdout.matchAll(/^\[ (\d+)s \] thds: \d+ tps: [\d.]+ qps: ([\d.]+)/gm)].map((m) => ({
    t: Number(m[1]),
    rate: Number(m[2]),
  }));
}

/** What the steady state reads of a RunResult's intervals (IntervalPoint). */
export interface IntervalRates {
  t: number;
  qps: number;
  eps: number;
}

/** dbsmack's report: a RunResult's intervals, queries (`qps`) or events (`eps`) a second. */
export function dbsmackSeconds(intervals: readonly IntervalRates[], rate: 'qps' | 'eps'): Second[] {
  return intervals.map((i) => ({ t: i.t, rate: i[rate] }));
}

/** pgbench's `-P 1` lines (on stderr): `progress: 4.0 s, 34161.5 tps, …`, transactions a second. */
export function pgbenchSeconds(stderr: string): Second[] {
  return [...stderr.matchAll(/^progress: ([\d.]+) s, ([\d.]+) tps/gm)].map((m) => ({
    t: Number(m[1]),
    rate: Number(m[2]),
  }));
}
