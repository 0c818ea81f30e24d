import assert from 'node:assert/strict';
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import Database from 'better-sqlite3';
import type { CompareResult, SweepResult } from '../src/analysis/types.ts';
import { loadDriver } from '../src/driver/index.ts';
import type { RunResult } from '../src/metrics/run-result.ts';
import { ROOT, runCli, startCli, tmpDir } from './helpers/cli.ts';
import { MYSQL_URL, needServer, PG_URL } from './helpers/servers.ts';
import { waitForOutput } from './helpers/wait.ts';

function setup(): { dir: string; env: NodeJS.ProcessEnv; hist: string } {
  const dir = tmpDir('dbsmack-sweep-');
  const hist = path.join(dir, 'history.sqlite');
  return { dir, hist, env: { DBSMACK_HISTORY: hist } };
}

const readJson = <T>(file: string): T => JSON.parse(readFileSync(file, 'utf8')) as T;

function checkSweep(s: SweepResult, label: string): void {
  assert.equal(s.schema, 'dbsmack/sweep@1');
  assert.equal(s.label, label);
  assert.equal(s.status, 'complete');
  assert.equal(s.repeat, 3);
  assert.deepEqual(
    s.points.map((p) => p.clients),
    [1, 2],
  );
  for (const p of s.points) {
    assert.equal(p.runs.length, 3);
    assert.deepEqual(
      p.runs.map((r) => r.repeat),
      [1, 2, 3],
    );
    for (const r of p.runs) {
      assert.equal(r.status, 'complete');
      assert.equal(r.result.clients, p.clients);
      assert.equal(r.result.label, label);
      assert.equal(r.result.totals.events, 200);
      assert.equal(typeof r.id, 'number');
      assert.ok(r.qps > 0);
    }
    assert.ok(['stable', 'noisy', 'erratic'].includes(p.stability));
    assert.ok(p.stability_reason.length > 10);
    assert.ok(p.qps.min <= p.qps.median && p.qps.median <= p.qps.max);
  }
}

test('sqlite sweep: every run saved, stability per point, history, show, compare with itself', async () => {
  const { dir, env } = setup();
  const out = path.join(dir, 'sweep.json');
  const r = await runCli(
    [
      'sweep',
      'select1',
      '--clients',
      '1,2',
      '--repeat',
      '3',
      '--events',
      '200',
      '--label',
      'base',
      '--out',
      out,
    ],
    { cwd: dir, env },
  );
  assert.equal(r.code, 0, r.stderr);
  assert.match(r.stdout, /clients\s+runs\s+median q\/s/);
  assert.match(r.stderr, /\[6\/6\] 2 clients, repeat 3/);
  const s = readJson<SweepResult>(out);
  checkSweep(s, 'base');
  assert.equal(s.server_settings?.journal_mode, 'wal');
  assert.equal(s.points[0]!.runs[0]!.result.server?.settings.journal_mode, 'wal');

  const list = await runCli(['history', '--format', 'json'], { cwd: dir, env });
  assert.equal(list.code, 0, list.stderr);
  const entries = JSON.parse(list.stdout) as {
    id: number;
    kind: string;
    label: string;
    clients: string;
    status: string;
  }[];
  assert.equal(entries.length, 1);
  assert.deepEqual(
    {
      kind: entries[0]!.kind,
      label: entries[0]!.label,
      clients: entries[0]!.clients,
      status: entries[0]!.status,
    },
    { kind: 'sweep', label: 'base', clients: '1,2', status: 'complete' },
  );
  const all = await runCli(['history', '--all', '--format', 'json'], { cwd: dir, env });
  assert.equal((JSON.parse(all.stdout) as unknown[]).length, 7);

  const show = await runCli(['show', String(entries[0]!.id), '--format', 'json'], { cwd: dir, env });
  assert.equal(show.code, 0, show.stderr);
  checkSweep(JSON.parse(show.stdout) as SweepResult, 'base');
  const runId = s.points[1]!.runs[0]!.id!;
  const showRun = await runCli(['show', String(runId)], { cwd: dir, env });
  assert.equal(showRun.code, 0, showRun.stderr);
  assert.match(showRun.stdout, new RegExp(`run ${runId} "base" \\(repeat 1 of sweep ${entries[0]!.id}\\)`));
  assert.match(showRun.stdout, /journal_mode\s+wal/);

  for (const args of [
    [out, out],
    ['base', 'base'],
    ['base', out],
  ]) {
    const c = await runCli(['compare', ...args, '--format', 'json', '--fail-below', '0.95'], {
      cwd: dir,
      env,
    });
    assert.equal(c.code, 0, `${args.join(' ')}: ${c.stderr}`);
    const doc = JSON.parse(c.stdout) as CompareResult;
    assert.equal(doc.schema, 'dbsmack/compare@1');
    assert.equal(doc.rows.length, 2);
    for (const row of doc.rows) {
      for (const cell of Object.values(row.candidates)) {
        assert.equal(cell.ratio, 1);
        assert.equal(cell.verdict, 'same');
      }
    }
    assert.ok(doc.warnings.some((w) => /too few repeats/.test(w)));
  }
  const text = await runCli(['compare', 'base', out], { cwd: dir, env });
  assert.match(text.stdout, /Thrd\s+base q\/s\s+base \(2\)\/base/);
  assert.match(text.stdout, /^1\s+\S+\s+1\.00 ~$/m);
  const md = await runCli(['compare', 'base', out, '--format', 'markdown'], { cwd: dir, env });
  assert.match(md.stdout, /\| Thrd \| base q\/s \| base \(2\)\/base \|/);
  const csv = await runCli(['compare', 'base', out, '--format', 'csv', '--metric', 'p95'], { cwd: dir, env });
  assert.match(
    csv.stdout,
    /^metric,clients,base_label,base,candidate,value,ratio,ci_low,ci_high,p_value,test,verdict,n_base,n_cand$/m,
  );
  assert.match(csv.stdout, /^p95,2,base,/m);
});

