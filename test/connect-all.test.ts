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

test('connectAll starts no connect after the first failure, closes what it opened and throws the failure', async () => {
  const closed: number[] = [];
  const started: number[] = [];
  const FAIL = 40;
  // Connects before FAIL succeed at once; FAIL fails after a tick; those started meanwhile (one per other
  // lane) succeed only after the failure has been taken, so every lane then sees it before taking more.
  let failed!: () => void;
  const afterFailure = new Promise<void>((r) => {
    failed = r;
  });
  const ids = Array.from({ length: 100 }, (_, i) => i + 1);
  await assert.rejects(
    connectAll(ids, async (id) => {
      started.push(id);
      if (id === FAIL) {
        await tick();
        setImmediate(failed);
        throw new Error(`refused ${id}`);
      }
      if (id > FAIL) await afterFailure;
      return { id, conn: fakeConn(closed, id) };
    }),
    /refused 40/,
    'the failure is thrown',
  );
  const inFlight = FAIL + CONNECT_CONCURRENCY - 1;
  assert.deepEqual(
    started.sort((a, b) => a - b),
    Array.from({ length: inFlight }, (_, i) => i + 1),
    'the connects in flight when it failed, and none after',
  );
  assert.deepEqual(
    closed.sort((a, b) => a - b),
    started.filter((id) => id !== FAIL),
    'every connection opened is closed',
  );
});

test('connectAll opens the first connection alone: the connector runs cold once, in no one else’s connect time', async () => {
  const events: string[] = [];
  const ids = Array.from({ length: 10 }, (_, i) => i + 1);
  await connectAll(ids, async (id) => {
    events.push(`start ${id}`);
    await tick();
    events.push(`end ${id}`);
    return { id, conn: fakeConn([], id) };
  });
  assert.deepEqual(events.slice(0, 3), ['start 1', 'end 1', 'start 2'], events.join(', '));
  assert.ok(events.indexOf('start 3') < events.indexOf('end 2'), 'the others connect together');
});
