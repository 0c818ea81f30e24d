/**
 * The engine: spreads the clients of a run over load workers, starts them together, merges their interval
 * snapshots into the timeline and the totals, enforces the deadline and stop requests, and hands the raw
 * outcome (`EngineOutcome`, metrics/outcome.ts) to `buildRunResult`.
 */
import { readFileSync } from 'node:fs';
import os from 'node:os';
import type { Worker } from 'node:worker_threads';
import { DbError, type SerializedDbError } from '../driver/errors.ts';
import { UserError } from '../errors.ts';
import { nowUs } from '../metrics/clock.ts';
import {
  decodeHistogram,
  type Histogram,
  mergingHistogram,
  percentileMs,
  summarize,
} from '../metrics/histogram.ts';
import { countByKind } from '../metrics/kinds.ts';
import type { ClientSummary, EngineOutcome, LiveView, TypeAccumulator } from '../metrics/outcome.ts';
import type { ErrorCount, IntervalPoint } from '../metrics/run-result.ts';
import { round2, round3 } from '../numbers.ts';
import {
  type CounterSnapshot,
  CTRL_SIZE,
  CTRL_STOP,
  type FailMessage,
  type FromWorker,
  type IntervalMessage,
  type RunPlan,
} from './protocol.ts';
import { spawnLoadWorker } from './spawn.ts';
import { StageFigures } from './stage-acc.ts';

/** The running totals an `onSnapshot` hook may read. */
export interface LiveTotals {
  types: ReadonlyMap<string, TypeAccumulator>;
  events: { readonly count: number; readonly hist: Histogram };
}

export interface EngineHooks {
  /**
   * After each complete interval: a reason to stop the run now (a threshold that can no longer hold), or
   * undefined to go on.
   */
  check?(live: LiveView): string | undefined;
  /** An interval is complete (all workers reported it). */
  onInterval?(point: IntervalPoint): void;
  /**
   * One worker's interval snapshot, as it arrives, with the run's totals merged so far (live metrics:
   * `--metrics-listen`; the totals go on changing: read them, do not keep a copy).
   */
  onSnapshot?(snapshot: IntervalMessage, totals: LiveTotals): void;
  /** Every worker has stopped measuring; the clients' connections are still open until this settles. */
  onMeasureEnd?(): Promise<void> | void;
  /** Connections are up; the run starts when the returned promise settles. */
  onStart?(info: {
    serverVersion: string;
    clients: number;
    workers: number;
    sessionIds: number[];
    /** The statement types the clients declared in their set-up (ad-hoc ones appear only as they run). */
    types: string[];
  }): Promise<void> | void;
}

/** Why a run could not start: a client failed to load, connect or set up. */
export class StartError extends Error {
  readonly phase: FailMessage['phase'];
  readonly error: DbError;
  readonly clientId: number | undefined;
  /** The user error the worker failed with, as it was thrown there (code, exit code, hint). */
  readonly userError: UserError | undefined;
  constructor(f: FailMessage) {
    super(f.error.message);
    this.phase = f.phase;
    this.error = DbError.fromJSON(f.error);
    this.clientId = f.clientId;
    this.userError = f.userError ? UserError.fromJSON(f.userError) : undefined;
  }
}

/**
 * Resident memory of one load worker thread: its own V8 isolate, the modules it loads and its heap. Measured
 * with /usr/bin/time (maximum RSS) on Node 20 running select1 on SQLite: 1 client 90 MB, 32 clients in 32
 * workers 564 MB, 64 in 64 workers 1,079 MB, so about 15.3 MB per worker (and 0.26 s of CPU to start one);
 * rounded up here.
 */
export const WORKER_BYTES = 16 * 2 ** 20;

/**
 * Memory of one client beyond its worker's: its connection, statements, random generator and recorder
 * slots. SQLite: 4,000 select1 clients over 4 workers took 786 MB against 161 MB for 4 clients, about
 * 156 KB each (its page cache, up to SQLite's default 2 MB, grows with the pages a workload touches).
 * Network clients: bench/soak.ts's 1024 clients took 134 MB against 115 MB for 64, about 20 KB each;
 * both rounded up here.
 */
export const CLIENT_BYTES: Record<RunPlan['target']['driver'], number> = {
  sqlite: 256 * 1024,
  mysql: 64 * 1024,
  postgres: 64 * 1024,
};

/**
 * Share of the machine's memory the load generator may plan for: the database under test, and whatever
 * else runs, need the rest.
 */
