import assert from 'node:assert/strict';
import { test } from 'node:test';
import { defaultWorkers } from '../src/engine/engine.ts';

test('default workers: one per SQLite client, one per two cores for network clients, never more than clients', () => {
  assert.equal(defaultWorkers('sqlite', 4, 2), 4);
  assert.equal(defaultWorkers('mysql', 32, 2), 1);
  assert.equal(defaultWorkers('postgres', 32, 3), 1);
  assert.equal(defaultWorkers('postgres', 32, 8), 4);
  assert.equal(defaultWorkers('mysql', 2, 16), 2);
  assert.equal(defaultWorkers('mysql', 1, 1), 1);
});
