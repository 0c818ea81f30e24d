import assert from 'node:assert/strict';
import { test } from 'node:test';
import { RunAccumulator } from '../src/engine/accumulator.ts';
import type { CounterSnapshot, DoneMessage, IntervalMessage } from '../src/engine/protocol.ts';
import {
  type Histogram,
  type HistogramCounts,
  histogramOf,
  mergingHistogram,
  type RecordingHistogram,
  recordingHistogram,
} from '../src/metrics/histogram.ts';
import type { MeasurePlan } from '../src/metrics/outcome.ts';
import type { IntervalPoint } from '../src/metrics/run-result.ts';

const plan = (over: Partial<MeasurePlan> = {}): MeasurePlan => ({
  workload: { ref: 'test', args: [] },
  clients: 4,
  rounds: undefined,
  events: undefined,
  timeS: 3,
  warmupS: 0,
  reportIntervalS: 1,
  maxTries: 1,
  ...over,
});

/** A snapshot of a recording histogram of these latencies (µs). */
function hist(values: number[]): HistogramCounts {
  const h = recordingHistogram();
  for (const v of values) h.recordValue(v);
  return h.counts();
}

/** A worker's snapshot: `reads` select latencies (µs), `writes` insert latencies, one event per statement. */
function snap(reads: number[], writes: number[] = [], extra: Partial<CounterSnapshot> = {}): CounterSnapshot {
  const types = [];
  if (reads.length)
    types.push({ name: 'select', kind: 'read' as const, count: reads.length, errors: 0, hist: hist(reads) });
  if (writes.length) {
    types.push({
      name: 'insert',
      kind: 'write' as const,
      count: writes.length,
      errors: 0,
      hist: hist(writes),
    });
  }
  const all = [...reads, ...writes];
  return {
    types,
    events: all.length,
    ...(all.length ? { eventHist: hist(all) } : {}),
    errors: [],
    retries: 0,
    reconnects: 0,
    ...extra,
  };
}

const interval = (workerIndex: number, idx: number, s: CounterSnapshot): IntervalMessage => ({
  type: 'interval',
  workerIndex,
  idx,
  ...s,
});

const US = 1e6;
const MEASURE_AT = 1_000 * US;

function done(
  workerIndex: number,
  idx: number,
  s: CounterSnapshot,
  endS: number,
  over: Partial<DoneMessage> = {},
): DoneMessage {
  return {
    type: 'done',
    workerIndex,
    last: interval(workerIndex, idx, s),
    warmup: { types: [], events: 0, errors: [], retries: 0, reconnects: 0, elapsedUs: 0 },
    clientSummaries: [workerIndex, workerIndex + 2].map((id) => ({
      id,
      events: 1,
      queries: 1,
      errors: 0,
      connectMs: 1,
      busyUs: 1,
      batched: 0,
      aborted: false,
    })),
    lastEndUs: MEASURE_AT + endS * US,
    ...over,
  };
}

/** A recorded histogram as the engine receives it, merged into an empty one by the package's own `add`. */
function sent(h: RecordingHistogram): Histogram {
  const m = mergingHistogram();
  m.add(histogramOf(h.counts()));
  return m;
}

function exactlyEqual(a: Histogram, b: Histogram): void {
  assert.equal(a.totalCount, b.totalCount);
  assert.equal(a.maxValue, b.maxValue);
  assert.equal(a.minNonZeroValue, b.minNonZeroValue);
  for (const p of [1, 25, 50, 75, 90, 99, 99.9, 100])
    assert.equal(a.getValueAtPercentile(p), b.getValueAtPercentile(p), `p${p}`);
}

