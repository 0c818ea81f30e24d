import assert from 'node:assert/strict';
import { test } from 'node:test';
import { type CapacityOptions, capacityDocument, checkCapacityOptions } from '../src/cli/capacity.ts';
import type { ResolvedWorkload } from '../src/cli/run.ts';
import { parseThreshold } from '../src/cli/threshold-parse.ts';
import { parseTarget } from '../src/driver/url.ts';
import { UsageError } from '../src/errors.ts';

const base: CapacityOptions = {
  slo: [parseThreshold('--slo', 'p99<5ms')],
  rateMin: 10,
  rateMax: 1000,
  repeat: 2,
  precision: 0.1,
  maxSteps: 20,
  format: 'text',
  shape: 'poisson',
  lateUs: 1000,
};

test('capacity refuses a bad format, no SLO, crossed bounds and an SLO with a stage', () => {
  checkCapacityOptions(base);
  const refused: [Partial<CapacityOptions>, RegExp][] = [
    [{ format: 'csv' }, /^unknown format 'csv' for capacity$/],
    [{ slo: [] }, /^capacity needs --slo EXPR/],
    [{ rateMin: 2000 }, /^--rate-min 2000 is above --rate-max 1000$/],
    [{ slo: [parseThreshold('--slo', 'p99{stage=2}<5ms')] }, /a capacity step has no stages$/],
  ];
  for (const [change, message] of refused)
    assert.throws(
      () => checkCapacityOptions({ ...base, ...change }),
      (e: unknown) => e instanceof UsageError && message.test(e.message),
    );
});

test('the capacity document starts with the bounds of the search and no rate', () => {
  const resolved = {
    workload: { name: 'select1' },
    options: { prepared: true },
  } as unknown as ResolvedWorkload;
  const doc = capacityDocument(base, resolved, parseTarget('sqlite::memory:'), { clients: 4, timeS: 3 });
  assert.equal(doc.rate, null);
  assert.equal(doc.status, 'complete');
  assert.deepEqual(doc.slo, ['p99<5ms']);
  assert.equal(doc.clients, 4);
  assert.equal(doc.step_time_s, 3);
  assert.equal(
    capacityDocument(base, resolved, parseTarget('sqlite::memory:'), { clients: 1 }).step_time_s,
    null,
  );
  assert.deepEqual([doc.rate_min, doc.rate_max, doc.repeat, doc.steps.length], [10, 1000, 2, 0]);
});
