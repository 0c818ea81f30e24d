/**
 * The load workers of a run: started (`spawnLoadWorker`), each given its share of the run's clients
 * (`assignClients`: client id % workers), then the handshake: `init` out, `ready` (or `fail`) back from each,
 * one `start` to all. Once every worker is ready, what they send (interval snapshots, `measured`, `done`) and a
 * worker that dies are handed to the engine's `WorkerEvents`; a failure before that is the run's start failure.
 *
 * The first share runs in the main thread instead of a worker when its clients cannot block the thread
 * (`mainThreadLoadFits`): a worker thread costs about 75 ms of CPU to start (a V8 isolate, Node's
 * bootstrap, the bundle), more than a one-client run spends on anything else of its own. Measured
 * (2026-12-03) against worker threads only, in A B B A order (A B pairs alone favoured whichever ran second:
 * two identical configurations differed by 13%): `dbsmack pgbench -S -c 32 -j 2`, 16 runs of 5 s, 31,260
 * against 31,406 tps, the same 16.8 µs of client CPU per transaction in the measured part, 3.07 against
 * 3.16 s of CPU a run; `run oltp_point_select` on MariaDB at 8 clients, 12 runs, 39,155 against 40,096 q/s
 * (runs spread 35-49k either way), 3.95 against 4.09 s; at one client, nine A B pairs on MariaDB and
 * PostgreSQL, q/s 0.93-1.11 of the workers', and one-event runs 0.24-0.26 s against 0.30-0.34.
 */
import { MessageChannel, type MessagePort, Worker } from 'node:worker_threads';
import { codeCacheKey } from '../code-cache.ts';
import { loadIoOf } from '../driver/connectors.ts';
import type { SerializedDbError } from '../driver/errors.ts';
import { isUserModule, workerRef } from '../workload/registry.ts';
import { type LoadHandle, serveLoad } from './load-thread.ts';
import type {
  DoneMessage,
  FailMessage,
  FromWorker,
  IntervalMessage,
  MeasuredMessage,
  RunPlan,
  ToWorker,
} from './protocol.ts';

/**
 * Start a load worker. From the CLI's CommonJS bundle (scripts/bundle.js) it runs the worker's bundle through
 * the code cache kept under `codeCacheKey` (the driver and the workload: each compiles functions of its own;
 * src/code-cache.ts `codeCacheKey`); from the files tsc wrote, the worker is plain JS; when dbsmack itself
 * runs from its TypeScript sources (tests, `tsx`), Node 20 cannot start a `.ts` worker directly, so a small
 * shim registers tsx inside the worker first.
 */
export function spawnLoadWorker(codeCacheKey?: string): Worker {
  const here = import.meta.url;
  if (here.endsWith('.cjs'))
    return new Worker(new URL('./worker.cjs', here), { workerData: { codeCacheKey } });
  if (here.endsWith('.ts')) {
    const entry = new URL('./worker-main.ts', here).href;
    const shim = `import('tsx/esm/api').then(({ register }) => { register(); return import(${JSON.stringify(entry)}); })`;
    return new Worker(shim, { eval: true });
  }
  return new Worker(new URL('./worker-main.js', here));
}

/** What the pool needs of a worker thread (a `Worker`; tests give a stand-in). */
export interface LoadWorker {
  on(event: 'message', listener: (m: FromWorker) => void): unknown;
  on(event: 'error', listener: (e: Error) => void): unknown;
  postMessage(m: ToWorker): void;
  terminate(): Promise<number>;
}

/** A load in the main thread is running: one at a time (a second concurrent run gets workers only). */
let mainThreadBusy = false;

/**
 * Whether the first share of a run's clients may run in the main thread, beside the engine: only clients
 * of the native I/O core running dbsmack's own workloads (built-ins, smack files, pgbench scripts), which
 * never hold the thread (the core's wait gives way to the thread's timers and to every event of its loop),
 * and one such load at a time. Not SQLite (its driver blocks the thread), not the JavaScript I/O path, not
 * a user's module (a loop of its own would hold the thread, and Ctrl-C with it; in a worker the engine ends
 * it), and not when `DBSMACK_LOAD_THREADS=workers` asks for worker threads only (to measure one against
 * the other).
 */
