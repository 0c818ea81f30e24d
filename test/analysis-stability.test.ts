import assert from 'node:assert/strict';
import { test } from 'node:test';
import { findStalls, judgeStability, madOutliers } from '../src/analysis/stability.ts';
import type { IntervalPoint } from '../src/metrics/run-result.ts';

const none = (n: number): [number, number][][] => Array.from({ length: n }, () => []);

test('a stable series is stable', () => {
  const qps = [1000, 1010, 995, 1005, 990];
  const v = judgeStability({ qps, stalls: none(5) });
  assert.equal(v.stability, 'stable');
  assert.match(v.reason, /CV 0\.8% over 5 runs/);
  assert.deepEqual(v.outliers, [false, false, false, false, false]);
});

test('a noisy series is noisy, with its CV in words', () => {
  const v = judgeStability({ qps: [1000, 1080, 950, 1100, 1020], stalls: none(5) });
  assert.equal(v.stability, 'noisy');
  assert.match(v.reason, /CV 5\.9% over 5 runs \(950 to 1100 q\/s\)/);
});

test("the story's series 60, 3167, 32, 757, 2988 q/s is erratic", () => {
  const v = judgeStability({ qps: [60, 3167, 32, 757, 2988], stalls: none(5) });
  assert.equal(v.stability, 'erratic');
  assert.match(v.reason, /CV 111%/);
  assert.match(v.reason, /32 to 3167 q\/s/);
  assert.match(v.reason, /99×/);
});

test('outliers are flagged by the median/MAD test and kept, and make a point noisy', () => {
  const qps = [1000, 1002, 998, 1001, 1003, 999, 1100];
  assert.deepEqual(madOutliers(qps), [false, false, false, false, false, false, true]);
  const v = judgeStability({ qps, stalls: none(7) });
  assert.equal(v.stability, 'noisy');
  assert.match(v.reason, /run 7 at 1100 q\/s above the median 1001/);
  // fewer than three values: no test
  assert.deepEqual(madOutliers([1, 100]), [false, false]);
  // more than half equal (MAD 0): a value 10% away stands out
  assert.deepEqual(madOutliers([500, 500, 500, 560]), [false, false, false, true]);
});

test('one run cannot be judged stable', () => {
  const v = judgeStability({ qps: [1234], stalls: none(1) });
  assert.equal(v.stability, 'noisy');
  assert.match(v.reason, /one run only/);
});

function timeline(qps: number[]): IntervalPoint[] {
  return qps.map((q, i) => ({
    t: i + 1,
    dur: 1,
    queries: q,
    events: q,
    qps: q,
    eps: q,
    p95_ms: 1,
    event_p95_ms: 1,
    errors: 0,
    retries: 0,
    reconnects: 0,
    reads: q,
    writes: 0,
    others: 0,
  }));
}

test('stalls are intervals with near-zero throughput in the middle of a run, merged, with their times', () => {
  assert.deepEqual(findStalls(timeline([0, 900, 1000, 3, 0, 1000, 950, 5, 1000, 0])), [
    [3, 5],
    [7, 8],
  ]);
  // ramp-up and tail are not stalls; a steady run has none
  assert.deepEqual(findStalls(timeline([0, 1000, 1000, 990, 0])), []);
  assert.deepEqual(findStalls(timeline([1000, 10])), []);
});

test('a stall makes a point with a tight spread noisy, and says when', () => {
  const v = judgeStability({ qps: [1000, 1001, 999], stalls: [[], [[3, 5]], []] });
  assert.equal(v.stability, 'noisy');
  assert.match(v.reason, /run 2 stalled at 3–5 s/);
});
