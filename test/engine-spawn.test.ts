import assert from 'node:assert/strict';
import { EventEmitter } from 'node:events';
import { test } from 'node:test';
import type { FromWorker, ReadyMessage, RunPlan, ToWorker } from '../src/engine/protocol.ts';
import { assignClients, type LoadWorker, LoadWorkers, type WorkerEvents } from '../src/engine/spawn.ts';

test('clients are dealt to the workers by id modulo the worker count', () => {
  assert.deepEqual(assignClients(5, 2), [
    [0, 2, 4],
    [1, 3],
  ]);
  assert.deepEqual(assignClients(3, 3), [[0], [1], [2]]);
  assert.deepEqual(assignClients(2, 3), [[0], [1], []]);
  assert.equal(assignClients(1000, 7).flat().length, 1000);
});

/** A stand-in for a worker thread: records what it is sent, and the test makes it answer. */
class FakeWorker extends EventEmitter implements LoadWorker {
  readonly sent: ToWorker[] = [];
  terminated = 0;
  postMessage(m: ToWorker): void {
    this.sent.push(m);
  }
  async terminate(): Promise<number> {
    this.terminated++;
    return 0;
  }
  say(m: FromWorker): void {
    this.emit('message', m);
  }
}

const plan = {
  clients: 5,
  target: { driver: 'sqlite' },
  workload: { ref: 'select1', rawOptions: {}, args: [] },
} as unknown as RunPlan;

function pool(n: number): { workers: FakeWorker[]; pool: LoadWorkers; seen: string[]; keys: string[] } {
  const workers: FakeWorker[] = [];
  const keys: string[] = [];
  const p = new LoadWorkers(plan, n, new SharedArrayBuffer(8), (codeCacheKey) => {
    keys.push(codeCacheKey);
    const w = new FakeWorker();
    workers.push(w);
    return w;
  });
  const seen: string[] = [];
  const events: WorkerEvents = {
    interval: (m) => seen.push(`interval ${m.workerIndex}:${m.idx}`),
    measured: (m) => seen.push(`measured ${m.workerIndex}`),
    done: (m) => seen.push(`done ${m.workerIndex}`),
    lost: (i, e) => seen.push(`lost ${i} ${e.code}`),
  };
  p.launch(events);
  return { workers, pool: p, seen, keys };
}

const ready = (workerIndex: number, ids: number[], types: string[] = []): ReadyMessage => ({
  type: 'ready',
  workerIndex,
  connectMs: ids.map((id) => id + 0.5),
  serverVersion: `v${workerIndex}`,
  sessionIds: ids.map((id) => 100 + id),
  types,
});

test('each worker gets its init with its clients; the run starts when all are ready', async () => {
  const { workers, pool: p, keys } = pool(2);
  assert.equal(workers.length, 2);
  assert.deepEqual(
    keys,
    ['sqlite-select1', 'sqlite-select1'],
    "each worker's code cache is its driver's and workload's",
  );
  assert.deepEqual(
    workers.map((w) => w.sent.map((m) => (m.type === 'init' ? [m.workerIndex, m.clientIds] : m.type))),
    [[[0, [0, 2, 4]]], [[1, [1, 3]]]],
  );
  const changed = p.changed();
  workers[1]?.say(ready(1, [1, 3], ['select']));
  await changed;
  assert.equal(p.allReady, false);
  // (a worker whose native core runs the shared I/O thread says so: the RunResult records it)
  workers[0]?.say({ ...ready(0, [0, 2, 4], ['select', 'update']), sharedIoThread: true });
  assert.equal(p.allReady, true);
  assert.equal(p.failure, undefined);
  assert.deepEqual(p.ready, {
    serverVersion: 'v1',
    sessionIds: [101, 103, 100, 102, 104],
    types: ['select', 'update'],
    sharedIoThread: true,
  });
  assert.deepEqual(p.connectMs, [1.5, 3.5, 0.5, 2.5, 4.5]);
  p.start({ startAt: 1, measureAt: 2, endAt: 3 });
  p.release();
  for (const w of workers) {
    assert.deepEqual(w.sent.slice(1), [
      { type: 'start', startAt: 1, measureAt: 2, endAt: 3 },
      { type: 'release' },
    ]);
  }
  await p.terminateAll();
  assert.deepEqual(
    workers.map((w) => w.terminated),
    [1, 1],
  );
});

test('the first failure before the start is the start failure; a worker that dies then is one too', () => {
  const { workers, pool: p, seen } = pool(3);
  workers[2]?.say({
    type: 'fail',
    workerIndex: 2,
    phase: 'connect',
    error: { kind: 'fatal', code: 'ECONNREFUSED', message: 'refused', sqlState: undefined },
    clientId: 2,
  });
  workers[0]?.emit('error', new Error('out of memory'));
  assert.equal(p.failure?.error.code, 'ECONNREFUSED');
  assert.equal(p.failure?.clientId, 2);
  assert.deepEqual(seen, [], 'nothing is lost before the run: the start fails');
  const { workers: w2, pool: p2 } = pool(1);
  w2[0]?.emit('error', new Error('cannot load'));
  assert.deepEqual(p2.failure, {
    type: 'fail',
    workerIndex: 0,
    phase: 'load',
    error: { kind: 'fatal', code: 'WORKER_ERROR', message: 'cannot load', sqlState: undefined },
  });
});

test('once running, messages go to the engine in order, and a worker that dies is lost and finished', () => {
  const { workers, pool: p, seen } = pool(2);
  workers[0]?.say(ready(0, [0, 2, 4]));
  workers[1]?.say(ready(1, [1, 3]));
  const snap = { types: [], events: 0, errors: [], retries: 0, reconnects: 0 };
  workers[0]?.say({ type: 'interval', workerIndex: 0, idx: 0, ...snap });
  workers[1]?.emit('error', new Error('segfault'));
  assert.equal(p.unfinished, 1);
  assert.equal(p.isFinished(1), true);
  workers[0]?.say({ type: 'measured', workerIndex: 0 });
  workers[0]?.say({
    type: 'done',
    workerIndex: 0,
    last: { type: 'interval', workerIndex: 0, idx: 1, ...snap },
    warmup: { ...snap, elapsedUs: 0 },
    clientSummaries: [],
    lastEndUs: 0,
  });
  assert.deepEqual(seen, ['interval 0:0', 'lost 1 WORKER_ERROR', 'measured 0', 'done 0']);
  assert.equal(p.unfinished, 0);
});