export function mainThreadLoadFits(plan: RunPlan): boolean {
  if (mainThreadBusy || process.env.DBSMACK_LOAD_THREADS === 'workers') return false;
  if (plan.target.driver === 'sqlite' || loadIoOf(plan.target) !== 'native') return false;
  return !isUserModule(plan.workload.ref);
}

/**
 * A load thread in the main thread (load-thread.ts), behind the same interface as a worker: the messages
 * cross a `MessageChannel`; `terminate` aborts it (closes its connections at once); an error no client
 * caught comes as the `error` event, as a worker's death would.
 */
class MainThreadLoad implements LoadWorker {
  private readonly port: MessagePort;
  private readonly handle: LoadHandle;
  private onError: ((e: Error) => void) | undefined;

  constructor() {
    const { port1, port2 } = new MessageChannel();
    this.port = port1;
    this.handle = serveLoad(port2, {
      inThread: true,
      fatal: (e) => {
        this.handle.abort();
        this.onError?.(e instanceof Error ? e : new Error(String(e)));
      },
    });
    void this.handle.finished.then(() => {
      mainThreadBusy = false;
    });
  }

  on(event: 'message' | 'error', listener: ((m: FromWorker) => void) | ((e: Error) => void)): this {
    if (event === 'message') this.port.on('message', listener as (m: FromWorker) => void);
    else this.onError = listener as (e: Error) => void;
    return this;
  }

  postMessage(m: ToWorker): void {
    this.port.postMessage(m);
  }

  async terminate(): Promise<number> {
    this.handle.abort();
    this.port.close();
    return 0;
  }
}

/** The client ids each of `workers` workers runs: client `id` goes to worker `id % workers`. */
export function assignClients(clients: number, workers: number): number[][] {
  const ids: number[][] = Array.from({ length: workers }, () => []);
  for (let id = 0; id < clients; id++) (ids[id % workers] as number[]).push(id);
  return ids;
}

/** What the workers send once they run, handed to the engine. */
export interface WorkerEvents {
  interval(m: IntervalMessage): void;
  measured(m: MeasuredMessage): void;
  done(m: DoneMessage): void;
  /** A worker died after every worker was ready: it is stopped, `error` says why. */
  lost(workerIndex: number, error: SerializedDbError): void;
}

/** What the connected workers tell the engine before the run starts. */
export interface ReadyInfo {
  serverVersion: string;
  /** Backend pids or connection ids of every client's connection. */
  sessionIds: number[];
  /** The statement types the clients declared in their set-up. */
  types: string[];
  /** A load thread's native core runs a shared I/O thread (ReadyMessage). */
  sharedIoThread: boolean;
}

export class LoadWorkers {
  /** The client ids of each worker (`assignClients`). */
  readonly clientIds: number[][];
  /** Each client's connect time (ms), in the order the workers reported. */
  readonly connectMs: number[] = [];
  private readonly plan: RunPlan;
  private readonly ctrl: SharedArrayBuffer;
  private readonly spawn: (codeCacheKey: string, index: number) => LoadWorker;
  /** The first share of the clients runs in the main thread (`mainThreadLoadFits`). */
  readonly inMainThread: boolean;
  private readonly workers: LoadWorker[] = [];
  private readonly finished: boolean[];
  private readyCount = 0;
  private readonly sessionIds: number[] = [];
  private readonly declared = new Set<string>();
  private serverVersion = '';
  private sharedIoThread = false;
  private startFail: FailMessage | undefined;
  private notify: () => void = () => {};

