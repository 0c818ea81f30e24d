/** The worker's connect step: bounded concurrency, client order, and no connection left open on failure. */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { Connection } from '../src/driver/types.ts';
import { CONNECT_CONCURRENCY, connectAll } from '../src/engine/connect-all.ts';

const tick = (): Promise<void> => new Promise((r) => setTimeout(r, 1));

function fakeConn(closed: number[], id: number): Connection {
  return { close: async () => void closed.push(id) } as unknown as Connection;
}

test('connectAll keeps at most CONNECT_CONCURRENCY connects in flight and returns clients in order', async () => {
  let inFlight = 0;
  let peak = 0;
  const ids = Array.from({ length: 200 }, (_, i) => i + 1);
  const got = await connectAll(ids, async (id) => {
    inFlight++;
    peak = Math.max(peak, inFlight);
    await tick();
    inFlight--;
    return { id, conn: fakeConn([], id) };
  });
  assert.equal(peak, CONNECT_CONCURRENCY, `peak of connects in flight: ${peak}`);
  assert.deepEqual(
    got.map((g) => g.id),
    ids,
    'results in client order',
  );
});

test('connectAll closes what it opened and throws the first failure', async () => {
  const closed: number[] = [];
  const started: number[] = [];
  const ids = Array.from({ length: 100 }, (_, i) => i + 1);
  await assert.rejects(
    connectAll(ids, async (id) => {
      started.push(id);
      await tick();
      if (id === 40) throw new Error('refused 40');
      if (id > 40) throw new Error(`refused ${id}`);
      return { id, conn: fakeConn(closed, id) };
    }),
    /refused 40/,
    'the first failure is thrown',
  );
  assert.deepEqual(
    closed.sort((a, b) => a - b),
    Array.from({ length: 39 }, (_, i) => i + 1),
    'every connection opened before the failure is closed',
  );
  assert.ok(started.length < ids.length, `no connect starts after the failure (${started.length} started)`);
});
