/** `--threshold` and `--threshold-abort`: pass/fail rules on a run, exit code 8 when one fails. */
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import { evaluateThresholds } from '../src/analysis/thresholds.ts';
import { parseThreshold } from '../src/cli/threshold-parse.ts';
import { UsageError } from '../src/errors.ts';
import type { RunResult } from '../src/metrics/run-result.ts';
import { runCli, tmpDir } from './helpers/cli.ts';
import { needServer, PG_URL } from './helpers/servers.ts';

test('thresholds parse into metric, filters, comparison and limit in a base unit', () => {
  const p = (s: string) => parseThreshold('--threshold', s);
  assert.deepEqual(p('p99<5ms'), { metric: 'p99', op: '<', limit: 5, unit: 'ms', expr: 'p99<5ms' });
  assert.deepEqual(p('p95{statement=point_selects}<2ms'), {
    metric: 'p95',
    statement: 'point_selects',
    op: '<',
    limit: 2,
    unit: 'ms',
    expr: 'p95{statement=point_selects}<2ms',
  });
  assert.deepEqual(p('errors<0.1%'), {
    metric: 'errors',
    op: '<',
    limit: 0.1,
    unit: '%',
    expr: 'errors<0.1%',
  });
  assert.deepEqual(p('errors <= 10'), {
    metric: 'errors',
    op: '<=',
    limit: 10,
    unit: 'count',
    expr: 'errors<=10',
  });
  assert.deepEqual(p('qps>10000'), { metric: 'qps', op: '>', limit: 10000, unit: '/s', expr: 'qps>10000' });
  assert.equal(p('tps>=500/s').metric, 'tps');
  assert.equal(p('eps>1').metric, 'tps');
  assert.deepEqual(p('p99{stage=2}<5ms').stage, 2);
  assert.equal(p('p99.9<1s').metric, 'p999');
  assert.equal(p('p99.9<1s').limit, 1000);
  assert.equal(p('max<250us').limit, 0.25);
  assert.deepEqual(p('p50{statement=a, stage=3}<1ms').statement, 'a');
  const bad: [string, number, RegExp][] = [
    ['p98<5ms', 1, /unknown metric 'p98'/],
    ['p99=5ms', 4, /expected a comparison/],
    ['p99<5', 6, /a latency needs a unit/],
    ['p99<5xs', 6, /unknown unit 'xs'/],
    ['p99<ms', 5, /expected a number/],
    ['p99{statment=x}<5ms', 5, /unknown filter 'statment'/],
    ['p99{stage=0}<5ms', 11, /whole number from 1/],
    ['p99{stage=2<5ms', 12, /expected ',' or '}'/],
    ['errors<5ms', 9, /errors take a count or a percentage/],
    ['qps>10k', 7, /qps is per second/],
    ['p99<5ms and more', 9, /unexpected text/],
    ['<5ms', 1, /expected a metric/],
  ];
  for (const [text, col, re] of bad) {
    assert.throws(
      () => p(text),
      (e: unknown) => {
        assert.ok(e instanceof UsageError, String(e));
        assert.ok(e.message.startsWith(`--threshold '${text}': column ${col} `), `${text}: ${e.message}`);
        assert.match(e.message, re);
        return true;
      },
      text,
    );
  }
  assert.throws(() => p('tps{statement=x}>5'), /tps counts events, not statements/);
});