test('run options and workload options pass through a sweep', async () => {
  const { dir, env } = setup();
  const out = path.join(dir, 's.json');
  const r = await runCli(
    [
      'sweep',
      'select1',
      '--prepared',
      'off',
      '--threads',
      '2',
      '--repeat',
      '1',
      '--events',
      '100',
      '--report-interval',
      '0.5',
      '--interleave',
      '--no-history',
      '--out',
      out,
      '-q',
    ],
    { cwd: dir, env },
  );
  assert.equal(r.code, 0, r.stderr);
  assert.equal(r.stdout, '', 'quiet with --out prints nothing');
  const run = readJson<SweepResult>(out).points[0]!.runs[0]!;
  assert.equal(run.result.workload.options.prepared, false);
  assert.equal(run.result.limits.report_interval_s, 0.5);
  assert.equal(run.id, undefined, 'not recorded');
  assert.match((await runCli(['history'], { cwd: dir, env })).stderr, /no history at/);
});

test('dbsmack run is recorded with the server settings, unless --no-history', async () => {
  const { dir, env } = setup();
  const r = await runCli(['run', 'select1', '--events', '100', '--label', 'one', '--format', 'json'], {
    cwd: dir,
    env,
  });
  assert.equal(r.code, 0, r.stderr);
  assert.match(r.stderr, /recorded as run 1 in /);
  const result = JSON.parse(r.stdout) as RunResult;
  assert.equal(result.server?.settings.journal_mode, 'wal');
  assert.match(result.server?.version ?? '', /^SQLite /);
  await runCli(['run', 'select1', '--events', '100', '--label', 'one', '--no-history', '-q'], {
    cwd: dir,
    env,
  });
  const list = JSON.parse(
    (await runCli(['history', '--format', 'json'], { cwd: dir, env })).stdout,
  ) as unknown[];
  assert.equal(list.length, 1);
  const show = await runCli(['show', '1', '--format', 'json'], { cwd: dir, env });
  assert.equal((JSON.parse(show.stdout) as RunResult).label, 'one');
});

