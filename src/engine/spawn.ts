/**
 * The load workers of a run: started (`spawnLoadWorker`), each given its share of the run's clients
 * (`assignClients`: client id % workers), then the handshake: `init` out, `ready` (or `fail`) back from each,
 * one `start` to all. Once every worker is ready, what they send (interval snapshots, `measured`, `done`) and a
 * worker that dies are handed to the engine's `WorkerEvents`; a failure before that is the run's start failure.
 */
import { Worker } from 'node:worker_threads';
import type { SerializedDbError } from '../driver/errors.ts';
import { workerRef } from '../workload/registry.ts';
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
 * the code cache kept under `codeCacheKey` (the driver: each compiles functions of its own; src/code-cache.ts);
 * from the files tsc wrote, the worker is plain JS; when dbsmack itself runs from its TypeScript sources
 * (tests, `tsx`), Node 20 cannot start a `.ts` worker directly, so a small shim registers tsx inside the
 * worker first.
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
}

export class LoadWorkers {
  /** The client ids of each worker (`assignClients`). */
  readonly clientIds: number[][];
  /** Each client's connect time (ms), in the order the workers reported. */
  readonly connectMs: number[] = [];
  private readonly plan: RunPlan;
  private readonly ctrl: SharedArrayBuffer;
  private readonly spawn: (codeCacheKey: string) => LoadWorker;
  private readonly workers: LoadWorker[] = [];
  private readonly finished: boolean[];
  private readyCount = 0;
  private readonly sessionIds: number[] = [];
  private readonly declared = new Set<string>();
  private serverVersion = '';
  private startFail: FailMessage | undefined;
  private notify: () => void = () => {};

  constructor(
    plan: RunPlan,
    workers: number,
    ctrl: SharedArrayBuffer,
    spawn: (codeCacheKey: string) => LoadWorker = spawnLoadWorker,
  ) {
    this.plan = plan;
    this.ctrl = ctrl;
    this.spawn = spawn;
    this.clientIds = assignClients(plan.clients, workers);
    this.finished = new Array<boolean>(workers).fill(false);
  }

  get count(): number {
    return this.clientIds.length;
  }

  /** Start every worker's thread and send it its `init` (its clients, the plan, the shared control array). */
  launch(events: WorkerEvents): void {
    const plan = { ...this.plan, workload: workerRef(this.plan.workload) };
    for (let i = 0; i < this.count; i++) {
      const w = this.spawn(this.plan.target.driver);
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
    return { serverVersion: this.serverVersion, sessionIds: this.sessionIds, types: [...this.declared] };
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