export const LOAD_MEMORY_SHARE = 0.5;

/**
 * SQLite worker threads per core by default. A thread per client makes clients really concurrent
 * (preempted mid-statement, as processes are), but beyond a few threads per core more of them only add
 * start-up time (0.26 s of CPU each) and memory; the clients beyond share threads, cooperatively (see
 * `sqliteDriver`). Measured on 2 cores, select1, 32 clients: 32 workers 80,000 q/s at 10.7-11.1 µs of
 * client CPU per query, 8 workers 65,000-78,000 q/s at 6.8-7.3 µs (a loaded machine: the CPU is the figure).
 */
export const SQLITE_WORKERS_PER_CORE = 8;

/** What the machine offers the load generator. */
export interface MachineLimits {
  cores: number;
  totalMemBytes: number;
  /** Open files a process may have (RLIMIT_NOFILE), when it can be read. */
  fileLimit?: number | undefined;
}

/** The soft limit of open files, from /proc/self/limits (Linux); undefined elsewhere. */
function openFileLimit(): number | undefined {
  try {
    const m = /^Max open files\s+(\d+|unlimited)/m.exec(readFileSync('/proc/self/limits', 'utf8'));
    return m?.[1] === undefined || m[1] === 'unlimited' ? undefined : Number(m[1]);
  } catch {
    return undefined;
  }
}

export function machineLimits(): MachineLimits {
  return { cores: cpuCount(), totalMemBytes: os.totalmem(), fileLimit: openFileLimit() };
}

/** The most load worker threads the machine can hold (in LOAD_MEMORY_SHARE of its memory). */
export function maxWorkers(m: MachineLimits = machineLimits()): number {
  return Math.max(1, Math.floor((m.totalMemBytes * LOAD_MEMORY_SHARE) / WORKER_BYTES));
}

/**
 * Default number of load workers, bounded on every driver. SQLite: one per client (its driver blocks the
 * thread) up to SQLITE_WORKERS_PER_CORE per core and what the memory holds; clients beyond share them.
 * Network clients get one worker per two cores: the database under test usually shares the machine, and on
 * a 2-core box a second worker cost 20-60% more CPU per query without raising throughput (bench/peers.ts,
 * README "Performance"); on bigger machines the clients spread over more threads.
 */
export function defaultWorkers(
  driver: RunPlan['target']['driver'],
  clients: number,
  cores: number = cpuCount(),
  m: MachineLimits = machineLimits(),
): number {
  const perCores =
    driver === 'sqlite' ? Math.max(4, SQLITE_WORKERS_PER_CORE * cores) : Math.max(1, Math.floor(cores / 2));
  return Math.max(1, Math.min(clients, perCores, maxWorkers(m)));
}

/** Open files a client needs: its socket; SQLite the database, its WAL and its shared-memory file. */
const FILES_PER_CLIENT: Record<RunPlan['target']['driver'], number> = { sqlite: 3, mysql: 1, postgres: 1 };

/** Why a run would not fit the machine, and what to do instead. */
export interface CapacityProblem {
  reason: string;
  hint: string;
}

/**
 * Why CLIENTS clients in WORKERS workers would not fit the machine (memory in LOAD_MEMORY_SHARE, open
 * files), or undefined when they fit. Checked before a run, so that too many clients are refused with the
 * reason instead of crashing the process (out of memory, EMFILE) minutes into it.
 */
export function capacityProblem(
  driver: RunPlan['target']['driver'],
  clients: number,
  workers: number,
  m: MachineLimits = machineLimits(),
): CapacityProblem | undefined {
  const w = Math.max(1, Math.min(workers, clients));
  const mib = (b: number): string => `${Math.round(b / 2 ** 20)} MiB`;
  const share = `${Math.round(LOAD_MEMORY_SHARE * 100)}% of its ${mib(m.totalMemBytes)}`;
  const most = maxWorkers(m);
  if (w > most) {
    return {
      reason: `${w} load worker threads need about ${mib(w * WORKER_BYTES)} (${mib(WORKER_BYTES)} each); this machine holds ${most} (in ${share})`,
      hint: `give --workers ${most} or fewer: the clients share the workers`,
    };
  }
  const have = m.totalMemBytes * LOAD_MEMORY_SHARE;
  const need = w * WORKER_BYTES + clients * CLIENT_BYTES[driver];
  if (need > have) {
    const fit = Math.max(1, Math.floor((have - w * WORKER_BYTES) / CLIENT_BYTES[driver]));
    return {
      reason: `${clients} ${driver} clients need about ${mib(need)} (${Math.round(CLIENT_BYTES[driver] / 1024)} KiB each, ${mib(WORKER_BYTES)} per worker thread); this machine offers ${mib(have)} (${share})`,
      hint: `give at most about ${fit} clients here, or run several dbsmack processes on several machines`,
    };
  }
  const files = clients * FILES_PER_CLIENT[driver] + 64;
  if (m.fileLimit !== undefined && files > m.fileLimit) {
    return {
      reason: `${clients} ${driver} clients need about ${files} open files; this process may open ${m.fileLimit}`,
      hint: `raise the limit (ulimit -n ${files}) or give fewer clients`,
    };
  }
  return undefined;
}