test('bad input: corrupt JSON, unknown label, unknown id, no common client count, newer schema', async () => {
  const { dir, env, hist } = setup();
  const bad = path.join(dir, 'bad.json');
  writeFileSync(bad, '{\n  "schema": "dbsmack/sweep@1",\n  "points": [1, 2,,]\n}\n');
  let r = await runCli(['compare', bad, bad], { cwd: dir, env });
  assert.equal(r.code, 2);
  assert.match(r.stderr, /bad\.json:3:19: not valid JSON: Unexpected token ','\n/);
  writeFileSync(
    path.join(dir, 'hollow.json'),
    '{"schema": "dbsmack/sweep@1", "points": [{"clients": 1, "runs": [{}]}]}',
  );
  r = await runCli(['compare', 'hollow.json', 'hollow.json'], { cwd: dir, env });
  assert.equal(r.code, 2);
  assert.match(r.stderr, /hollow\.json: a sweep document without valid points/);
  writeFileSync(path.join(dir, 'other.json'), '{"schema": "something/else@1"}');
  r = await runCli(['compare', 'other.json', 'other.json'], { cwd: dir, env });
  assert.equal(r.code, 2);
  assert.match(
    r.stderr,
    /other\.json is not a dbsmack run, sweep or experiment \(schema "something\/else@1"\)/,
  );

  const run3 = path.join(dir, 'r3.json');
  const ok = await runCli(
    ['run', 'select1', '--clients', '3', '--events', '60', '--label', 'three', '--out', run3, '-q'],
    {
      cwd: dir,
      env,
    },
  );
  assert.equal(ok.code, 0, ok.stderr);
  r = await runCli(['compare', 'three', 'nope'], { cwd: dir, env });
  assert.equal(r.code, 2);
  assert.match(r.stderr, /no label 'nope' in the history .*history\.sqlite/);
  assert.match(r.stderr, /hint: labels there: three/);
  r = await runCli(['compare', 'three', '999'], { cwd: dir, env });
  assert.equal(r.code, 2);
  assert.match(r.stderr, /no run or sweep with id 999/);
  const sw = path.join(dir, 's.json');
  await runCli(['sweep', 'select1', '--clients', '1', '--repeat', '1', '--events', '50', '--out', sw, '-q'], {
    cwd: dir,
    env,
  });
  r = await runCli(['compare', sw, run3], { cwd: dir, env });
  assert.equal(r.code, 2);
  assert.match(r.stderr, /three and .* have no client count in common \(three: 3; .*: 1\)/);

  r = await runCli(['sweep', 'select1', '--events', '10'], { cwd: dir, env });
  assert.equal(r.code, 2);
  assert.match(r.stderr, /sweep needs --clients LIST/);
  r = await runCli(['sweep', 'select1', '--threads', '1,x'], { cwd: dir, env });
  assert.equal(r.code, 2);
  assert.match(r.stderr, /--clients expects a list like 1,2,4,8, got '1,x'/);
  r = await runCli(['sweep', 'select1', '--clients', '1', '--out', path.join(dir, 'no', 'such', 'x.json')], {
    cwd: dir,
    env,
  });
  assert.equal(r.code, 2);
  assert.match(r.stderr, /cannot write --out .*x\.json: no such directory/);
  assert.doesNotMatch(r.stderr, /\[1\/\d+\]/, 'nothing ran');

  const db = new Database(hist);
  db.prepare("UPDATE meta SET value = '2' WHERE key = 'schema_version'").run();
  db.close();
  for (const args of [
    ['history'],
    ['sweep', 'select1', '--clients', '1', '--events', '10'],
    ['run', 'select1', '--events', '10'],
    ['compare', 'three', 'three'],
  ]) {
    r = await runCli(args, { cwd: dir, env });
    assert.equal(r.code, 2, args.join(' '));
    assert.match(
      r.stderr,
      /written by a newer dbsmack \(schema 2; this one knows up to 1\); it was left untouched/,
    );
  }
  // run, like sweep, checks the history before it starts: no run is made only to be refused by it
  r = await runCli(['run', 'select1', '--events', '10', '-q'], { cwd: dir, env });
  assert.equal(r.code, 2, r.stderr);
  assert.match(
    r.stderr,
    /written by a newer dbsmack \(schema 2; this one knows up to 1\); it was left untouched/,
  );
  assert.equal(r.stdout, '', 'nothing ran');
});