  constructor(
    plan: RunPlan,
    workers: number,
    ctrl: SharedArrayBuffer,
    spawn?: (codeCacheKey: string, index: number) => LoadWorker,
  ) {
    this.plan = plan;
    this.ctrl = ctrl;
    this.clientIds = assignClients(plan.clients, workers);
    this.inMainThread = spawn === undefined && mainThreadLoadFits(plan);
    if (this.inMainThread) mainThreadBusy = true; // until its load has finished (MainThreadLoad)
    this.spawn =
      spawn ??
      ((key, index) => (index === 0 && this.inMainThread ? new MainThreadLoad() : spawnLoadWorker(key)));
    this.finished = new Array<boolean>(workers).fill(false);
  }

  get count(): number {
    return this.clientIds.length;
  }

  /** Start every worker's thread and send it its `init` (its clients, the plan, the shared control array). */
  launch(events: WorkerEvents): void {
    const plan = { ...this.plan, workload: workerRef(this.plan.workload) };
    for (let i = 0; i < this.count; i++) {
      const w = this.spawn(codeCacheKey(this.plan.target.driver, this.plan.workload.ref), i);
      this.workers.push(w);
      w.on('message', (m: FromWorker) => {
        this.onMessage(m, events);
        this.notify();
      });
      w.on('error', (e: Error) => {
        this.startFail ??= {
          type: 'fail',
          workerIndex: i,
          phase: 'load',
          error: { kind: 'fatal', code: 'WORKER_ERROR', message: e.message, sqlState: undefined },
        };
        if (this.readyCount === this.count) {
          // A worker died mid-run: treat it as stopped.
          this.finished[i] = true;
          events.lost(i, this.startFail.error);
        }
        this.notify();
      });
      w.postMessage({
        type: 'init',
        plan,
        workerIndex: i,
        clientIds: this.clientIds[i] ?? [],
        ctrl: this.ctrl,
      });
    }
  }

  /** Settles at the next message or error of any worker. */
  changed(): Promise<void> {
    return new Promise((r) => {
      this.notify = r;
    });
  }

  /** Whether every worker has reported `ready`. */
  get allReady(): boolean {
    return this.readyCount >= this.count;
  }

  /** The first failure of a worker (to load, connect or set up; or a worker that died), if any. */
  get failure(): FailMessage | undefined {
    return this.startFail;
  }

  get ready(): ReadyInfo {
    return {
      serverVersion: this.serverVersion,
      sessionIds: this.sessionIds,
      types: [...this.declared],
      sharedIoThread: this.sharedIoThread,
    };
  }

  /** The `start` message: every worker's clients start together at `times` (deadline.ts `schedule`). */
  start(times: { startAt: number; measureAt: number; endAt: number }): void {
    for (const w of this.workers) w.postMessage({ type: 'start', ...times });
  }

  /** Let the clients close their connections (the probes have taken their last look). */
  release(): void {
    for (const w of this.workers) w.postMessage({ type: 'release' });
  }

  isFinished(i: number): boolean {
    return this.finished[i] === true;
  }

  /** Workers that have not finished. */
  get unfinished(): number {
    return this.finished.filter((d) => !d).length;
  }

  /** Stop worker `i`'s thread. */
  async terminate(i: number): Promise<void> {
    await this.workers[i]?.terminate();
  }

  /** Stop every thread (those that already ended too). */
  async terminateAll(): Promise<void> {
    await Promise.all(this.workers.map((w) => w.terminate().catch(() => 0)));
  }

  private onMessage(m: FromWorker, events: WorkerEvents): void {
    switch (m.type) {
      case 'ready':
        this.readyCount++;
        this.connectMs.push(...m.connectMs);
        this.sessionIds.push(...m.sessionIds);
        for (const t of m.types ?? []) this.declared.add(t);
        if (!this.serverVersion) this.serverVersion = m.serverVersion;
        if (m.sharedIoThread === true) this.sharedIoThread = true;
        break;
      case 'fail':
        this.startFail ??= m;
        break;
      case 'interval':
        events.interval(m);
        break;
      case 'measured':
        events.measured(m);
        break;
      case 'done':
        events.done(m);
        this.finished[m.workerIndex] = true;
        break;
    }
  }
}
