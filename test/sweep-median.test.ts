/**
 * A run that did not complete (interrupted, or stopped by errors) does not enter a sweep point's median,
 * range, CV or verdict unseen: it is left out of them, kept in the runs, and named — as compare leaves it
 * out. A point with no complete run shows its partial runs' figures and says so.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { buildPoint } from '../src/analysis/sweep-build.ts';
import type { SweepResult, SweepRun } from '../src/analysis/types.ts';
import type { RunResult, RunStatus } from '../src/metrics/run-result.ts';
import { renderSweepText } from '../src/report/sweep-text.ts';

function run(repeat: number, qps: number, status: RunStatus = 'complete', p95 = 1): SweepRun {
  return {
    repeat,
    status,
    qps,
    eps: qps,
    p95_ms: p95,
    p99_ms: p95 * 2,
    elapsed_s: status === 'complete' ? 10 : 0.4,
    errors: 0,
    stalls: [],
    outlier: false,
    result: {} as RunResult,
  };
}

test('a partial run is left out of the median, range, CV and latency, and the point says so', () => {
  // The interrupted fourth run measured 0.4 s at a tenth of the rate, with a p95 twenty times higher.
  const p = buildPoint(4, [run(1, 1000), run(2, 1010), run(3, 990), run(4, 100, 'partial', 20)]);
  assert.equal(p.qps.median, 1000);
  assert.equal(p.qps.min, 990);
  assert.equal(p.qps.max, 1010);
  assert.ok(p.qps.cv < 0.02, `cv ${p.qps.cv}`);
  assert.equal(p.p95_ms_median, 1);
  assert.deepEqual(p.left_out, [4]);
  assert.equal(p.runs.length, 4, 'the partial run is kept');
  assert.equal(p.runs[3]!.outlier, false, 'not judged among the complete runs');
  // noisy, not erratic: the spread of the complete runs is 2%; the reason names the run left out
  assert.equal(p.stability, 'noisy');
  assert.match(p.stability_reason, /CV 1\.0% over 3 runs \(990 to 1010 q\/s\)/);
  assert.match(p.stability_reason, /run 4 did not complete and is left out of the median, range and CV/);
  const doc = {
    label: 's',
    status: 'partial',
    workload: { name: 'select1' },
    target: { url: 'sqlite:x', driver: 'sqlite', server_version: 'SQLite' },
    repeat: 4,
    points: [p],
  } as unknown as SweepResult;
  const text = renderSweepText(doc);
  assert.match(text, /^4\s+3\+1\s+1000\s+990\.0\s+1010\s/m);
  assert.match(text, /runs N\+M: N complete runs make the figures/);
  assert.match(text, /100\.0\(partial, left out\)/);
});

test('a point whose only runs are partial shows their figures, and says they are partial', () => {
  const p = buildPoint(8, [run(1, 600, 'partial'), run(2, 620, 'partial')]);
  assert.equal(p.qps.median, 610);
  assert.equal(p.left_out, undefined);
  assert.equal(p.stability, 'noisy');
  assert.match(p.stability_reason, /no run completed \(runs 1, 2\): these figures are of partial runs/);
});

test('outliers and stalls name the run by its repeat number when a run before it is left out', () => {
  const runs = [run(1, 50, 'partial'), run(2, 1000), run(3, 1002), run(4, 998), run(5, 1001), run(6, 1300)];
  runs[2]!.stalls = [[3, 5]];
  const p = buildPoint(1, runs);
  assert.deepEqual(p.left_out, [1]);
  assert.match(p.stability_reason, /run 6 at 1300 q\/s above the median/);
  assert.match(p.stability_reason, /run 3 stalled at 3–5 s/);
  assert.equal(p.runs[5]!.outlier, true);
});
