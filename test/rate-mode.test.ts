/** `--rate`: open-loop arrivals, latency from the schedule, lag and failure when the rate cannot be kept. */
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import type { RunResult } from '../src/metrics/run-result.ts';
import { runCli, tmpDir } from './helpers/cli.ts';

test('--rate reports the schedule lag, late and dropped events, and per-interval percentiles', async () => {
  const dir = tmpDir();
  const r = await runCli(
    [
      'run',
      'select1',
      '--db',
      `sqlite:${path.join(dir, 'r.sqlite')}`,
      '--rate',
      '200',
      '--time',
      '1',
      '--threads',
      '2',
    ],
    { cwd: dir },
  );
  assert.equal(r.code, 0, r.stderr);
  assert.match(
    r.stdout,
    /^rate: target 200\/s \(poisson\); latencies from the schedule; schedule lag mean [\d.]+ \/ p99 [\d.]+ \/ max [\d.]+ ms; \d+ late \(> 1 ms\), \d+ dropped$/m,
  );
  const j = await runCli(
    [
      'run',
      'select1',
      '--db',
      `sqlite:${path.join(dir, 'r.sqlite')}`,
      '--rate',
      '200',
      '--rate-shape',
      'constant',
      '--time',
      '1',
      '--format',
      'json',
    ],
    { cwd: dir },
  );
  assert.equal(j.code, 0, j.stderr);
  const res = JSON.parse(j.stdout) as RunResult;
  const rate = res.rate;
  assert.ok(rate, 'the result has the rate figures');
  assert.equal(rate.target, 200);
  assert.equal(rate.shape, 'constant');
  // The schedule: one client, 200 arrivals a second at even gaps of 5 ms from the start, for 1 s. Every
  // arrival before the deadline (the 200th falls on it, give or take the clock's rounding) was either run
  // or counted as dropped.
  const arrivals = res.totals.events + rate.dropped;
  assert.ok(arrivals === 199 || arrivals === 200, `${res.totals.events} run + ${rate.dropped} dropped`);
  assert.ok(rate.late <= res.totals.events, `${rate.late} late of ${res.totals.events}`);
  assert.equal(rate.late_after_ms, 1);
  const lag = rate.lag_ms;
  assert.ok(lag.min <= lag.p50 && lag.p50 <= lag.p99 && lag.p99 <= lag.max, JSON.stringify(lag));
  assert.equal(
    res.intervals.reduce((a, p) => a + p.events, 0),
    res.totals.events,
  );
  const iv = res.intervals.find((p) => p.events > 0);
  assert.ok(iv?.event_latency_ms, 'intervals carry event percentiles');
  assert.ok(
    iv.event_latency_ms.p50 <= iv.event_latency_ms.p99 && iv.event_latency_ms.p99 <= iv.event_latency_ms.max,
  );
  assert.ok(iv.rate_queue !== undefined && iv.rate_concurrency !== undefined);
});

test('--rate measures latency from the scheduled start (no coordinated omission)', async () => {
  const dir = tmpDir();
  const mod = path.join(dir, 'sleepy.mjs');
  // each event takes about 50 ms and one client is asked for 100 a second: the queue grows all run long
  writeFileSync(
    mod,
    "export default { name: 'sleepy', client(ctx) { return { event: () => ctx.sleep(50) }; } };\n",
  );
  const r = await runCli(
    [
      'run',
      mod,
      '--db',
      `sqlite:${path.join(dir, 's.sqlite')}`,
      '--rate',
      '100',
      // even gaps: the bounds below count on the n-th arrival being due at 10n ms (poisson gaps, the
      // default, put the 20th arrival anywhere from about 100 to 300 ms)
      '--rate-shape',
      'constant',
      '--rate-max-lag',
      '30',
      '--time',
      '1',
      '--format',
      'json',
    ],
    { cwd: dir },
  );
  assert.equal(r.code, 0, r.stderr);
  const res = JSON.parse(r.stdout) as RunResult;
  // A closed loop would report ~50 ms per event. From the schedule, the n-th event was due at 10n ms but
  // could not start before the n-1 events ahead of it had slept 50 ms each: it lagged at least 40(n-1) ms,
  // and its latency counts that wait (1 ms of timer slack allowed per event).
  const n = res.totals.events;
  assert.ok(n >= 2, `${n} events`);
  assert.ok(res.events.latency_ms.max >= 39 * n, `max ${res.events.latency_ms.max} ms over ${n} events`);
  assert.ok((res.rate?.lag_ms.max ?? 0) >= 39 * (n - 1), `lag ${JSON.stringify(res.rate?.lag_ms)}`);
  assert.ok((res.rate?.late ?? 0) > 0);
  assert.ok((res.rate?.dropped ?? 0) > 0, 'events due before the deadline were never started');
});

test('--rate fails clearly when the rate cannot be kept', async () => {
  const dir = tmpDir();
  const mod = path.join(dir, 'slow.mjs');
  writeFileSync(
    mod,
    "export default { name: 'slow', client(ctx) { return { event: () => ctx.sleep(20) }; } };\n",
  );
  const r = await runCli(
    [
      'run',
      mod,
      '--db',
      `sqlite:${path.join(dir, 's.sqlite')}`,
      '--rate',
      '1000',
      '--rate-max-lag',
      '0.2',
      '--time',
      '5',
    ],
    { cwd: dir },
  );
  assert.equal(r.code, 4, r.stdout + r.stderr);
  assert.match(r.stdout, /RATE_NOT_KEPT: the rate of 1000 events\/s could not be kept/);
  assert.match(r.stdout, /lower --rate or add --threads/);
});

test('--rate and --percentile reject bad values', async () => {
  const r = await runCli(['run', 'select1', '--rate', 'fast']);
  assert.equal(r.code, 2);
  assert.match(r.stderr, /--rate expects a number of events per second/);
  const p = await runCli(['run', 'select1', '--percentile', '101']);
  assert.equal(p.code, 2);
  assert.match(p.stderr, /--percentile expects a number from 0 to 100/);
});