interface IntervalAcc {
  reported: number;
  snap: CounterSnapshot[];
}

export class Engine {
  private readonly plan: RunPlan;
  private readonly hooks: EngineHooks;
  private readonly ctrlBuf = new SharedArrayBuffer(CTRL_SIZE * 4);
  private readonly ctrl = new Int32Array(this.ctrlBuf);
  private stopReason: EngineOutcome['stopReason'];
  private stopDetail: string | undefined;
  private stopRequestedAt: number | undefined;
  private wake: (() => void) | undefined;
  private readonly nWorkers: number;
  /** Grace for in-flight statements after a stop or the deadline, before workers are terminated. */
  private readonly graceMs: number;

  constructor(plan: RunPlan, workers: number, hooks: EngineHooks = {}, graceMs = 5000) {
    this.plan = plan;
    this.hooks = hooks;
    this.nWorkers = Math.max(1, Math.min(workers, plan.clients));
    this.graceMs = graceMs;
  }

  /** Ask the run to stop: clients finish their current event and the result so far is kept. */
  stop(reason: 'interrupted' | 'threshold', detail?: string): void {
    if (this.stopRequestedAt !== undefined) return;
    this.stopReason = reason;
    this.stopDetail = detail;
    this.stopRequestedAt = Date.now();
    Atomics.store(this.ctrl, CTRL_STOP, 1);
    this.wake?.();
  }

