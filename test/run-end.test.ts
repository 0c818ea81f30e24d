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

/** Run a workload module whose client has `body` for 1 s on SQLite; its exit code and RunResult. */
async function runModule(
  body: string,
  clients: number,
): Promise<{ code: number | null; res: RunResult; stderr: string }> {
  const dir = tmpDir();
  const mod = path.join(dir, 'end.mjs');
  writeFileSync(mod, `export default { name: 'end', client(ctx) { return { ${body} }; } };\n`);
  const db = `sqlite:${path.join(dir, 'e.sqlite')}`;
  const r = await runCli(
    ['run', mod, '--db', db, '--clients', String(clients), '--time', '1', '--format', 'json', '--no-history'],
    { cwd: dir },
  );
  return { code: r.code, res: JSON.parse(r.stdout) as RunResult, stderr: r.stderr };
}

test('slow events that end one after another past the fixed grace complete the run', async () => {
  // Each client's first event spans the deadline (1 s) and ends at 2, 4, 6 and 8 s: later than a fixed
  // 5 s grace would wait (6 s), but every 2 s a client finishes, so the grace runs again each time.
  const { code, res, stderr } = await runModule(
    'async event() { await ctx.sleep(2000 * (ctx.clientId + 1)); }',
    4,
  );
  assert.equal(code, 0, stderr);
  assert.equal(res.status, 'complete', res.status_reason);
});

test('a worker that finishes nothing for a whole grace is given up on: partial, and the reason says so', async () => {
  // the event blocks its worker thread for a minute (no statement, no await: nothing can end it but terminate)
  const { code, res } = await runModule(
    'event() { const end = Date.now() + 60000; while (Date.now() < end) {} }',
    1,
  );
  assert.notEqual(code, 0, 'a stuck worker is not a complete run');
  assert.equal(res.status, 'partial');
  assert.match(res.status_reason ?? '', /^1 worker \(1 client\) did not stop in time and was terminated$/);
});
