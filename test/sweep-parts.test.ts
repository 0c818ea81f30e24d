import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, test } from 'node:test';
import { summarizeRun } from '../src/analysis/sweep-build.ts';
import { SWEEP_SCHEMA } from '../src/analysis/types.ts';
import type { ResolvedWorkload } from '../src/cli/run.ts';
import { defaultSweepLabel, SweepRecorder, sweepRunLine, workloadsByClients } from '../src/cli/sweep.ts';
import type { RunResult } from '../src/metrics/run-result.ts';

const RUN = JSON.parse(
  readFileSync(new URL('./fixtures/report/run-stall.json', import.meta.url), 'utf8'),
) as RunResult;
const dir = mkdtempSync(path.join(tmpdir(), 'dbsmack-sweep-parts-'));
after(() => rmSync(dir, { recursive: true, force: true }));

const fake = (name: string): ResolvedWorkload =>
  ({
    workload: { name },
    ref: { ref: name, rawOptions: {}, args: [] },
    options: {},
  }) as unknown as ResolvedWorkload;

test('a smack file is resolved once per client count and kept; another workload is the first for every count', async () => {
  const asked: number[] = [];
  const resolve = async (c: number) => {
    asked.push(c);
    return fake(`smack-${c}`);
  };
  const smack = workloadsByClients(fake('first'), resolve, true);
  assert.equal((await smack(4)).workload.name, 'smack-4');
  assert.equal((await smack(4)).workload.name, 'smack-4');
  assert.equal((await smack(8)).workload.name, 'smack-8');
  assert.deepEqual(asked, [4, 8]);
  const other = workloadsByClients(fake('first'), resolve, false);
  assert.equal((await other(16)).workload.name, 'first');
  assert.deepEqual(asked, [4, 8]);
});

test('a sweep is labelled with its workload and start time, and says each run on one line', () => {
  assert.equal(
    defaultSweepLabel('oltp_read_only', new Date('2026-03-04T05:06:07.890Z')),
    'oltp_read_only-20260304-050607',
  );
  const sr = summarizeRun(RUN, 2);
  const line = sweepRunLine(0, 3, { clients: 4, repeat: 2 }, sr, 'complete');
  assert.match(line, /^dbsmack: \[1\/3\] 4 clients, repeat 2: \d+\.\d q\/s, p95 \d+\.\d{3} ms, complete/);
  assert.equal(line.includes('STALLED'), sr.stalls.length > 0);
  const calm = sweepRunLine(2, 3, { clients: 1, repeat: 1 }, { ...sr, stalls: [] }, 'failed');
  assert.ok(calm.endsWith(', failed'), calm);
  assert.match(
    sweepRunLine(0, 1, { clients: 1, repeat: 1 }, { ...sr, stalls: [[3, 5]] }, 'complete'),
    /, STALLED at 3–5 s$/,
  );
});

test('the recorder rewrites --out after every run, and a file that cannot be written warns once', () => {
  const head = {
    label: 'parts',
    repeat: 2,
    clients: [RUN.clients],
    started_at: '2026-01-01T00:00:00.000Z',
    resume: { fingerprint: 'abc', settings: { workload: 'x' } },
  };
  const out = path.join(dir, 'sweep.json');
  const rec = new SweepRecorder(undefined, { ...head, out }, undefined);
  rec.persist(false); // nothing measured yet: nothing written
  assert.equal(rec.doc, undefined);
  rec.done.push({ clients: RUN.clients, run: summarizeRun(RUN, 1) });
  rec.persist(false, { result: RUN, repeat: 1 });
  const doc = JSON.parse(readFileSync(out, 'utf8'));
  assert.equal(doc.schema, SWEEP_SCHEMA);
  assert.equal(doc.label, 'parts');
  assert.deepEqual(doc.resume, head.resume);
  assert.equal(rec.close(), undefined); // no history
  const warned: string[] = [];
  const lost = new SweepRecorder(
    undefined,
    { ...head, out: path.join(dir, 'no', 'such', 'dir.json') },
    undefined,
  );
  lost.log = (m) => warned.push(m);
  lost.done.push({ clients: RUN.clients, run: summarizeRun(RUN, 1) });
  lost.persist(false, { result: RUN, repeat: 1 });
  lost.persist(true);
  assert.equal(lost.outFailed, true);
  assert.equal(warned.length, 1);
  assert.match(warned[0]!, /^dbsmack: warning: .*\(--out\), going on without it$/);
  assert.notEqual(lost.doc, undefined);
});
