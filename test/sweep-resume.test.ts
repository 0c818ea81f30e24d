/** `dbsmack sweep … --resume FILE`: a sweep cut short goes on from its document, and refuses other options. */
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import type { SweepResult } from '../src/analysis/types.ts';
import { runCli, startCli, tmpDir } from './helpers/cli.ts';
import { waitFor } from './helpers/wait.ts';

test('an interrupted sweep is resumed from its document without repeating a finished run', async () => {
  const dir = tmpDir();
  const out = path.join(dir, 'sweep.json');
  const env = { DBSMACK_HISTORY: path.join(dir, 'h.sqlite') };
  const args = [
    'sweep',
    'select1',
    '--db',
    `sqlite:${path.join(dir, 'db.sqlite')}`,
    '--clients',
    '1,2',
    '--repeat',
    '2',
    '--time',
    '0.5',
  ];
  const first = startCli([...args, '--out', out], { env });
  const complete = (): number =>
    existsSync(out)
      ? (JSON.parse(readFileSync(out, 'utf8')) as SweepResult).points
          .flatMap((p) => p.runs)
          .filter((r) => r.status === 'complete').length
      : 0;
  await waitFor('the sweep document to show a finished run', () => complete() >= 1, {
    timeoutMs: 60_000,
    everyMs: 20,
  });
  first.child.kill('SIGINT');
  const r1 = await first.done;
  assert.ok(r1.code === 130 || r1.code === 0, r1.stderr);
  const kept = complete();
  const changed = await runCli([...args.map((a) => (a === '0.5' ? '0.6' : a)), '--resume', out], { env });
  assert.equal(changed.code, 2, changed.stderr);
  assert.match(
    changed.stderr,
    /--resume: cannot continue .*sweep\.json: time: 0\.5 → 0\.6; the new runs would be mixed/,
  );
  const r2 = await runCli([...args, '--resume', out], { env });
  assert.equal(r2.code, 0, r2.stderr);
  assert.match(r2.stderr, new RegExp(`resuming .*\\(${kept} runs kept\\)`));
  const doc = JSON.parse(readFileSync(out, 'utf8')) as SweepResult;
  assert.equal(doc.status, 'complete');
  assert.deepEqual(
    doc.points.map((p) => [p.clients, p.runs.map((r) => `${r.repeat}:${r.status}`)]),
    [
      [1, ['1:complete', '2:complete']],
      [2, ['1:complete', '2:complete']],
    ],
  );
  // one sweep in the history, holding every run
  assert.equal(new Set(doc.points.flatMap((p) => p.runs.map((r) => r.id))).size, 4);
  assert.match(r2.stderr, new RegExp(`recorded as sweep ${doc.history?.sweep} in`));
});
