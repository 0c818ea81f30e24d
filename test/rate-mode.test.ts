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
    /^rate: target 200\/s \(poisson\); latencies from the schedule; schedule lag mean .* late .* dropped$/m,
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
  assert.equal(res.rate?.target, 200);
  assert.equal(res.rate?.shape, 'constant');
  assert.ok(res.rate && res.rate.lag_ms.max >= res.rate.lag_ms.min);
  assert.ok(res.rate.late >= 0 && res.rate.dropped >= 0);
  assert.ok(res.totals.events > 0);
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
  // a closed loop would report ~50 ms per event; from the schedule, later events waited for earlier ones
  assert.ok(res.events.latency_ms.max > 4 * 50, `max ${res.events.latency_ms.max} ms`);
  assert.ok((res.rate?.lag_ms.max ?? 0) > 100, `lag ${JSON.stringify(res.rate?.lag_ms)}`);
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
