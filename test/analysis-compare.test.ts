import assert from 'node:assert/strict';
import { test } from 'node:test';
import {
  CompareInputError,
  compareSeries,
  factsOf,
  guard,
  type Series,
  seriesFromRuns,
} from '../src/analysis/compare.ts';
import { DEFAULT_REPEAT } from '../src/cli/sweep.ts';
import type { RunResult } from '../src/metrics/run-result.ts';
import { renderCompareCsv, renderCompareMarkdown, renderCompareText } from '../src/report/compare-text.ts';

function series(name: string, points: Record<number, number[]>, facts: Record<string, string> = {}): Series {
  return {
    name,
    source: `synthetic ${name}`,
    points: new Map(
      Object.entries(points).map(([k, qps]) => [
        Number(k),
        { qps, p95: qps.map((q) => 1000 / q), p99: qps.map((q) => 2000 / q) },
      ]),
    ),
    facts,
    excluded: 0,
    workload: 'select1',
  };
}

const stable = { 1: [1000, 1010, 995, 1005, 990], 4: [3000, 3030, 2985, 3015, 2970] };

test('a sweep compared with itself shows no significant change anywhere', () => {
  const a = series('a', stable, { 'server.max_connections': '151' });
  const r = compareSeries(a, [{ ...a, name: 'a again' }], { metric: 'qps' });
  assert.equal(r.schema, 'dbsmack/compare@1');
  assert.deepEqual(
    r.rows.map((row) => row.clients),
    [1, 4],
  );
  for (const row of r.rows) {
    const c = row.candidates['a again']!;
    assert.equal(c.ratio, 1);
    assert.equal(c.verdict, 'same');
    assert.equal(c.p_value, 1);
    assert.ok(c.ci_low !== null && c.ci_high !== null && c.ci_low <= 1 && c.ci_high >= 1);
  }
  assert.deepEqual(r.differences, {});
  assert.deepEqual(guard(r, 0.95), { failed: [], inconclusive: [] });
});

test('a clear drop is significant and worse, and --fail-below catches it', () => {
  const base = series('base', stable, { 'server.thread_handling': 'one-thread-per-connection' });
  const slow = series(
    'slow',
    { 1: [600, 606, 597, 603, 594], 4: [2990, 3020, 2980, 3010, 2975] },
    { 'server.thread_handling': 'pool-of-threads' },
  );
  const r = compareSeries(base, [slow], { metric: 'qps' });
  const one = r.rows[0]!.candidates.slow!;
  assert.equal(one.verdict, 'worse');
  assert.ok(Math.abs(one.ratio - 0.6) < 1e-9);
  assert.ok(one.p_value < 0.01);
  assert.ok(one.ci_high !== null && one.ci_high < 1);
  assert.equal(r.rows[1]!.candidates.slow!.verdict, 'same');
  assert.deepEqual(r.differences, {
    'server.thread_handling': { base: 'one-thread-per-connection', slow: 'pool-of-threads' },
  });
  const g = guard(r, 0.9);
  assert.equal(g.failed.length, 1);
  assert.match(g.failed[0]!, /slow at 1 client: 0\.6 \(p=0\.0079\)/);
  assert.deepEqual(guard(r, 0.5).failed, []);
});

test('latency: a higher p95 is worse, and --fail-above catches it', () => {
  const base = series('base', stable);
  const slow = series('slow', { 1: [600, 606, 597, 603, 594], 4: stable[4] });
  const r = compareSeries(base, [slow], { metric: 'p95' });
  const c = r.rows[0]!.candidates.slow!;
  assert.ok(c.ratio > 1.6);
  assert.equal(c.verdict, 'worse');
  assert.equal(guard(r, undefined, 1.2).failed.length, 1);
});

test('a faster candidate is better', () => {
  const r = compareSeries(series('base', stable), [series('fast', { 1: [1280, 1290, 1270, 1285, 1275] })], {
    metric: 'qps',
  });
  assert.equal(r.rows.length, 1, 'only client counts the candidate has');
  assert.equal(r.rows[0]!.candidates.fast!.verdict, 'better');
  assert.ok(r.warnings.some((w) => /fast has no runs at 4 clients/.test(w)));
});

test("sweep's default repeats let the default comparison reach a verdict with the exact rank test", () => {
  const n = DEFAULT_REPEAT;
  assert.equal(n, 5);
  const runs = (mid: number): number[] => Array.from({ length: n }, (_, i) => mid + (i - 2) * 5);
  // Two pairs out of order (the slowest candidate run below the two fastest base runs): p = 8/252 < 0.05.
  const base = runs(1000);
  const cand = runs(1100);
  cand[0] = 1004;
  const r = compareSeries(series('base', { 8: base }), [series('fast', { 8: cand })], { metric: 'qps' });
  const c = r.rows[0]!.candidates.fast!;
  assert.equal(c.test, 'mann-whitney');
  assert.ok(Math.abs(c.p_value - 8 / 252) < 1e-9, `p ${c.p_value}`);
  assert.equal(c.verdict, 'better');
  assert.deepEqual(r.warnings, [], 'no "too few repeats" warning at the default');
});

test("too few repeats for Mann–Whitney: Welch's t-test on logs judges, with a warning", () => {
  const r = compareSeries(
    series('base', { 2: [1000, 1010, 990] }),
    [series('slow', { 2: [500, 505, 495] })],
    {
      metric: 'qps',
    },
  );
  const c = r.rows[0]!.candidates.slow!;
  assert.equal(c.test, 'welch-log');
  assert.equal(c.verdict, 'worse');
  assert.ok(Math.abs(c.p_value - 1.1543310195430855e-7) < 1e-12);
  assert.ok(r.warnings.some((w) => /too few repeats at 2 clients \(3 runs of base, 3 of slow\)/.test(w)));
  assert.equal(guard(r, 0.9).failed.length, 1);
  // the same with overlapping noise stays the same
  const n = compareSeries(series('base', { 2: [1000, 1100, 950] }), [series('c', { 2: [1050, 980, 1090] })], {
    metric: 'qps',
  });
  assert.equal(n.rows[0]!.candidates.c!.verdict, 'same');
});

