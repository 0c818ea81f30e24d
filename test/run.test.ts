/** The `run` command end to end, as a user runs it, against SQLite, MariaDB and PostgreSQL. */
import assert from 'node:assert/strict';
import { readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { type TestContext, test } from 'node:test';
import { decodeHistogram, summarize } from '../src/metrics/histogram.ts';
import type { RunResult } from '../src/metrics/run-result.ts';
import { runCli, tmpDir } from './helpers/cli.ts';
import { MYSQL_URL, needServer, PG_URL } from './helpers/servers.ts';

const targets: {
  name: string;
  url: (t: TestContext) => Promise<string | undefined>;
  /** The client of the load connections recorded in the RunResult. */
  connector?: string;
}[] = [
  { name: 'sqlite', url: async () => `sqlite:${path.join(tmpDir(), 'run.sqlite')}` },
  {
    name: 'mariadb',
    url: async (t) => ((await needServer(t, 'mysql')) ? MYSQL_URL : undefined),
    connector: 'dbsmack',
  },
  {
    name: 'mariadb connector',
    url: async (t) => ((await needServer(t, 'mysql')) ? `${MYSQL_URL}?connector=mariadb` : undefined),
    connector: 'mariadb',
  },
  {
    name: 'postgres',
    url: async (t) => ((await needServer(t, 'postgres')) ? PG_URL : undefined),
    connector: 'dbsmack',
  },
];

/** A latency summary is the one its histogram gives, over `count` values. */
function checkLatency(l: RunResult['events']['latency_ms'], histogram: string, count: number): void {
  assert.ok(l.min > 0, `min ${l.min}`);
  assert.ok(l.min <= l.p50 && l.p50 <= l.p90 && l.p90 <= l.p95 && l.p95 <= l.p99, JSON.stringify(l));
  assert.ok(l.p99 <= l.p999 && l.p999 <= l.max, JSON.stringify(l));
  const h = decodeHistogram(histogram);
  assert.equal(h.totalCount, count, 'the histogram holds every value');
  assert.deepEqual(summarize(h), l, 'the summary is read from the histogram');
}

for (const tg of targets) {
  test(`select1, 4 clients, 2000 events on ${tg.name}: exactly 2000 queries`, async (t) => {
    const url = await tg.url(t);
    if (!url) return;
    const out = path.join(tmpDir(), 'r.json');
    const r = await runCli([
      'run',
      'select1',
      '--db',
      url,
      '--clients',
      '4',
      '--events',
      '2000',
      '--format',
      'json',
      '--out',
      out,
    ]);
    assert.equal(r.code, 0, r.stderr);
    const res = JSON.parse(r.stdout) as RunResult;
    assert.deepEqual(JSON.parse(readFileSync(out, 'utf8')), res);
    assert.equal(statSync(out).mode & 0o777, 0o600);
    assert.equal(res.schema, 'dbsmack/run@1');
    assert.equal(res.status, 'complete');
    assert.equal(res.target.connector, tg.connector, 'the connector of the load clients is recorded');
    assert.equal(res.clients, 4);
    assert.equal(res.totals.queries, 2000);
    assert.equal(res.totals.events, 2000);
    assert.equal(res.totals.errors, 0);
    assert.equal(res.types.select1?.count, 2000);
    assert.equal(res.types.select1?.kind, 'read');
    assert.ok(res.totals.qps > 0 && res.elapsed_s > 0, 'positive rates');
    assert.ok(
      Math.abs(res.totals.qps - 2000 / res.elapsed_s) < 1 + res.totals.qps * 0.01,
      `qps ${res.totals.qps} elapsed ${res.elapsed_s}`,
    );
    const sel = res.types.select1 as RunResult['types'][string];
    checkLatency(sel.latency_ms, sel.histogram, 2000);
    checkLatency(res.events.latency_ms, res.events.histogram, 2000);
    assert.equal(res.connect_ms.count, 4);
    assert.ok(
      res.connect_ms.min > 0 && res.connect_ms.min <= res.connect_ms.mean,
      JSON.stringify(res.connect_ms),
    );
    assert.equal(
      res.intervals.reduce((a, p) => a + p.queries, 0),
      2000,
      'the timeline adds up to the total',
    );
    assert.equal(
      res.client_stats.reduce((a, c) => a + c.events, 0),
      2000,
    );
    assert.equal(
      res.target.driver,
      tg.name === 'sqlite' ? 'sqlite' : tg.name === 'postgres' ? 'postgres' : 'mysql',
    );
    assert.match(res.target.server_version, /\d+\.\d+/);
    for (const k of ['host', 'os', 'kernel', 'cpu_model', 'cpu_count', 'node'] as const)
      assert.ok(res.env[k], k);
  });
}

test('rounds: each client runs exactly R events; text output reads well', async () => {
  const dir = tmpDir();
  const r = await runCli(['run', 'select1', '--clients', '3', '--rounds', '50', '--prepared', 'off'], {
    cwd: dir,
  });
  assert.equal(r.code, 0, r.stderr);
  assert.match(r.stdout, /^dbsmack select1 on sqlite:\.\/dbsmack\.sqlite \(SQLite \d/m);
  assert.match(r.stdout, /3 clients in 3 workers, limit 50 rounds per client/);
  assert.match(r.stdout, /^select1\s+150\s+0\s/m);
  assert.match(r.stdout, /totals: 150 queries/);
  assert.match(r.stdout, /status complete/);
  assert.ok(statSync(path.join(dir, 'dbsmack.sqlite')).isFile(), 'the default target is ./dbsmack.sqlite');
});

test('time limit with warm-up: warm-up is run but not counted; the timeline covers the measured part', async () => {
  const r = await runCli([
    'run',
    'select1',
    '--clients',
    '2',
    '--time',
    '1.5',
    '--warmup',
    '0.5',
    '--format',
    'json',
    '--report-interval',
    '0.5',
  ]);
  assert.equal(r.code, 0, r.stderr);
  const res = JSON.parse(r.stdout) as RunResult;
  assert.equal(res.status, 'complete');
  assert.deepEqual(
    res.limits,
    { time_s: 1.5, warmup_s: 0.5, report_interval_s: 0.5, max_tries: 10 },
    'the limits the run was given',
  );
  // The measured part ends at its deadline: events still running then count, their time after it does not.
  assert.equal(res.elapsed_s, 1.5);
  assert.ok(res.warmup && res.warmup.events > 0, 'warm-up events were run');
  // Three intervals of 0.5 s from the start of the measured part; the last ends at the deadline.
  assert.deepEqual(
    res.intervals.map((p) => [p.t, p.dur]),
    [
      [0.5, 0.5],
      [1, 0.5],
      [1.5, 0.5],
    ],
  );
  assert.equal(
    res.intervals.reduce((a, p) => a + p.queries, 0),
    res.totals.queries,
  );
  assert.ok(
    res.intervals.every((p) => p.qps > 0 && p.p95_ms > 0),
    JSON.stringify(res.intervals),
  );
});

test("a module's own DbError and UsageError keep their meaning: one class of each in the process", async () => {
  // The CLI runs a bundle (scripts/bundle.js) while the module's `import … from 'dbsmack'` loads dist/index.js:
  // the public API's modules must be the same instances in both, or `instanceof` fails in the engine.
  const mod = path.resolve(import.meta.dirname, 'fixtures', 'workloads', 'own-errors.ts');
  const db = `sqlite:${path.join(tmpDir(), 'own.sqlite')}`;
  const r = await runCli(['run', mod, '--db', db, '--clients', '2', '--rounds', '5', '--format', 'json']);
  assert.equal(r.code, 0, r.stderr);
  const res = JSON.parse(r.stdout) as RunResult;
  assert.equal(res.status, 'complete');
  assert.equal(res.totals.events, 10);
  assert.equal(res.totals.retries, 6, 'each client re-ran its three deadlocked events');
  assert.deepEqual(
    res.errors.map((e) => [e.code, e.kind, e.count]),
    [['OWN_DEADLOCK', 'retryable', 6]],
  );
  const refused = await runCli(['run', mod, '--db', db, '--refuse', '1', '--events', '1']);
  assert.equal(refused.code, 2, refused.stderr);
  assert.match(refused.stderr, /own_errors: refused as asked/);
  assert.doesNotMatch(refused.stderr, /internal error/i);
});

test('a user workload module runs through the public API; errors stop the run unless ignored', async (t) => {
  const mod = path.resolve(import.meta.dirname, 'fixtures', 'workloads', 'dup-insert.ts');
  const dir = tmpDir();
  const db = `sqlite:${path.join(dir, 'dup.sqlite')}`;
  const prep = await runCli(['prepare', mod, '--db', db]);
  assert.equal(prep.code, 0, prep.stderr);
  const bad = await runCli(['run', mod, '--db', db, '--clients', '2', '--rounds', '5', '--format', 'json']);
  assert.equal(bad.code, 4, bad.stderr);
  const res = JSON.parse(bad.stdout) as RunResult;
  assert.equal(res.status, 'partial');
  assert.match(res.status_reason ?? '', /SQLITE_CONSTRAINT_PRIMARYKEY/);
  assert.ok(res.totals.queries >= 3, 'what was measured before the error is kept');

  const prep2 = await runCli(['prepare', mod, '--db', db]);
  assert.equal(prep2.code, 0, prep2.stderr);
  const ok = await runCli([
    'run',
    mod,
    '--db',
    db,
    '--clients',
    '2',
    '--rounds',
    '5',
    '--format',
    'json',
    '--ignore-errors',
    'SQLITE_CONSTRAINT_PRIMARYKEY',
  ]);
  assert.equal(ok.code, 0, ok.stderr);
  const r2 = JSON.parse(ok.stdout) as RunResult;
  assert.equal(r2.status, 'complete');
  assert.equal(
    r2.totals.events,
    6,
    `3 distinct ids per client succeed: ${JSON.stringify([r2.errors, r2.client_stats])}`,
  );
  assert.equal(r2.totals.errors, 4);
  assert.equal(r2.types.insert?.errors, 4);
  assert.deepEqual(
    r2.errors.map((e) => [e.code, e.count, e.ignored]),
    [['SQLITE_CONSTRAINT_PRIMARYKEY', 4, true]],
  );

  const target = await needServer(t, 'postgres');
  if (!target) return;
  const table = `dbsmack_dup_${process.pid}`;
  const pgPrep = await runCli(['prepare', mod, '--db', PG_URL, '--table', table]);
  assert.equal(pgPrep.code, 0, pgPrep.stderr);
  const pg = await runCli([
    'run',
    mod,
    '--db',
    PG_URL,
    '--table',
    table,
    '--rounds',
    '4',
    '--format',
    'json',
    '--ignore-errors',
    '23505',
  ]);
  assert.equal(pg.code, 0, pg.stderr);
  const pgRes = JSON.parse(pg.stdout) as RunResult;
  assert.deepEqual(
    pgRes.errors.map((e) => [e.code, e.count]),
    [['23505', 1]],
  );
  const clean = await runCli(['cleanup', mod, '--db', PG_URL, '--table', table]);
  assert.equal(clean.code, 0, clean.stderr);
});