test('Ctrl-C stops the sweep, keeps every run measured, and marks it partial', async () => {
  const { dir, env } = setup();
  const out = path.join(dir, 'sweep.json');
  const { child, done } = startCli(
    [
      'sweep',
      'select1',
      '--clients',
      '1,2',
      '--repeat',
      '2',
      '--time',
      '3',
      '--progress',
      '--report-interval',
      '0.2',
      '--label',
      'cut',
      '--out',
      out,
    ],
    { cwd: dir, env },
  );
  try {
    // Interrupt while the second run is measuring (its first interval line): the first run is complete.
    await waitForOutput(child, /^\[run 2\/4 repeat \d\] /m, 'the first interval line of the second run');
    child.kill('SIGINT');
    const r = await done;
    assert.equal(r.code, 130, r.stderr);
    const s = readJson<SweepResult>(out);
    assert.equal(s.status, 'partial');
    assert.equal(s.status_reason, 'interrupted');
    // the run in progress is kept, partial, since it had started measuring
    assert.deepEqual(
      s.points.flatMap((p) => p.runs).map((x) => x.status),
      ['complete', 'partial'],
    );
    const list = JSON.parse((await runCli(['history', '--format', 'json'], { cwd: dir, env })).stdout) as {
      status: string;
    }[];
    assert.equal(list[0]!.status, 'partial');
  } finally {
    child.kill('SIGKILL');
  }
});

for (const driver of ['mysql', 'postgres'] as const) {
  test(`${driver} sweep of select1 with the server's settings`, async (t) => {
    const target = await needServer(t, driver);
    if (!target) return;
    const { dir, env } = setup();
    const out = path.join(dir, 'sweep.json');
    const url = driver === 'mysql' ? MYSQL_URL : PG_URL;
    const r = await runCli(
      [
        'sweep',
        'select1',
        '--db',
        url,
        '--clients',
        '1,2',
        '--repeat',
        '3',
        '--events',
        '200',
        '--label',
        driver,
        '--out',
        out,
      ],
      { cwd: dir, env },
    );
    assert.equal(r.code, 0, r.stderr);
    const s = readJson<SweepResult>(out);
    checkSweep(s, driver);
    assert.equal(s.target.driver, driver);
    assert.match(s.server_settings?.max_connections ?? '', /^\d+$/);
    if (driver === 'mysql') assert.ok(s.server_settings?.thread_handling);
    else assert.ok(s.server_settings?.shared_buffers);
    const c = await runCli(['compare', driver, out, '--fail-below', '0.9'], { cwd: dir, env });
    assert.equal(c.code, 0, c.stderr);
  });
}

test('a run whose timeline collapses mid-run is flagged as a stall, with its times (MariaDB LOCK TABLES)', async (t) => {
  const target = await needServer(t, 'mysql');
  if (!target) return;
  const { dir, env } = setup();
  const out = path.join(dir, 'stall.json');
  const workload = path.join(ROOT, 'test', 'fixtures', 'sweep-point-read.js');
  const driver = await loadDriver('mysql');
  const locker = await driver.connect(target, { connectTimeoutMs: 5000 });
  try {
    const { child, done } = startCli(
      [
        'sweep',
        workload,
        '--db',
        MYSQL_URL,
        '--clients',
        '1',
        '--repeat',
        '1',
        '--time',
        '5',
        '--progress',
        '--out',
        out,
      ],
      { cwd: dir, env },
    );
    // Hold the table from the first interval line on, for 2.5 s of the 5 s run: the intervals in the middle
    // of the run see nothing. (The lock's length is the stall under test, not a wait for an event.)
    await waitForOutput(child, /\[ 1s \]/, 'the first interval line of the run');
    await locker.query('LOCK TABLES dbsmack_sweep_stall WRITE');
    await new Promise((r) => setTimeout(r, 2500));
    await locker.query('UNLOCK TABLES');
    const r = await done;
    assert.equal(r.code, 0, r.stderr);
    const s = readJson<SweepResult>(out);
    const run = s.points[0]!.runs[0]!;
    assert.ok(run.stalls.length > 0, JSON.stringify(run.result.intervals.map((i) => i.qps)));
    const [from, to] = run.stalls[0]!;
    assert.ok(from >= 1 && to <= run.result.elapsed_s && to > from, `${from}–${to}`);
    assert.notEqual(s.points[0]!.stability, 'stable');
    assert.match(s.points[0]!.stability_reason, /throughput collapsed mid-run: run 1 stalled at \d/);
    assert.match(r.stderr, /STALLED at /);
  } finally {
    await locker.query('UNLOCK TABLES').catch(() => {});
    await locker.query('DROP TABLE IF EXISTS dbsmack_sweep_stall').catch(() => {});
    await locker.close();
  }
});
