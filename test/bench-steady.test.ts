/**
 * bench/steady.ts, the steady state of a timed run in bench/peers: the window's arithmetic on made-up
 * samples, the per-second reports of sysbench and pgbench as they print them, and the sampler itself on a
 * real process under /usr/bin/time (a busy loop of known length, sampled while this thread waits in
 * spawnSync, as `timed` waits).
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { test } from 'node:test';
import {
  pgbenchSeconds,
  type Second,
  startSampling,
  steadyUs,
  stopSampling,
  sysbenchSeconds,
} from '../bench/steady.ts';
import { need } from './helpers/preconditions.ts';

/** A run of `time` seconds at `qps`, its CPU rising by `cpuPerS` a second, sampled every 0.1 s. */
function run(time: number, qps: number, cpuPerS: number, startS = 0.5, endS = 0.05) {
  const series: [number, number][] = [];
  const total = startS + time + endS;
  for (let t = 0; t <= total + 1e-9; t += 0.1) {
    // start-up costs 0.4 s of CPU in its first half second, then the steady rate
    const cpu = t < startS ? (0.4 * t) / startS : 0.4 + cpuPerS * (t - startS);
    series.push([t, cpu]);
  }
  const seconds: Second[] = [];
  for (let s = 1; s <= time; s++) seconds.push({ t: s, rate: s === 1 ? qps / 3 : qps });
  return { series, seconds };
}

test('steadyUs: the CPU a query over seconds 4 to T-1, start-up and the first second left out', () => {
  const { series, seconds } = run(8, 20_000, 0.4);
  // 0.4 s of CPU a second at 20,000 q/s: 20 µs a query
  assert.ok(Math.abs((steadyUs(series, seconds, 8) as number) - 20) < 0.01);
  // a slow first second and a costly start-up do not move it; a slower steady state does
  const slower = run(8, 10_000, 0.4);
  assert.ok(Math.abs((steadyUs(slower.series, slower.seconds, 8) as number) - 40) < 0.01);
});

test('steadyUs: nothing for a run shorter than 6 s, or samples or seconds that miss the window', () => {
  const short = run(5, 20_000, 0.4);
  assert.equal(steadyUs(short.series, short.seconds, 5), undefined);
  const { series, seconds } = run(8, 20_000, 0.4);
  assert.equal(steadyUs([], seconds, 8), undefined);
  assert.equal(steadyUs(series.slice(-20), seconds, 8), undefined, 'samples from the last 2 s only');
  assert.equal(steadyUs(series, seconds.slice(0, 4), 8), undefined, 'a report that stops at 4 s');
});

test('the per-second reports of sysbench (--report-interval=1) and pgbench (-P 1)', () => {
  const sysbench = [
    'Threads started!',
    '',
    '[ 1s ] thds: 8 tps: 20941.72 qps: 20941.72 (r/w/o: 20941.72/0.00/0.00) lat (ms,95%): 0.57 err/s: 0.00 reconn/s: 0.00',
    '[ 2s ] thds: 8 tps: 33013.00 qps: 33013.00 (r/w/o: 33013.00/0.00/0.00) lat (ms,95%): 0.46 err/s: 0.00 reconn/s: 0.00',
    'SQL statistics:',
  ].join('\n');
  assert.deepEqual(sysbenchSeconds(sysbench), [
    { t: 1, rate: 20941.72 },
    { t: 2, rate: 33013 },
  ]);
  const pgbench = [
    'pgbench (15.20 (Debian 15.20-0+deb12u1))',
    'progress: 1.0 s, 17103.4 tps, lat 0.315 ms stddev 0.444, 0 failed',
    'progress: 2.0 s, 29848.2 tps, lat 0.209 ms stddev 0.250, 0 failed',
  ].join('\n');
  assert.deepEqual(pgbenchSeconds(pgbench), [
    { t: 1, rate: 17103.4 },
    { t: 2, rate: 29848.2 },
  ]);
});

test('the sampler follows the command under /usr/bin/time while spawnSync waits for it', (t) => {
  if (!need(t, existsSync('/usr/bin/time') ? undefined : '/usr/bin/time is missing (Debian package time)'))
    return;
  // a busy loop for 1.5 s: its CPU grows about as fast as the wall clock
  const busy = 'const end = Date.now() + 1500; while (Date.now() < end);';
  for (let round = 0; round < 2; round++) {
    startSampling();
    const r = spawnSync('/usr/bin/time', ['-f', '%U %S', process.execPath, '-e', busy], { encoding: 'utf8' });
    const series = stopSampling();
    assert.equal(r.status, 0, r.stderr);
    assert.ok(series.length >= 8, `round ${round}: ${series.length} samples in 1.5 s`);
    for (let i = 1; i < series.length; i++) {
      const [t0, c0] = series[i - 1] as [number, number];
      const [t1, c1] = series[i] as [number, number];
      assert.ok(t1 > t0 && c1 >= c0, `round ${round}: samples in order at ${i}`);
    }
    const [ta, ca] = series[1] as [number, number];
    const [tb, cb] = series[series.length - 1] as [number, number];
    const rate = (cb - ca) / (tb - ta);
    // a busy thread, on a machine that may be shared: most of a CPU, never more than the one thread
    assert.ok(rate > 0.3 && rate < 1.3, `round ${round}: ${rate.toFixed(2)} CPU seconds a second`);
  }
  // disarmed: a command run without it is not sampled
  spawnSync('/usr/bin/time', ['-f', '%U %S', 'true']);
  assert.deepEqual(stopSampling(), []);
});
