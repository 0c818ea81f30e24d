/**
 * `dbsmack capacity`: the highest open-loop rate that holds an SLO. The search on its own (a fake step
 * judge), then on PostgreSQL with a workload of known cost: one client whose every event sleeps 20 ms on the
 * server can keep at most about 50 events a second, whatever the machine's load; above that the queue grows
 * and the latency from the schedule with it.
 */
import assert from 'node:assert/strict';
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import { type CapacityResult, type CapacityStep, searchCapacity } from '../src/analysis/capacity.ts';
import type { RunResult } from '../src/metrics/run-result.ts';
import { runCli, tmpDir } from './helpers/cli.ts';
import { needServer, PG_URL } from './helpers/servers.ts';

const fakeStep = (limit: number) => async (rate: number, step: number, phase: CapacityStep['phase']) =>
  ({
    step,
    phase,
    rate,
    holds: rate <= limit,
    why: rate <= limit ? [] : ['latency'],
  }) as unknown as CapacityStep;

test('the search brackets by doubling, then bisects to the precision', async () => {
  const found = await searchCapacity(
    { rateMin: 10, rateMax: 10000, precision: 0.1, maxSteps: 20 },
    fakeStep(100),
  );
  assert.deepEqual(
    found.steps.map((s) => [s.phase, s.rate, s.holds]),
    [
      ['bracket', 10, true],
      ['bracket', 20, true],
      ['bracket', 40, true],
      ['bracket', 80, true],
      ['bracket', 160, false],
      ['bisect', 120, false],
      ['bisect', 100, true],
      ['bisect', 110, false],
    ],
  );
  assert.equal(found.rate, 100);
  assert.equal(found.broke?.rate, 110);
  // held up to --rate-max: no step broke
  const all = await searchCapacity(
    { rateMin: 10, rateMax: 50, precision: 0.1, maxSteps: 20 },
    fakeStep(1000),
  );
  assert.deepEqual(
    all.steps.map((s) => s.rate),
    [10, 20, 40, 50],
  );
  assert.equal(all.rate, 50);
  assert.equal(all.broke, undefined);
  // even --rate-min broke
  const none = await searchCapacity({ rateMin: 10, rateMax: 50, precision: 0.1, maxSteps: 20 }, fakeStep(5));
  assert.equal(none.rate, null);
  assert.equal(none.broke?.rate, 10);
  // bounded by --max-steps
  const few = await searchCapacity({ rateMin: 1, rateMax: 1e6, precision: 0.01, maxSteps: 3 }, fakeStep(1e5));
  assert.equal(few.steps.length, 3);
});

test('bad capacity options are refused before any run', async () => {
  const dir = tmpDir();
  const db = `sqlite:${path.join(dir, 'c.sqlite')}`;
  const cases: [string[], RegExp][] = [
    [[], /capacity needs --slo EXPR/],
    [['--slo', 'p99<5qs'], /^dbsmack: --slo 'p99<5qs': column 6 \('q'\): unknown unit 'qs'/m],
    [['--slo', 'p99<5ms', '--rate-min', '0'], /--rate-min expects a number above 0/],
    [['--slo', 'p99<5ms', '--rate-min', '100', '--rate-max', '10'], /--rate-min 100 is above --rate-max 10/],
    [['--slo', 'p99{statement=nope}<5ms', '--time', '1'], /the workload has no statement type 'nope'/],
    [['--slo', 'p99<5ms', '--rate', '10'], /unknown option '--rate'/],
  ];
  for (const [args, re] of cases) {
    const r = await runCli(['capacity', 'select1', '--db', db, ...args], { cwd: dir });
    assert.equal(r.code, 2, `${args.join(' ')}: ${r.stdout}${r.stderr}`);
    assert.match(r.stderr, re);
  }
});