test('an interval closes only when every worker has reported it, in order', () => {
  const acc = new RunAccumulator(plan(), 2);
  acc.interval(interval(0, 0, snap([100, 200])));
  assert.deepEqual(acc.closeComplete(), [], 'worker 1 has not reported interval 0');
  acc.interval(interval(0, 1, snap([300])));
  acc.interval(interval(0, 2, snap([300])));
  assert.deepEqual(acc.closeComplete(), []);
  assert.equal(acc.closedUpTo, -1);
  acc.interval(interval(1, 0, snap([400])));
  const first = acc.closeComplete();
  assert.deepEqual(
    first.map((p) => [p.t, p.dur, p.queries]),
    [[1, 1, 3]],
  );
  assert.equal(acc.closedUpTo, 0);
  // worker 1's late snapshot of interval 1 closes it, not interval 2
  acc.interval(interval(1, 1, snap([500, 600])));
  assert.deepEqual(
    acc.closeComplete().map((p) => [p.t, p.queries]),
    [[2, 3]],
  );
  assert.equal(acc.closedUpTo, 1);
});

test('the interval a finished worker ended in stays open until the end, and the last one ends where the run did', () => {
  const acc = new RunAccumulator(plan(), 2);
  acc.interval(interval(0, 0, snap([100])));
  acc.interval(interval(1, 0, snap([100])));
  assert.equal(acc.closeComplete().length, 1);
  // worker 0 is done in interval 1 (partial); worker 1 goes on reporting interval 1 in full and 2
  acc.done(done(0, 1, snap([100]), 1.5));
  acc.interval(interval(1, 1, snap([200])));
  acc.interval(interval(1, 2, snap([200])));
  assert.deepEqual(acc.closeComplete(), [], 'interval 1 may still grow');
  acc.done(done(1, 2, snap([300, 300]), 2.25));
  const last = acc.finish(MEASURE_AT);
  assert.deepEqual(
    last.map((p) => [p.t, p.dur, p.queries, p.qps]),
    [
      [2, 1, 2, 2],
      [2.25, 0.25, 3, 12],
    ],
  );
  const o = acc.outcome(MEASURE_AT);
  assert.equal(o.elapsedS, 2.25);
  assert.deepEqual(
    o.intervals.map((p) => p.t),
    [1, 2, 2.25],
  );
  assert.deepEqual(
    o.clientSummaries.map((c) => c.id),
    [0, 1, 2, 3],
    'sorted by client id',
  );
});

test('the closed intervals add up to the totals, and the histograms merge exactly', () => {
  const acc = new RunAccumulator(plan(), 3);
  const reads: number[][] = [];
  const writes: number[][] = [];
  let x = 12345;
  const next = (): number => {
    x = (Math.imul(x, 1103515245) + 12345) >>> 0;
    return 1 + (x % 50_000);
  };
  // every latency recorded in one histogram, as one worker would have sent it
  const expectRead = recordingHistogram();
  const expectEvent = recordingHistogram();
  for (let idx = 0; idx < 3; idx++) {
    for (let w = 0; w < 3; w++) {
      const r = Array.from({ length: 5 + w + idx }, next);
      const wr = Array.from({ length: 2 + w }, next);
      reads.push(r);
      writes.push(wr);
      for (const v of r) {
        expectRead.recordValue(v);
        expectEvent.recordValue(v);
      }
      for (const v of wr) expectEvent.recordValue(v);
      const extra: Partial<CounterSnapshot> = {
        retries: w,
        reconnects: idx,
        errors: [{ code: '1213', kind: 'retryable', count: w + 1, ignored: false, message: 'deadlock' }],
        counters: { rows: 10 * (w + 1) },
      };
      if (idx < 2) acc.interval(interval(w, idx, snap(r, wr, extra)));
      else acc.done(done(w, idx, snap(r, wr, extra), 3));
    }
    acc.closeComplete();
  }
  const points = acc.finish(MEASURE_AT);
  assert.equal(points.length, 1, 'the last interval closes at the end');
  const o = acc.outcome(MEASURE_AT);
  assert.equal(o.intervals.length, 3);
  const sum = (f: (p: (typeof o.intervals)[number]) => number): number =>
    o.intervals.reduce((a, p) => a + f(p), 0);
  const select = o.types.get('select');
  const insert = o.types.get('insert');
  assert.ok(select && insert);
  assert.equal(
    sum((p) => p.queries),
    select.count + insert.count,
  );
  assert.equal(
    sum((p) => p.reads),
    select.count,
  );
  assert.equal(
    sum((p) => p.writes),
    insert.count,
  );
  assert.equal(
    sum((p) => p.events),
    o.events.count,
  );
  assert.equal(
    sum((p) => p.errors),
    o.errors.reduce((a, e) => a + e.count, 0),
  );
  assert.equal(
    sum((p) => p.retries),
    o.retries,
  );
  assert.equal(
    sum((p) => p.reconnects),
    o.reconnects,
  );
  assert.equal(
    sum((p) => p.counters?.rows ?? 0),
    o.counters.get('rows'),
  );
  assert.equal(o.retries, 3 * (0 + 1 + 2));
  assert.deepEqual(o.errors, [
    { code: '1213', kind: 'retryable', count: 18, ignored: false, message: 'deadlock' },
  ]);
  assert.equal(select.count, reads.flat().length);
  exactlyEqual(select.hist, sent(expectRead));
  exactlyEqual(o.events.hist, sent(expectEvent));
});