test('thresholds are judged on the result: latency, errors, rates, statements and stages', () => {
  const lat = (p99: number) => ({ min: 0, mean: 0, p50: 0, p90: 0, p95: 0, p99, p999: 0, max: 0, stddev: 0 });
  const r = {
    totals: { queries: 1000, events: 500, errors: 2, retries: 0, reconnects: 0, qps: 100, eps: 50 },
    events: { count: 500, latency_ms: lat(4), histogram: '' },
    types: { a: { kind: 'read', count: 1000, errors: 2, qps: 100, latency_ms: lat(1), histogram: '' } },
    stages: [
      {
        stage: 1,
        clients: 1,
        start_s: 0,
        end_s: 1,
        elapsed_s: 1,
        queries: 0,
        events: 0,
        errors: 0,
        qps: 0,
        eps: 0,
        latency_ms: lat(0),
        types: {},
      },
    ],
  } as unknown as RunResult;
  const specs = [
    'p99<5ms',
    'p99<3ms',
    'p99{statement=a}<2ms',
    'errors<0.1%',
    'errors<=2',
    'qps>=100',
    'tps>50',
    'p99{stage=1}<1ms',
  ].map((s) => parseThreshold('--threshold', s));
  const v = evaluateThresholds(r, specs);
  assert.deepEqual(
    v.map((x) => [x.expr, x.value, x.ok]),
    [
      ['p99<5ms', 4, true],
      ['p99<3ms', 4, false],
      ['p99{statement=a}<2ms', 1, true],
      // 2 errors of 1,002 statements tried
      ['errors<0.1%', 0.2, false],
      ['errors<=2', 2, true],
      ['qps>=100', 100, true],
      ['tps>50', 50, false],
      // a stage that measured nothing cannot hold a latency threshold
      ['p99{stage=1}<1ms', null, false],
    ],
  );
  assert.equal(v[7]?.note, 'nothing was measured');
});

test('a threshold that holds exits 0, one that cannot exits 8; both are in the text and the JSON', async () => {
  const dir = tmpDir();
  const db = `sqlite:${path.join(dir, 't.sqlite')}`;
  const base = ['run', 'select1', '--db', db, '--time', '1', '--no-history'];
  const ok = await runCli([...base, '--threshold', 'p99<60s', '--threshold', 'errors<1'], { cwd: dir });
  assert.equal(ok.code, 0, ok.stderr);
  assert.match(ok.stdout, /^thresholds: all 2 held$/m);
  assert.match(ok.stdout, /^ {2}ok {6}p99<60s\s+[\d.]+ ms$/m);
  const out = path.join(dir, 'r.json');
  const bad = await runCli(
    [...base, '--threshold', 'p99<60s', '--threshold', 'qps>1000000000', '-o', out, '--format', 'json'],
    { cwd: dir },
  );
  assert.equal(bad.code, 8, bad.stderr);
  const res = JSON.parse(bad.stdout) as RunResult;
  assert.equal(res.status, 'complete');
  assert.deepEqual(
    res.thresholds?.map((t) => [t.expr, t.ok, t.unit, typeof t.value]),
    [
      ['p99<60s', true, 'ms', 'number'],
      ['qps>1000000000', false, '/s', 'number'],
    ],
  );
  assert.equal(res.thresholds?.[1]?.value, res.totals.qps);
});

test('the history keeps the thresholds: `show` prints each with its value and verdict', async () => {
  const dir = tmpDir();
  const history = path.join(dir, 'h.sqlite');
  const r = await runCli(
    [
      'run',
      'select1',
      '--db',
      `sqlite:${path.join(dir, 't.sqlite')}`,
      '--time',
      '1',
      '--history',
      history,
      '-q',
      '--threshold',
      'qps>1000000000',
    ],
    { cwd: dir },
  );
  assert.equal(r.code, 8, r.stderr);
  const list = await runCli(['history', '--history', history], { cwd: dir });
  const id = /^(\d+)\s/m.exec(list.stdout.split('\n').slice(1).join('\n'))?.[1];
  assert.ok(id, list.stdout);
  const show = await runCli(['show', id, '--history', history], { cwd: dir });
  assert.equal(show.code, 0, show.stderr);
  assert.match(show.stdout, /^thresholds: 1 of 1 failed$/m);
  assert.match(show.stdout, /^ {2}FAILED {2}qps>1000000000\s+[\d.]+\/s$/m);
});

