/** Every sysbench workload prepares, runs and cleans up on SQLite, and counts as sysbench counts. */
import assert from 'node:assert/strict';
import path from 'node:path';
import { test } from 'node:test';
import type { RunResult } from '../src/metrics/run-result.ts';
import { runCli, tmpDir } from './helpers/cli.ts';

const PER_EVENT: Record<string, [number, number, number]> = {
  oltp_read_only: [14, 0, 2],
  oltp_read_write: [14, 4, 2],
  oltp_write_only: [0, 4, 2],
  oltp_point_select: [1, 0, 0],
  oltp_update_index: [0, 1, 0],
  oltp_update_non_index: [0, 1, 0],
  oltp_insert: [0, 1, 0],
  select_random_points: [1, 0, 0],
  select_random_ranges: [1, 0, 0],
};

test('sqlite: every sysbench workload runs on the same prepared tables', async () => {
  const db = `sqlite:${path.join(tmpDir(), 'sb.sqlite')}`;
  const common = ['--db', db, '--table-size', '300'];
  const p = await runCli(['prepare', 'oltp_read_write', ...common, '--threads', '2']);
  assert.equal(p.code, 0, p.stderr);
  for (const [w, [r, wr, o]] of Object.entries(PER_EVENT)) {
    const run = await runCli(['run', w, ...common, '--events', '20', '--format', 'json']);
    assert.equal(run.code, 0, `${w}: ${run.stderr}`);
    const s = (JSON.parse(run.stdout) as RunResult).sysbench;
    assert.deepEqual([s?.read, s?.write, s?.other, s?.transactions], [r * 20, wr * 20, o * 20, 20], w);
  }
  const c = await runCli(['cleanup', 'oltp_read_write', ...common]);
  assert.equal(c.code, 0, c.stderr);
  const after = await runCli(['run', 'oltp_point_select', ...common, '--events', '1']);
  assert.equal(after.code, 2, 'the tables are gone');
});

test('sqlite: oltp_delete counts deletes of missing rows as other; bulk_insert fills one table per client', async () => {
  const db = `sqlite:${path.join(tmpDir(), 'sb.sqlite')}`;
  assert.equal((await runCli(['prepare', 'oltp_delete', '--db', db, '--table-size', '10'])).code, 0);
  const d = await runCli([
    'run',
    'oltp_delete',
    '--db',
    db,
    '--table-size',
    '10',
    '--events',
    '60',
    '--format',
    'json',
  ]);
  const s = (JSON.parse(d.stdout) as RunResult).sysbench;
  // at most 10 rows can be deleted; every other DELETE matched nothing
  assert.ok(s && s.write <= 10 && s.write + s.other === 60, JSON.stringify(s));
  assert.equal((JSON.parse(d.stdout) as RunResult).types.deletes?.zero_rows, s?.other);

  assert.equal((await runCli(['prepare', 'bulk_insert', '--db', db, '--threads', '2'])).code, 0);
  const b = await runCli([
    'run',
    'bulk_insert',
    '--db',
    db,
    '--threads',
    '2',
    '--events',
    '400',
    '--format',
    'json',
  ]);
  assert.equal(b.code, 0, b.stderr);
  assert.equal((JSON.parse(b.stdout) as RunResult).sysbench?.transactions, 400);
  assert.equal((await runCli(['cleanup', 'bulk_insert', '--db', db, '--threads', '2'])).code, 0);
});

test('bad option values name the option', async () => {
  const r1 = await runCli(['run', 'oltp_read_only', '--rand-type', 'bogus']);
  assert.equal(r1.code, 2);
  assert.match(r1.stderr, /--rand-type must be one of uniform, gaussian, special, pareto, zipfian/);
  const r2 = await runCli(['run', 'oltp_read_only', '--table-size', '-5']);
  assert.equal(r2.code, 2);
  assert.match(r2.stderr, /--table-size must be at least 0/);
  const r3 = await runCli(['run', 'oltp_read_onyl']);
  assert.equal(r3.code, 2);
  assert.match(r3.stderr, /unknown workload 'oltp_read_onyl'/);
  assert.match(r3.stderr, /oltp_read_only, oltp_read_write/);
});