test('an interval that counted nothing and lasted no time is dropped; a live view counts every error so far', () => {
  const acc = new RunAccumulator(plan(), 1);
  acc.interval(
    interval(
      0,
      0,
      snap([100], [], { errors: [{ code: 'X', kind: 'fatal', count: 2, ignored: false, message: 'x' }] }),
    ),
  );
  assert.equal(acc.closeComplete().length, 1);
  assert.equal(acc.liveView().errors, 2);
  assert.equal(acc.liveView().events.count, 1);
  // the run ended exactly on the boundary: interval 1 is empty and 0 s long
  acc.done(done(0, 1, snap([]), 1));
  assert.deepEqual(acc.finish(MEASURE_AT), []);
  assert.equal(acc.outcome(MEASURE_AT).intervals.length, 1);
});

test("a lost worker no longer holds intervals open, and its error is the run's fatal one", () => {
  const acc = new RunAccumulator(plan(), 2);
  acc.interval(interval(0, 0, snap([100])));
  acc.interval(interval(0, 1, snap([100])));
  assert.equal(acc.fatal, false);
  acc.lost(1, { kind: 'fatal', code: 'WORKER_ERROR', message: 'gone', sqlState: undefined });
  acc.interval(interval(0, 2, snap([100])));
  assert.deepEqual(
    acc.closeComplete().map((p) => p.t),
    [1, 2, 3],
  );
  assert.equal(acc.fatal, true);
  acc.lost(0, { kind: 'fatal', code: 'OTHER', message: 'later', sqlState: undefined });
  assert.equal(acc.outcome(MEASURE_AT).fatal?.code, 'WORKER_ERROR', 'the first error stays');
});

test('warm-up, rate lag and abandoned clients go into the outcome', () => {
  const acc = new RunAccumulator(
    plan({ warmupS: 1, rate: { perSec: 10, shape: 'constant', maxLagUs: Infinity, lateUs: 1000 } }),
    2,
  );
  acc.interval(interval(0, 0, snap([100], [], { lagHist: hist([5, 7]), late: 1 })));
  const warm = {
    types: [{ name: '*', kind: 'other' as const, count: 4, errors: 0 }],
    events: 2,
    errors: [],
    retries: 0,
    reconnects: 0,
  };
  acc.done(
    done(0, 1, snap([100], [], { lagHist: hist([9]), late: 2 }), 1.5, {
      warmup: { ...warm, elapsedUs: 0.9 * US },
      dropped: 3,
    }),
  );
  acc.abandoned([1, 3], 'did not stop', MEASURE_AT + 2 * US);
  acc.finish(MEASURE_AT);
  const o = acc.outcome(MEASURE_AT);
  assert.deepEqual(o.warmup, { elapsedS: 0.9, events: 2, queries: 4 });
  assert.equal(o.rate?.late, 3);
  assert.equal(o.rate?.dropped, 3);
  assert.equal(o.rate?.lagHist.totalCount, 3);
  assert.equal(o.elapsedS, 2, 'the abandoned worker ends the measured part at its cut-off');
  assert.deepEqual(
    o.clientSummaries.map((c) => [c.id, c.aborted, c.abortReason]),
    [
      [0, false, undefined],
      [1, true, 'did not stop'],
      [2, false, undefined],
      [3, true, 'did not stop'],
    ],
  );
});

