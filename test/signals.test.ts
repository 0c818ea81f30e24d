/** Ctrl-C in the middle of a run: a partial result that holds what was measured, exit 130. */
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { type TestContext, test } from 'node:test';
import type { RunResult } from '../src/metrics/run-result.ts';
import { startCli, tmpDir } from './helpers/cli.ts';
import { needServer, PG_URL } from './helpers/servers.ts';

async function interrupt(t: TestContext, db: string | undefined): Promise<void> {
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
  // Wait until the run is measuring (a progress line), then interrupt.
  let stderr = '';
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`no progress line: ${stderr}`)), 20_000);
    child.stderr?.on('data', (d: Buffer) => {
      stderr += d.toString();
      if (/\[ \d+s \]/.test(stderr)) {
        clearTimeout(timer);
        resolve();
      }
    });
  });
  const t0 = Date.now();
  child.kill('SIGINT');
  const r = await done;
  const took = (Date.now() - t0) / 1000;
  t.diagnostic(`stopped ${took.toFixed(2)} s after SIGINT`);
  assert.equal(r.code, 130, r.stderr);
  assert.ok(took < 10, `stopped within a few seconds (took ${took} s)`);
  assert.match(r.stderr, /SIGINT: stopping, keeping what was measured/);
  const res = JSON.parse(r.stdout) as RunResult;
  assert.equal(res.status, 'partial');
  assert.match(res.status_reason ?? '', /interrupted/);
  assert.ok(res.totals.queries > 0, 'the result holds what was measured');
  assert.ok(res.elapsed_s > 0.5 && res.elapsed_s < 29, `elapsed ${res.elapsed_s}`);
  assert.ok(res.intervals.length >= 1, 'timeline kept');
  assert.equal(
    res.intervals.reduce((a, p) => a + p.queries, 0),
    res.totals.queries,
  );
  assert.ok(existsSync(out), '--out written');
  assert.equal((JSON.parse(readFileSync(out, 'utf8')) as RunResult).status, 'partial');
}

test('SIGINT during a --time 30 run on SQLite', async (t) => {
  await interrupt(t, undefined);
});

test('SIGINT during a --time 30 run on PostgreSQL', async (t) => {
  if (!(await needServer(t, 'postgres'))) return;
  await interrupt(t, PG_URL);
});

test('a second SIGINT quits at once', async () => {
  const { child, done } = startCli(['run', 'select1', '--clients', '2', '--time', '30', '--progress']);
  await new Promise<void>((resolve) => {
    child.stderr?.on('data', (d: Buffer) => {
      if (/\[ \d+s \]/.test(d.toString())) resolve();
    });
  });
  child.kill('SIGINT');
  child.kill('SIGINT');
  const r = await done;
  assert.equal(r.code, 130);
});