  async run(): Promise<EngineOutcome> {
    const plan = this.plan;
    const n = this.nWorkers;
    const assign: number[][] = Array.from({ length: n }, () => []);
    for (let id = 0; id < plan.clients; id++) (assign[id % n] as number[]).push(id);

    const workers: Worker[] = [];
    const done = new Array<boolean>(n).fill(false);
    const lastIdx = new Array<number>(n).fill(-1);
    const intervals = new Map<number, IntervalAcc>();
    const types = new Map<string, TypeAccumulator>();
    const events = { count: 0, hist: mergingHistogram() };
    const live: LiveTotals = { types, events };
    const errors = new Map<string, ErrorCount>();
    let retries = 0;
    let reconnects = 0;
    const counters = new Map<string, number>();
    const steps = new Map<string, { count: number; hist: Histogram }>();
    const eventConnects = mergingHistogram();
    const lag = { hist: mergingHistogram(), late: 0, dropped: 0 };
    const points: IntervalPoint[] = [];
    const stageFig = plan.stages !== undefined ? new StageFigures(plan.stages) : undefined;
    let emitted = -1;
    let doneFloor = Number.POSITIVE_INFINITY;
    const clientStats: ClientSummary[] = [];
    const connectMs: number[] = [];
    const sessionIds: number[] = [];
    const declared = new Set<string>();
    let serverVersion = '';
    let ready = 0;
    let measuredCount = 0;
    /** When every worker has stopped measuring, let the probes look once more, then release the workers. */
    const markMeasured = (): void => {
      measuredCount++;
      if (measuredCount !== n) return;
      void Promise.resolve()
        .then(() => this.hooks.onMeasureEnd?.())
        .catch(() => {})
        .then(() => {
          for (const wk of workers) wk.postMessage({ type: 'release' });
        });
    };
    let startFail: FailMessage | undefined;
    let fatal: SerializedDbError | undefined;
    const warm = { elapsedUs: 0, events: 0, queries: 0 };
    let lastEndUs = 0;
    let measureAt = 0;
    let endAt = Number.POSITIVE_INFINITY;

    let notify: () => void = () => {};
    const changed = (): Promise<void> =>
      new Promise((r) => {
        notify = r;
      });

    const mergeCounters = (s: CounterSnapshot): void => {
      for (const t of s.types) {
        let acc = types.get(t.name);
        if (acc === undefined) {
          acc = { kind: t.kind, count: 0, zero: 0, errors: 0, hist: mergingHistogram() };
          types.set(t.name, acc);
        }
        acc.count += t.count;
        acc.zero += t.zero ?? 0;
        acc.errors += t.errors;
        if (t.hist) acc.hist.add(decodeHistogram(t.hist));
      }
      events.count += s.events;
      if (s.eventHist) events.hist.add(decodeHistogram(s.eventHist));
      retries += s.retries;
      reconnects += s.reconnects;
      if (s.lagHist) lag.hist.add(decodeHistogram(s.lagHist));
      lag.late += s.late ?? 0;
      for (const e of s.errors) {
        const key = `${e.kind}:${e.code}:${e.ignored}`;
        const acc = errors.get(key);
        if (acc) acc.count += e.count;
        else errors.set(key, { ...e });
      }
      for (const [k, v] of Object.entries(s.counters ?? {})) counters.set(k, (counters.get(k) ?? 0) + v);
      for (const st of s.steps ?? []) {
        let acc = steps.get(st.name);
        if (acc === undefined) {
          acc = { count: 0, hist: mergingHistogram() };
          steps.set(st.name, acc);
        }
        acc.count += st.count;
        acc.hist.add(decodeHistogram(st.hist));
      }
      if (s.connectHist) eventConnects.add(decodeHistogram(s.connectHist));
    };

    const interval = (idx: number): IntervalAcc => {
      let acc = intervals.get(idx);
      if (acc === undefined) {
        acc = { reported: 0, snap: [] };
        intervals.set(idx, acc);
      }
      return acc;
    };

    /** Build the point of every interval that all workers have reported. */
    const emitComplete = (final: boolean): void => {
      const maxKey = Math.max(emitted, ...intervals.keys());
      // The interval a finished worker ended in is partial: it is only closed by the final emit.
      const upTo = final ? maxKey : Math.min(maxKey, doneFloor - 1, ...lastIdx);
      for (let idx = emitted + 1; idx <= upTo; idx++) {
        const acc = intervals.get(idx) ?? { reported: 0, snap: [] };
        intervals.delete(idx);
        const stmt = mergingHistogram();
        const ev = mergingHistogram();
        const p: IntervalPoint = {
          t: 0,
          dur: 0,
          queries: 0,
          events: 0,
          qps: 0,
          eps: 0,
          p95_ms: 0,
          event_p95_ms: 0,
          errors: 0,
          ignored_errors: 0,
          retries: 0,
          reconnects: 0,
          reads: 0,
          writes: 0,
          others: 0,
        };
        for (const s of acc.snap) {
          // as sysbench counts: a write that changed no row is "other"
          const k = countByKind(s.types);
          p.reads += k.read;
          p.writes += k.write;
          p.others += k.other;
          for (const t of s.types) {
            p.queries += t.count;
            if (t.hist) stmt.add(decodeHistogram(t.hist));
          }
          p.events += s.events;
          if (s.eventHist) ev.add(decodeHistogram(s.eventHist));
          for (const e of s.errors) {
            p.errors += e.count;
            if (e.ignored && e.kind !== 'reconnect') p.ignored_errors = (p.ignored_errors ?? 0) + e.count;
          }
          p.retries += s.retries;
          p.reconnects += s.reconnects;
          if (s.late !== undefined) p.rate_late = (p.rate_late ?? 0) + s.late;
          if (s.queue !== undefined) {
            p.rate_queue = (p.rate_queue ?? 0) + s.queue;
            p.rate_concurrency = (p.rate_concurrency ?? 0) + (s.concurrency ?? 0);
          }
          for (const [k, v] of Object.entries(s.counters ?? {})) {
            p.counters ??= {};
            p.counters[k] = (p.counters[k] ?? 0) + v;
          }
        }
        const startS = idx * plan.reportIntervalS;
        // The last interval ends where the measured part ended.
        const measuredS = final && lastEndUs > 0 ? (lastEndUs - measureAt) / 1e6 : Number.POSITIVE_INFINITY;
        const endS = Math.min(startS + plan.reportIntervalS, measuredS);
        p.t = round3(Math.max(startS, endS));
        p.dur = round3(p.t - startS);
        const d = p.dur > 0 ? p.dur : plan.reportIntervalS;
        p.qps = round2(p.queries / d);
        p.eps = round2(p.events / d);
        p.p95_ms = percentileMs(stmt, 95);
        if (stmt.totalCount > 0) p.max_ms = Math.round(stmt.maxValue) / 1000;
        p.event_p95_ms = percentileMs(ev, 95);
        if (stageFig !== undefined) p.stage = stageFig.add(startS, p.dur, acc.snap) + 1;
        if (ev.totalCount > 0) {
          const { min: _min, mean, stddev, ...pcts } = summarize(ev);
          p.event_latency_ms = pcts;
          p.event_mean_ms = mean;
          p.event_stddev_ms = stddev;
          if (plan.percentile !== undefined && plan.percentile > 0) {
            p.event_percentile_ms = percentileMs(ev, plan.percentile);
          }
        }
        // Keep every interval that counted something, so that the intervals add up to the totals.
        if (
          p.dur > 0.0005 ||
          p.queries > 0 ||
          p.events > 0 ||
          p.errors > 0 ||
          p.retries > 0 ||
          p.reconnects > 0
        ) {
          points.push(p);
          this.hooks.onInterval?.(p);
        }
        emitted = idx;
      }
    };

    let checkedUpTo = -1;
    /** `--threshold-abort`: once per newly completed interval, ask whether the run can still pass. */
    const liveCheck = (): void => {
      const check = this.hooks.check;
      if (check === undefined || emitted === checkedUpTo || this.stopRequestedAt !== undefined) return;
      checkedUpTo = emitted;
      let errorCount = 0;
      for (const e of errors.values()) errorCount += e.count;
      const why = check({ plan, events, types, errors: errorCount, stages: stageFig?.stages });
      if (why !== undefined) this.stop('threshold', why);
    };

    const cpu0 = process.cpuUsage();
    let cpuStart = cpu0;
    const startedAt = new Date();

    try {
      for (let i = 0; i < n; i++) {
        const w = spawnLoadWorker();
        workers.push(w);
        w.on('message', (m: FromWorker) => {
          switch (m.type) {
            case 'ready':
              ready++;
              connectMs.push(...m.connectMs);
              sessionIds.push(...m.sessionIds);
              for (const t of m.types ?? []) declared.add(t);
              if (!serverVersion) serverVersion = m.serverVersion;
              break;
            case 'fail':
              startFail ??= m;
              break;
            case 'interval': {
              const acc = interval(m.idx);
              acc.reported++;
              acc.snap.push(m);
              mergeCounters(m);
              this.hooks.onSnapshot?.(m, live);
              lastIdx[m.workerIndex] = m.idx;
              emitComplete(false);
              liveCheck();
              break;
            }
            case 'measured':
              markMeasured();
              break;
            case 'done': {
              const acc = interval(m.last.idx);
              acc.snap.push(m.last);
              mergeCounters(m.last);
              this.hooks.onSnapshot?.(m.last, live);
              lastIdx[m.workerIndex] = Number.POSITIVE_INFINITY;
              doneFloor = Math.min(doneFloor, m.last.idx);
              done[m.workerIndex] = true;
              clientStats.push(...m.clientSummaries);
              warm.events += m.warmup.events;
              warm.queries += m.warmup.types.reduce((a, t) => a + t.count, 0);
              warm.elapsedUs = Math.max(warm.elapsedUs, m.warmup.elapsedUs);
              lastEndUs = Math.max(lastEndUs, m.lastEndUs);
              lag.dropped += m.dropped ?? 0;
              if (m.fatal && fatal === undefined) fatal = m.fatal;
              break;
            }
          }
          notify();
        });
        w.on('error', (e: Error) => {
          startFail ??= {
            type: 'fail',
            workerIndex: i,
            phase: 'load',
            error: { kind: 'fatal', code: 'WORKER_ERROR', message: e.message, sqlState: undefined },
          };
          if (ready === n) {
            // A worker died mid-run: treat it as stopped.
            done[i] = true;
            lastIdx[i] = Number.POSITIVE_INFINITY;
            fatal ??= startFail.error;
            markMeasured();
            Atomics.store(this.ctrl, CTRL_STOP, 1);
          }
          notify();
        });
        w.postMessage({ type: 'init', plan, workerIndex: i, clientIds: assign[i], ctrl: this.ctrlBuf });
      }

      // Connect phase.
      while (ready < n && startFail === undefined && this.stopReason === undefined) await changed();
      if (startFail !== undefined) throw new StartError(startFail);
      if (this.stopReason !== undefined)
        throw new StartError({
          type: 'fail',
          workerIndex: 0,
          phase: 'connect',
          error: {
            kind: 'fatal',
            code: 'INTERRUPTED',
            message: 'interrupted before the run started',
            sqlState: undefined,
          },
        });

      await this.hooks.onStart?.({
        serverVersion,
        clients: plan.clients,
        workers: n,
        sessionIds,
        types: [...declared],
      });
      // Start everyone together, a little in the future so that the message reaches every worker first.
      const startAt = nowUs() + 20_000;
      measureAt = startAt + plan.warmupS * 1e6;
      endAt = plan.timeS !== undefined ? measureAt + plan.timeS * 1e6 : Number.POSITIVE_INFINITY;
      for (const w of workers) w.postMessage({ type: 'start', startAt, measureAt, endAt });
      const cpuTimer = setTimeout(
        () => {
          cpuStart = process.cpuUsage();
        },
        Math.max(0, (measureAt - nowUs()) / 1000),
      );

      // Run phase: wait for every worker, enforcing the deadline and the stop grace.
      let stuck = 0;
      for (;;) {
        if (done.every(Boolean)) break;
        const now = Date.now();
        const deadlineMs = (endAt - nowUs()) / 1000;
        const limits: number[] = [];
        if (Number.isFinite(deadlineMs)) limits.push(deadlineMs + this.graceMs);
        if (this.stopRequestedAt !== undefined) limits.push(this.stopRequestedAt + this.graceMs - now);
        if (fatal !== undefined) Atomics.store(this.ctrl, CTRL_STOP, 1);
        const wait = limits.length ? Math.min(...limits) : Number.POSITIVE_INFINITY;
        if (wait <= 0) {
          stuck = done.filter((d) => !d).length;
          break;
        }
        await Promise.race([
          changed(),
          new Promise<void>((r) => {
            this.wake = r;
            if (Number.isFinite(wait)) setTimeout(r, Math.min(wait, 1000)).unref();
          }),
        ]);
      }
      clearTimeout(cpuTimer);
      const cpu = process.cpuUsage(cpuStart);
      const stopUs = nowUs();
      if (stuck > 0) {
        Atomics.store(this.ctrl, CTRL_STOP, 1);
        for (let i = 0; i < n; i++) {
          if (!done[i]) {
            await workers[i]?.terminate();
            for (const id of assign[i] ?? []) {
              clientStats.push({
                id,
                events: 0,
                queries: 0,
                errors: 0,
                connectMs: 0,
                busyUs: 0,
                aborted: true,
                abortReason: `did not stop within ${this.graceMs / 1000} s of the deadline (blocked in a statement)`,
              });
            }
          }
        }
        lastEndUs = Math.max(lastEndUs, Math.min(stopUs, endAt));
      }
      emitComplete(true);
      stageFig?.closeAll();

      const elapsedS = lastEndUs > 0 ? (lastEndUs - measureAt) / 1e6 : 0;
      clientStats.sort((a, b) => a.id - b.id);
      const fatalErr = fatal ? DbError.fromJSON(fatal) : undefined;
      return {
        plan,
        workers: n,
        serverVersion,
        sessionIds,
        startedAt,
        elapsedS: Math.max(0, elapsedS),
        types,
        events,
        errors: [...errors.values()].sort((a, b) => b.count - a.count),
        retries,
        reconnects,
        intervals: points,
        clientSummaries: clientStats,
        connectMs,
        warmup:
          plan.warmupS > 0
            ? { elapsedS: warm.elapsedUs / 1e6, events: warm.events, queries: warm.queries }
            : undefined,
        cpu: { userS: cpu.user / 1e6, systemS: cpu.system / 1e6 },
        stopReason: fatalErr ? 'fatal' : stuck > 0 ? 'stuck' : this.stopReason,
        ...(this.stopDetail !== undefined ? { stopDetail: this.stopDetail } : {}),
        ...(stageFig !== undefined ? { stages: stageFig.stages } : {}),
        fatal: fatalErr,
        stuckWorkers: stuck,
        rate: plan.rate ? { lagHist: lag.hist, late: lag.late, dropped: lag.dropped } : undefined,
        counters,
        steps,
        eventConnects,
      };
    } finally {
      await Promise.all(workers.map((w) => w.terminate().catch(() => 0)));
    }
  }
}

export const cpuCount = (): number => os.availableParallelism?.() ?? os.cpus().length;