test('stage figures take each closed interval, and every stage is closed at the end', () => {
  const acc = new RunAccumulator(
    plan({
      timeS: 4,
      stages: [
        { durationS: 2, clients: 1 },
        { durationS: 2, clients: 2 },
      ],
    }),
    1,
  );
  acc.interval(interval(0, 0, snap([100])));
  acc.interval(interval(0, 1, snap([100, 100])));
  acc.interval(interval(0, 2, snap([100, 100, 100])));
  const points = acc.closeComplete();
  assert.deepEqual(
    points.map((p) => p.stage),
    [1, 1, 2],
  );
  const stages = acc.liveView().stages;
  assert.ok(stages);
  assert.deepEqual(
    stages.map((s) => [s.queries, s.closed]),
    [
      [3, true],
      [3, false],
    ],
  );
  acc.done(done(0, 3, snap([100]), 3.5));
  acc.finish(MEASURE_AT);
  assert.deepEqual(
    acc.outcome(MEASURE_AT).stages?.map((s) => [s.queries, s.measuredS, s.closed]),
    [
      [3, 2, true],
      [4, 1.5, true],
    ],
  );
});

test("the deadline's interval, reported at the deadline, closes on time; what ended after it joins its point at the end", () => {
  // -T 3 with 1 s intervals and two workers: at 3 s worker 0 still has a statement in flight and reports
  // interval 2 as it stands; worker 1 ran to the deadline and is done; worker 0's late statement ends at 3.4 s.
  const acc = new RunAccumulator(plan({ timeS: 3 }), 2);
  for (const w of [0, 1]) {
    acc.interval(interval(w, 0, snap([100])));
    acc.interval(interval(w, 1, snap([200])));
  }
  assert.deepEqual(
    acc.closeComplete().map((p) => p.t),
    [1, 2],
  );
  acc.done(done(1, 2, snap([300]), 3, { pastDeadline: true }));
  assert.deepEqual(acc.closeComplete(), [], 'worker 0 has not reported the last interval');
  acc.interval(interval(0, 2, snap([])));
  const onTime = acc.closeComplete();
  assert.equal(onTime.length, 1, 'closed at the deadline, before the run is over');
  const live = onTime[0] as IntervalPoint;
  assert.equal(live.t, 3);
  assert.equal(live.dur, 1);
  assert.equal(live.events, 1, 'only what ended by the deadline');
  // the late statement (3.4 s), in worker 0's done
  acc.done(done(0, 2, snap([2_400_000]), 3, { pastDeadline: true }));
  assert.deepEqual(acc.finish(MEASURE_AT), [], 'nothing more to show live');
  const o = acc.outcome(MEASURE_AT);
  assert.deepEqual(
    o.intervals.map((p) => [p.t, p.dur, p.events]),
    [
      [1, 1, 2],
      [2, 1, 2],
      [3, 1, 2],
    ],
  );
  const last = o.intervals[2] as IntervalPoint;
  assert.equal(last.max_ms, 2400.255, 'the late statement is in the last point');
  assert.equal(
    o.intervals.reduce((a, p) => a + p.events, 0),
    o.events.count,
    'the timeline adds up to the totals',
  );
});

test('a worker stopped before the deadline still holds its last interval open until the end', () => {
  const acc = new RunAccumulator(plan({ timeS: 3 }), 2);
  acc.interval(interval(0, 0, snap([100])));
  acc.done(done(0, 1, snap([200]), 1.5)); // interrupted at 1.5 s: not past the deadline
  acc.interval(interval(1, 0, snap([100])));
  acc.interval(interval(1, 1, snap([100])));
  assert.deepEqual(
    acc.closeComplete().map((p) => p.t),
    [1],
    'interval 1 ends where the measured part ended, known at the end',
  );
});
