/** The example workload module in examples/ runs as the README says. */
import assert from 'node:assert/strict';
import path from 'node:path';
import { test } from 'node:test';
import type { RunResult } from '../src/metrics/run-result.ts';
import { ROOT, runCli, tmpDir } from './helpers/cli.ts';

test('examples/kv-zipfian.ts prepares, runs and cleans up', async () => {
  const mod = path.join(ROOT, 'examples', 'kv-zipfian.ts');
  const db = ['--db', `sqlite:${path.join(tmpDir(), 'kv.sqlite')}`, '--keys', '500'];
  const p = await runCli(['prepare', mod, ...db]);
  assert.equal(p.code, 0, p.stderr);
  const r = await runCli(['run', mod, ...db, '--events', '30', '--format', 'json']);
  assert.equal(r.code, 0, r.stderr);
  const res = JSON.parse(r.stdout) as RunResult;
  assert.equal(res.workload.name, 'kv_zipfian');
  assert.equal(res.workload.options.rand_type, 'zipfian');
  assert.deepEqual([res.sysbench?.read, res.sysbench?.write, res.sysbench?.other], [120, 30, 60]);
  assert.equal((await runCli(['cleanup', mod, ...db])).code, 0);
});
