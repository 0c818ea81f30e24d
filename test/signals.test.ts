/** Ctrl-C in the middle of a run: a partial result that holds what was measured, exit 130. */
import assert from 'node:assert/strict';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import type { RunResult } from '../src/metrics/run-result.ts';
import { startCli, tmpDir } from './helpers/cli.ts';
import { needServer, PG_URL } from './helpers/servers.ts';
import { waitFor, waitForOutput } from './helpers/wait.ts';

async function interrupt(db: string | undefined): Promise<void> {
  const dir = tmpDir();
  const out = path.join(dir, 'r.json');
  const args = [
    'run',
    'select1',
    '--clients',
    '4',
    '--time',
    '30',
    '--format',
    'json',
    '--out',
    out,
    '--progress',
  ];
  if (db) args.push('--db', db);
  const { child, done } = startCli(args, { cwd: dir });
  // Interrupt once the run is measuring (its first progress line).
  await waitForOutput(child, /\[ \d+s \]/, 'the first progress line of the run');
  child.kill('SIGINT');
  const r = await done;
  assert.equal(r.code, 130, r.stderr);
  assert.match(r.stderr, /SIGINT: stopping, keeping what was measured/);
  const res = JSON.parse(r.stdout) as RunResult;
  assert.equal(res.status, 'partial');
  assert.match(res.status_reason ?? '', /interrupted/);
  assert.ok(res.totals.queries > 0, 'the result holds what was measured');
  // Stopped by the signal, before the deadline the run was given.
  assert.equal(res.limits.time_s, 30);
  assert.ok(res.elapsed_s > 0 && res.elapsed_s < 30, `elapsed ${res.elapsed_s}`);
  assert.ok(res.intervals.length >= 1, 'timeline kept');
  assert.equal(
    res.intervals.reduce((a, p) => a + p.queries, 0),
    res.totals.queries,
  );
  assert.ok(existsSync(out), '--out written');
  assert.equal((JSON.parse(readFileSync(out, 'utf8')) as RunResult).status, 'partial');
}

test('SIGINT during a --time 30 run on SQLite', async () => {
  await interrupt(undefined);
});

test('SIGINT during a --time 30 run on PostgreSQL', async (t) => {
  if (!(await needServer(t, 'postgres'))) return;
  await interrupt(PG_URL);
});

test('a second SIGINT quits at once, without waiting for the graceful stop', async () => {
  // Every event blocks its worker thread for a minute: after the first SIGINT a graceful stop waits for it
  // (the engine's grace, 5 s, then a partial result), so a result on stdout or in --out would mean the
  // second signal did not end the process.
  const dir = tmpDir();
  const blocked = path.join(dir, 'blocked');
  const out = path.join(dir, 'r.json');
  const mod = path.join(dir, 'block.mjs');
  writeFileSync(
    mod,
    `import { writeFileSync } from 'node:fs';
export default { name: 'block', client() { return { event() {
  writeFileSync(${JSON.stringify(blocked)}, 'x');
  const end = Date.now() + 60000;
  while (Date.now() < end) {}
} }; } };
`,
  );
  const { child, done } = startCli(
    [
      'run',
      mod,
      '--db',
      `sqlite:${path.join(dir, 'b.sqlite')}`,
      '--time',
      '30',
      '--format',
      'json',
      '--out',
      out,
    ],
    { cwd: dir },
  );
  try {
    await waitFor('the event to block its worker', () => existsSync(blocked));
    const stopping = waitForOutput(child, /SIGINT: stopping/, 'the first SIGINT to be taken');
    child.kill('SIGINT');
    await stopping;
    child.kill('SIGINT');
    const r = await done;
    assert.equal(r.code, 130, r.stderr);
    assert.match(r.stderr, /SIGINT again: quitting without a result/);
    assert.equal(r.stdout, '', 'no result: the graceful stop had not finished');
    assert.equal(existsSync(out), false, 'no --out written');
  } finally {
    child.kill('SIGKILL');
  }
});
