import assert from 'node:assert/strict';
import { test } from 'node:test';
import { Deadline, type DeadlineClock, START_LEAD_US } from '../src/engine/deadline.ts';
import { stuckReason } from '../src/metrics/build-result.ts';

/** A clock the test moves: `us` for the run's microsecond clock, `ms` for the wall clock. */
function fakeClock(): DeadlineClock & { advanceMs(ms: number): void } {
  let us = 5_000_000_000;
  let ms = 1_700_000_000_000;
  return {
    nowUs: () => us,
    nowMs: () => ms,
    advanceMs(d: number) {
      us += d * 1000;
      ms += d;
    },
  };
}

test('the run starts a little ahead, measures after the warm-up, and ends after --time', () => {
  const clock = fakeClock();
  const d = new Deadline(5000, clock);
  assert.equal(d.endAt, Number.POSITIVE_INFINITY, 'no deadline before the schedule');
  const t0 = clock.nowUs();
  const times = d.schedule({ warmupS: 2, timeS: 10 });
  assert.deepEqual(times, {
    startAt: t0 + START_LEAD_US,
    measureAt: t0 + START_LEAD_US + 2e6,
    endAt: t0 + START_LEAD_US + 12e6,
  });
  assert.equal(d.measureAt, times.measureAt);
  assert.equal(d.untilMeasureMs(), 2020);
  clock.advanceMs(3000);
  assert.equal(d.untilMeasureMs(), 0);
  const untimed = new Deadline(5000, clock).schedule({ warmupS: 0, timeS: undefined });
  assert.equal(untimed.endAt, Number.POSITIVE_INFINITY);
  assert.equal(untimed.measureAt, untimed.startAt);
});

test('the wait ends the grace period after the deadline', () => {
  const clock = fakeClock();
  const d = new Deadline(5000, clock);
  assert.equal(d.remainingMs(), Number.POSITIVE_INFINITY, 'nothing bounds a run without --time or a stop');
  d.schedule({ warmupS: 0, timeS: 1 });
  assert.equal(d.remainingMs(), 1020 + 5000);
  clock.advanceMs(1020);
  assert.equal(d.remainingMs(), 5000, 'the deadline passed: the grace is left');
  clock.advanceMs(5000);
  assert.equal(d.remainingMs(), 0, 'workers still running now are stuck');
  assert.equal(d.cutOffUs(), d.endAt, 'their measured part ends at the deadline');
  assert.equal(
    d.stuckReason,
    'did not stop: no client finished for 5 s after the deadline (blocked in a statement)',
  );
});

test('a stop request bounds the wait by its own grace, and the first request wins', () => {
  const clock = fakeClock();
  const d = new Deadline(2000, clock);
  d.schedule({ warmupS: 0, timeS: 60 });
  clock.advanceMs(1000);
  assert.equal(d.stopRequested, false);
  assert.equal(d.request('threshold', 'p95 above 5 ms'), true);
  assert.equal(d.request('interrupted'), false);
  assert.equal(d.reason, 'threshold');
  assert.equal(d.detail, 'p95 above 5 ms');
  assert.equal(d.remainingMs(), 2000, 'the stop grace comes before the deadline');
  clock.advanceMs(2500);
  assert.equal(d.remainingMs(), -500);
  assert.equal(d.cutOffUs(), clock.nowUs(), 'stopped before the deadline: the measured part ends now');
});

test('the stop reason: a fatal error, then stuck workers, then the request', () => {
  const d = new Deadline(1000, fakeClock());
  assert.equal(d.stopReason(false, 0), undefined, 'ran its course');
  assert.equal(d.stopReason(false, 2), 'stuck');
  d.request('interrupted');
  assert.equal(d.stopReason(false, 0), 'interrupted');
  assert.equal(d.stopReason(false, 1), 'stuck');
  assert.equal(d.stopReason(true, 1), 'fatal');
  assert.equal(d.stopRequested, true);
});

test('the grace is at least twice the longest event, and runs again from each client that finishes', () => {
  const clock = fakeClock();
  const d = new Deadline(5000, clock);
  d.schedule({ warmupS: 0, timeS: 1 });
  d.stretch(1200);
  assert.equal(d.graceMs, 5000, 'short events: the base grace');
  d.stretch(4000);
  d.stretch(3000);
  assert.equal(d.graceMs, 8000, 'twice the longest event seen');
  clock.advanceMs(1020);
  assert.equal(d.remainingMs(), 8000);
  clock.advanceMs(6000);
  d.progress();
  assert.equal(d.remainingMs(), 8000, 'a client finished: the grace runs again');
  clock.advanceMs(7999);
  assert.ok(d.remainingMs() > 0);
  clock.advanceMs(1);
  assert.equal(d.remainingMs(), 0, 'no client finished for a whole grace: stuck');
  assert.equal(
    d.stuckReason,
    'did not stop: no client finished for 8 s after the deadline (blocked in a statement)',
  );
});

test('progress before the deadline does not lengthen the wait after it', () => {
  const clock = fakeClock();
  const d = new Deadline(5000, clock);
  d.schedule({ warmupS: 0, timeS: 10 });
  clock.advanceMs(2000);
  d.progress();
  assert.equal(d.remainingMs(), 10020 - 2000 + 5000);
});

test('a stuck run names what was given up on: workers terminated, main-thread clients, or both', () => {
  assert.equal(
    stuckReason({ mainThreadClients: 0, workers: 1, workerClients: 1 }),
    '1 worker (1 client) did not stop in time and was terminated',
  );
  assert.equal(
    stuckReason({ mainThreadClients: 3, workers: 2, workerClients: 5 }),
    '3 clients in the main thread did not stop in time and were given up on (connections closed); ' +
      '2 workers (5 clients) did not stop in time and were terminated',
  );
  assert.equal(
    stuckReason({ mainThreadClients: 1, workers: 0, workerClients: 0 }),
    '1 client in the main thread did not stop in time and was given up on (connections closed)',
  );
  assert.equal(stuckReason(undefined), 'clients did not stop in time');
});