test('thresholds the run cannot judge are refused before it starts', async () => {
  const dir = tmpDir();
  const db = `sqlite:${path.join(dir, 't.sqlite')}`;
  const noStmt = await runCli(
    [
      'run',
      'select1',
      '--db',
      db,
      '--time',
      '1',
      '--no-history',
      '--threshold',
      'p95{statement=point_selects}<2ms',
    ],
    { cwd: dir },
  );
  assert.equal(noStmt.code, 2, noStmt.stderr);
  assert.match(noStmt.stderr, /the workload has no statement type 'point_selects'/);
  assert.match(noStmt.stderr, /^hint: its statement types: .*select1/m);
  assert.doesNotMatch(noStmt.stdout, /statement\s+count/, 'nothing was run');
  const noStage = await runCli(
    ['run', 'select1', '--db', db, '--time', '1', '--no-history', '--threshold', 'p99{stage=1}<2ms'],
    { cwd: dir },
  );
  assert.equal(noStage.code, 2);
  assert.match(noStage.stderr, /the run has no stages/);
  const far = await runCli(
    ['run', 'select1', '--db', db, '--stages', '1s:1', '--no-history', '--threshold', 'p99{stage=2}<2ms'],
    { cwd: dir },
  );
  assert.equal(far.code, 2);
  assert.match(far.stderr, /the run has 1 stage$/m);
  const malformed = await runCli(['run', 'select1', '--db', db, '--threshold', 'p99<<5ms'], { cwd: dir });
  assert.equal(malformed.code, 2);
  assert.match(malformed.stderr, /^dbsmack: --threshold 'p99<<5ms': column 5 \('<'\): expected a number$/m);
});

test('--threshold-abort stops at the first interval where an error count can no longer hold', async () => {
  const dir = tmpDir();
  const mod = path.join(dir, 'failing.mjs');
  writeFileSync(
    mod,
    "export default { name: 'failing', client(ctx) { return { async event() { await ctx.sleep(1); await ctx.query('bad', 'SELECT * FROM no_such_table'); } }; } };\n",
  );
  const r = await runCli(
    [
      'run',
      mod,
      '--db',
      `sqlite:${path.join(dir, 'f.sqlite')}`,
      '--time',
      '60',
      '--ignore-errors',
      'all',
      '--threshold',
      'errors<5',
      '--threshold',
      'p99<60s',
      '--threshold-abort',
      '--no-history',
      '--format',
      'json',
    ],
    { cwd: dir },
  );
  assert.equal(r.code, 8, r.stderr);
  const res = JSON.parse(r.stdout) as RunResult;
  assert.equal(res.status, 'partial');
  assert.match(
    res.status_reason ?? '',
    /^stopped by --threshold-abort: errors<5 can no longer hold: \d+ errors so far$/,
  );
  assert.ok(res.elapsed_s < 60, `stopped before its time limit: ${res.elapsed_s} s`);
  const [errors] = res.thresholds ?? [];
  assert.equal(errors?.ok, false);
  assert.match(errors?.note ?? '', /stopped the run \(--threshold-abort\)/);
});

test('--threshold-abort judges a stage when it ends, and a percentile against a bounded number of events', async (t) => {
  const target = await needServer(t, 'postgres');
  if (!target) return;
  const dir = tmpDir();
  const mod = path.join(dir, 'sleepy.mjs');
  // every event takes at least 20 ms on the server
  writeFileSync(
    mod,
    "export default { name: 'sleepy', client(ctx) { const s = ctx.statement('nap', 'SELECT pg_sleep(0.02)'); return { event: () => ctx.run(s) }; } };\n",
  );
  const staged = await runCli(
    [
      'run',
      mod,
      '--db',
      PG_URL,
      '--stages',
      '1s:1,30s:1',
      '--threshold',
      'p50{stage=1}<1ms',
      '--threshold-abort',
      '--no-history',
      '--format',
      'json',
    ],
    { cwd: dir },
  );
  assert.equal(staged.code, 8, staged.stderr);
  const s = JSON.parse(staged.stdout) as RunResult;
  assert.match(
    s.status_reason ?? '',
    /p50\{stage=1\}<1ms can no longer hold: stage 1 ended with p50 [\d.]+ ms/,
  );
  assert.ok(s.elapsed_s < 31, `${s.elapsed_s} s`);
  const bounded = await runCli(
    [
      'run',
      mod,
      '--db',
      PG_URL,
      '--events',
      '5000',
      '--threshold',
      'p99<1ms',
      '--threshold-abort',
      '--no-history',
      '--format',
      'json',
    ],
    { cwd: dir },
  );
  // 1% of at most 5,000 events may take more than 1 ms: the 51st event of 20 ms decides it
  assert.equal(bounded.code, 8, bounded.stderr);
  const b = JSON.parse(bounded.stdout) as RunResult;
  assert.match(
    b.status_reason ?? '',
    /p99<1ms can no longer hold: more than 50 of at most 5000 events took over 1 ms/,
  );
  assert.ok(b.totals.events > 50 && b.totals.events < 5000, `${b.totals.events} events`);
});
