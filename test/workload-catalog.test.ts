import assert from 'node:assert/strict';
import { test } from 'node:test';
import { BUILTIN_DESCRIPTIONS } from '../src/workload/catalog.ts';
import { builtinNames, loadWorkload, resolveWorkloadArg } from '../src/workload/registry.ts';

test('each built-in has one description, the one its module shows in its own help', async () => {
  const listed = builtinNames();
  assert.deepEqual(
    listed.map((b) => b.name),
    Object.keys(BUILTIN_DESCRIPTIONS),
  );
  for (const { name, description } of listed) {
    assert.equal(resolveWorkloadArg(name), name);
    const w = await loadWorkload({ ref: name, rawOptions: {}, args: [] });
    assert.equal(w.name, name, `${name}: the loader loads the workload of that name`);
    assert.equal(w.description, description, `${name}: its module's description is the catalog's`);
  }
});

test('a name that is no built-in is refused with the list of built-ins', () => {
  assert.throws(
    () => resolveWorkloadArg('constructor'),
    (e: Error & { hint?: string }) =>
      /unknown workload 'constructor'/.test(e.message) && (e.hint ?? '').includes('select1, oltp_read_only'),
  );
});