test('postgres: capacity finds a rate that holds the SLO, and a rate clearly above it does not', async (t) => {
  const target = await needServer(t, 'postgres');
  if (!target) return;
  const dir = tmpDir();
  const mod = path.join(dir, 'nap.mjs');
  writeFileSync(
    mod,
    "export default { name: 'nap', client(ctx) { const s = ctx.statement('nap', 'SELECT pg_sleep(0.02)'); return { event: () => ctx.run(s) }; } };\n",
  );
  // even arrivals: below the client's rate no event waits for another, above it the queue grows
  const common = ['--db', PG_URL, '--threads', '1', '--rate-shape', 'constant', '--time', '2'];
  const out = path.join(dir, 'cap.json');
  const r = await runCli(
    [
      'capacity',
      mod,
      ...common,
      '--slo',
      'p99<150ms',
      '--rate-min',
      '10',
      '--rate-max',
      '160',
      '--repeat',
      '1',
      '-o',
      out,
      '--format',
      'json',
    ],
    { cwd: dir },
  );
  assert.equal(r.code, 0, r.stderr);
  const c = JSON.parse(r.stdout) as CapacityResult;
  assert.equal(c.schema, 'dbsmack/capacity@1');
  assert.deepEqual(c.slo, ['p99<150ms']);
  assert.equal(c.status, 'complete');
  assert.ok(c.rate !== null && c.rate >= 10, `found ${c.rate}`);
  // one client of 20 ms events keeps at most 50 a second
  assert.ok(c.rate <= 50, `found ${c.rate}/s, above what one client of 20 ms events can keep`);
  const held = c.steps.find((s) => s.rate === c.rate);
  assert.ok(held?.holds, 'the found rate is a step that held');
  for (const run of held.runs) {
    assert.ok(run.latency_ms.p99 < 150, `p99 ${run.latency_ms.p99} ms at ${c.rate}/s`);
    assert.ok(run.thresholds.every((x) => x.ok));
  }
  assert.ok(c.broke && c.broke.rate > c.rate, JSON.stringify(c.broke));
  assert.ok(c.broke.why.length > 0 && c.broke.reason.length > 0);
  assert.ok(c.steps.some((s) => s.phase === 'bracket') && c.steps.some((s) => s.phase === 'bisect'));
  // the curve: every step has its rate against its latency percentiles
  for (const s of c.steps) assert.ok(s.latency_ms.p50 <= s.latency_ms.p99, JSON.stringify(s.latency_ms));
  assert.ok(
    c.broke.rate - c.rate <= 0.1 * c.rate + 1,
    `bisected to the precision: ${c.rate} … ${c.broke.rate}`,
  );
  const saved = JSON.parse(readFileSync(out, 'utf8')) as CapacityResult;
  assert.equal(saved.rate, c.rate, '--out holds the same document');

  // a rate clearly above (twice) the one found does not hold the SLO: exit 8
  const above = await runCli(
    [
      'run',
      mod,
      ...common,
      '--rate',
      String(2 * c.rate + 10),
      '--threshold',
      'p99<150ms',
      '--no-history',
      '--format',
      'json',
    ],
    { cwd: dir },
  );
  assert.equal(above.code, 8, above.stderr);
  const res = JSON.parse(above.stdout) as RunResult;
  assert.equal(res.thresholds?.[0]?.ok, false);

  // the text report: the curve, the rate found, the step where it broke and why
  const txt = await runCli(
    [
      'capacity',
      mod,
      ...common,
      '--slo',
      'p99<150ms',
      '--rate-min',
      '20',
      '--rate-max',
      '160',
      '--repeat',
      '1',
      '--max-steps',
      '3',
      '-q',
    ],
    { cwd: dir },
  );
  assert.equal(txt.code, 0, txt.stderr);
  assert.match(
    txt.stdout,
    /^step\s+phase\s+rate\/s\s+events\/s\s+p50\s+p90\s+p95\s+p99\s+max ms\s+stability\s+verdict$/m,
  );
  assert.match(txt.stdout, /^highest rate holding p99<150ms: \d+\/s \(step \d\)$/m);
  assert.match(txt.stdout, /^it broke at \d+\/s \(step \d\): (latency|rate not kept|errors)/m);
});