test('one run against one: no test can judge a gap (?), and the guard calls it inconclusive', () => {
  const r = compareSeries(series('base', { 2: [1000] }), [series('slow', { 2: [500] })], { metric: 'qps' });
  const c = r.rows[0]!.candidates.slow!;
  assert.equal(c.test, 'none');
  assert.equal(c.verdict, 'unknown');
  // No interval it cannot have (resampling one run gives 0.50–0.50), and the warning says why.
  assert.equal(c.ci_low, null);
  assert.equal(c.ci_high, null);
  assert.ok(
    r.warnings.some((w) =>
      /^no confidence interval at 2 clients \(1 run of base, 1 of slow\): a single run/.test(w),
    ),
    r.warnings.join('\n'),
  );
  const text = renderCompareText(r);
  assert.match(text, /^2\s+slow\s+500\.0\s+0\.50\s+none \(1 run\)\s/m);
  assert.doesNotMatch(text, /0\.50–0\.50/);
  assert.doesNotMatch(renderCompareMarkdown(r), /CI 0\.50–0\.50/);
  assert.match(renderCompareCsv(r), /^qps,2,base,1000,slow,500,0\.5,,,1,none,unknown,1,1$/m);
  // One run on one side only: still no interval (the single run's spread is unknown).
  const oneSide = compareSeries(series('base', { 2: [1000, 1010, 990] }), [series('c', { 2: [500] })], {
    metric: 'qps',
  });
  assert.equal(oneSide.rows[0]!.candidates.c!.ci_low, null);
  assert.equal(oneSide.rows[0]!.candidates.c!.verdict, 'unknown');
  const g = guard(r, 0.9);
  assert.deepEqual(g.failed, []);
  assert.equal(g.inconclusive.length, 1);
  const same = compareSeries(series('base', { 2: [1000] }), [series('c', { 2: [1000] })], { metric: 'qps' });
  assert.equal(same.rows[0]!.candidates.c!.verdict, 'same');
});

test('noise does not make a difference: overlapping noisy series are the same', () => {
  const base = series('base', { 8: [900, 1100, 1000, 950, 1050, 980, 1020] });
  const cand = series('cand', { 8: [1090, 910, 1010, 960, 1040, 990, 1000] });
  const r = compareSeries(base, [cand], { metric: 'qps' });
  assert.equal(r.rows[0]!.candidates.cand!.verdict, 'same');
});

test('no client count in common is an error naming both', () => {
  assert.throws(
    () => compareSeries(series('a', { 1: [1, 2, 3] }), [series('b', { 8: [1, 2, 3] })], { metric: 'qps' }),
    (e: unknown) =>
      e instanceof CompareInputError &&
      /b and a have no client count in common \(b: 8; a: 1\)/.test(e.message),
  );
});

test('what a run ran with: settings, limits and an open-loop rate are facts to compare', () => {
  const run = {
    env: {
      host: 'h',
      os: 'o',
      kernel: 'k',
      arch: 'x',
      cpu_model: 'c',
      cpu_count: 2,
      memory_gb: 1,
      node: 'v20',
      dbsmack: '0',
    },
    target: {
      driver: 'mysql' as const,
      url: 'mysql://root@h/db',
      server_version: 'MariaDB 10.11',
      connector: 'mysql2',
    },
    workload: { name: 'oltp_read_only', ref: 'oltp_read_only', options: { table_size: 1000 }, args: [] },
    limits: { time_s: 10, warmup_s: 0, report_interval_s: 1 },
    server: { version: 'MariaDB 10.11.19', settings: { thread_handling: 'pool-of-threads' } },
  };
  const f = factsOf(run);
  assert.equal(f['server.thread_handling'], 'pool-of-threads');
  assert.equal(f['server.version'], 'MariaDB 10.11.19');
  assert.equal(f['workload.table_size'], '1000');
  assert.equal(f['limits.time_s'], '10');
  assert.equal(f['limits.rate'], 'none');
  assert.equal(f['env.cpu_count'], '2');
  assert.equal(
    factsOf({ ...run, rate: { target: 200, shape: 'poisson' } } as typeof run)['limits.rate'],
    '200/s poisson',
  );
});

test('standalone runs pool by client count into repeats; runs that did not complete are left out', () => {
  const run = (clients: number, qps: number, status: 'complete' | 'partial' = 'complete') =>
    ({
      status,
      clients,
      totals: { qps },
      events: { latency_ms: { p95: 1, p99: 2 } },
      env: { host: 'h' },
      target: { driver: 'sqlite', url: 'sqlite:x', server_version: 'SQLite 3' },
      workload: { name: 'select1', options: {}, args: [] },
      limits: { time_s: 1 },
    }) as unknown as RunResult;
  const s = seriesFromRuns('l', 'label l', [
    run(1, 10),
    run(2, 20),
    run(1, 11),
    run(1, 5, 'partial'),
    run(2, 21),
  ]);
  assert.deepEqual(s.points.get(1)?.qps, [10, 11]);
  assert.deepEqual(s.points.get(2)?.qps, [20, 21]);
  assert.equal(s.excluded, 1);
  const r = compareSeries(s, [{ ...s, name: 'again' }], { metric: 'qps' });
  assert.ok(r.warnings.some((w) => /l: 1 run that did not complete left out/.test(w)));
});
