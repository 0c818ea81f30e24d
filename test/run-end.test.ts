/**
 * The end of a run: events in flight at the deadline are waited for while clients keep finishing (as
 * sysbench and pgbench wait for them), and a worker that finishes nothing for a whole grace is given up on,
 * with a partial result that says so.
 */
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import type { RunResult } from '../src/metrics/run-result.ts';
import { runCli, tmpDir } from './helpers/cli.ts';

function module(dir: string, body: string): string {
  const file = path.join(dir, 'end.mjs');
  writeFileSync(file, `export default { name: 'end', client(ctx) { return { ${body} }; } };\n`);
  return file;
}

test('slow events that end one after another past the fixed grace complete the run', async () => {
  // Each client's first event spans the deadline (1 s) and ends at 2, 4, 6 and 8 s: later than a fixed
  // 5 s grace would wait (6 s), but every 2 s a client finishes, so the grace runs again each time.
  const dir = tmpDir();
  const mod = module(dir, 'async event() { await ctx.sleep(2000 * (ctx.clientId + 1)); }');
  const r = await runCli(
    [
      'run',
      mod,
      '--db',
      `sqlite:${path.join(dir, 'e.sqlite')}`,
      '--clients',
      '4',
      '--time',
      '1',
      '--format',
      'json',
      '--no-history',
    ],
    { cwd: dir },
  );
  assert.equal(r.code, 0, r.stderr);
  const res = JSON.parse(r.stdout) as RunResult;
  assert.equal(res.status, 'complete', res.status_reason);
});

test('a worker that finishes nothing for a whole grace is given up on: partial, and the reason says so', async () => {
  const dir = tmpDir();
  // the event blocks its worker thread for a minute (no statement, no await: nothing can end it but terminate)
  const mod = module(dir, 'event() { const end = Date.now() + 60000; while (Date.now() < end) {} }');
  const r = await runCli(
    [
      'run',
      mod,
      '--db',
      `sqlite:${path.join(dir, 'e.sqlite')}`,
      '--clients',
      '1',
      '--time',
      '1',
      '--format',
      'json',
      '--no-history',
    ],
    { cwd: dir },
  );
  assert.notEqual(r.code, 0, 'a stuck worker is not a complete run');
  const res = JSON.parse(r.stdout) as RunResult;
  assert.equal(res.status, 'partial');
  assert.match(res.status_reason ?? '', /1 worker\(s\) did not stop in time/);
});
