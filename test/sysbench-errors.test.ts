/**
 * Errors as sysbench 1.0.20 treats them: on PostgreSQL 40P01, 23505 and 40001 roll the event back and run
 * it again, on MySQL the codes of --mysql-ignore-errors do (default 1213,1020,1205, or all), each counted as
 * an ignored error; anything else stops the run. A lost connection is re-established and its statements
 * prepared again. Every test works in a database of its own (created and dropped here), so that it kills
 * only its own run's sessions and uses tables nobody else has.
 */
import assert from 'node:assert/strict';
import type { ChildProcess } from 'node:child_process';
import { test } from 'node:test';
import { loadDriver } from '../src/driver/index.ts';
import type { Target } from '../src/driver/types.ts';
import type { RunResult } from '../src/metrics/run-result.ts';
import { runCli, startCli } from './helpers/cli.ts';
import { ownDatabase } from './helpers/own-database.ts';

/** The run's ignored errors, counted three ways that must agree: per code, in total, and per interval. */
function checkIgnoredCounts(res: RunResult): number {
  const sb = res.sysbench;
  assert.ok(sb, 'the result has a sysbench block');
  const ignored = res.errors
    .filter((e) => e.ignored && e.kind !== 'reconnect')
    .reduce((a, e) => a + e.count, 0);
  assert.equal(sb.ignored_errors, ignored);
  const byCode = Object.values(sb.ignored_errors_by_code ?? {}).reduce((a, n) => a + n, 0);
  assert.equal(byCode, ignored, JSON.stringify(sb.ignored_errors_by_code));
  const perInterval = res.intervals.reduce((a, p) => a + (p.ignored_errors ?? 0), 0);
  assert.equal(perInterval, ignored, 'the intervals add up to the ignored errors');
  return ignored;
}

function parseRun(r: { code: number | null; stdout: string; stderr: string }): RunResult {
  assert.equal(r.code, 0, r.stderr + r.stdout.slice(0, 2000));
  const res = JSON.parse(r.stdout) as RunResult;
  assert.equal(res.status, 'complete', res.status_reason);
  return res;
}

for (const driver of ['mysql', 'postgres'] as const) {
  test(`${driver}: duplicate keys under --skip-trx restart the event and are counted as ignored errors`, async (t) => {
    const db = await ownDatabase(t, driver, 'skiptrx');
    if (!db) return;
    const common = ['--db', db.url, '--table-size', '8'];
    assert.equal((await runCli(['prepare', 'oltp_write_only', ...common])).code, 0);
    // eight clients deleting and re-inserting 8 ids without transactions collide on the primary key
    const res = parseRun(
      await runCli([
        'run',
        'oltp_write_only',
        ...common,
        '--skip-trx',
        'on',
        '--rand-type',
        'uniform',
        '--threads',
        '8',
        '--workers',
        '2',
        '--events',
        '400',
        '--format',
        'json',
      ]),
    );
    const dupCode = driver === 'postgres' ? '23505' : '1062';
    const dup = res.errors.filter((e) => e.code === dupCode);
    const dups = dup.reduce((a, e) => a + e.count, 0);
    assert.ok(dups > 0, `no duplicate key happened: ${JSON.stringify(res.errors)}`);
    assert.ok(
      dup.every((e) => e.ignored && e.kind === 'retryable'),
      JSON.stringify(dup),
    );
    assert.equal(res.sysbench?.ignored_errors_by_code?.[dupCode], dups);
    checkIgnoredCounts(res);
    // each of the 400 events went through after its restarts, or ran out of --max-tries (a failed event)
    const failed = res.client_stats.reduce((a, c) => a + c.errors, 0);
    assert.equal((res.sysbench?.transactions ?? 0) + failed, 400);
  });
}

for (const workload of ['oltp_read_write', 'oltp_write_only']) {
  test(`postgres: ${workload} --tables 1 --table-size 2000 --threads 8 --time 5 completes, counting its ignored errors`, async (t) => {
    const db = await ownDatabase(t, 'postgres', workload.slice(5));
    if (!db) return;
    const size = ['--tables', '1', '--table-size', '2000'];
    assert.equal((await runCli(['prepare', workload, '--db', db.url, ...size])).code, 0);
    // the command of issue 17: it used to stop on 23505 within two seconds
    const res = parseRun(
      await runCli([
        'run',
        workload,
        '--db',
        db.url,
        ...size,
        '--threads',
        '8',
        '--time',
        '5',
        '--format',
        'json',
      ]),
    );
    const ignored = checkIgnoredCounts(res);
    // 75% of sysbench's ids fall on 20 rows: eight clients collide (sysbench counts 19 to 31 here)
    assert.ok(ignored > 0, JSON.stringify(res.errors));
    for (const code of Object.keys(res.sysbench?.ignored_errors_by_code ?? {})) {
      assert.ok(['40P01', '23505', '40001'].includes(code), `ignored ${code}`);
    }
    assert.ok(
      res.errors.every((e) => e.ignored),
      JSON.stringify(res.errors),
    );
  });
}

/** Sixteen clients writing 20 rows in transactions: MariaDB finds deadlocks (1213). */
const DEADLOCKING = ['--table-size', '20', '--threads', '16', '--time', '2', '--format', 'json'];

test('mysql: --mysql-ignore-errors chooses the errors that restart the event (default 1213,1020,1205; all)', async (t) => {
  const db = await ownDatabase(t, 'mysql', 'ignore');
  if (!db) return;
  const common = ['oltp_write_only', '--db', db.url];
  assert.equal((await runCli(['prepare', ...common, '--table-size', '20'])).code, 0);

  const def = parseRun(await runCli(['run', ...common, ...DEADLOCKING]));
  const deadlocks = def.sysbench?.ignored_errors_by_code?.['1213'] ?? 0;
  assert.ok(deadlocks > 0, `no deadlock happened: ${JSON.stringify(def.errors)}`);
  checkIgnoredCounts(def);

  const all = parseRun(await runCli(['run', ...common, ...DEADLOCKING, '--mysql-ignore-errors=all']));
  assert.ok((all.sysbench?.ignored_errors_by_code?.['1213'] ?? 0) > 0, JSON.stringify(all.errors));
  assert.equal(all.workload.options.mysql_ignore_errors, 'all');

  // without 1213 in the list a deadlock ends the run, as it ends sysbench's
  const narrow = await runCli(['run', ...common, ...DEADLOCKING, '--mysql-ignore-errors', '1205']);
  assert.equal(narrow.code, 4, narrow.stderr);
  const res = JSON.parse(narrow.stdout) as RunResult;
  assert.notEqual(res.status, 'complete');
  assert.match(res.status_reason ?? '', /1213/);
  assert.deepEqual(
    res.errors.filter((e) => !e.ignored).map((e) => [e.code, e.kind]),
    [['1213', 'fatal']],
  );

  const bad = await runCli(['run', ...common, ...DEADLOCKING, '--mysql-ignore-errors', 'deadlocks']);
  assert.equal(bad.code, 2, bad.stderr);
  assert.match(bad.stderr, /--mysql-ignore-errors expects 'all' or MySQL error numbers.*got 'deadlocks'/);
});

/** Kill every session in the test's own database but the killer's: they are all the run's. */
async function killSessions(target: Target): Promise<number> {
  const driver = await loadDriver(target.driver);
  const c = await driver.connect(target, { connectTimeoutMs: 3000 });
  try {
    if (target.driver === 'postgres') {
      const rows = await c.all(
        "SELECT pg_terminate_backend(pid) AS k FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid() AND backend_type = 'client backend'",
      );
      return rows.length;
    }
    const rows = await c.all(
      "SELECT id FROM information_schema.processlist WHERE db = DATABASE() AND id <> CONNECTION_ID() AND command <> 'Daemon'",
    );
    for (const r of rows) await c.query(`KILL ${Number(r.id)}`).catch(() => {});
    return rows.length;
  } finally {
    await c.close();
  }
}

/** Resolves when `child` writes a line matching `re` on stderr; rejects when it exits first or after `ms`. */
function stderrLine(child: ChildProcess, re: RegExp, ms: number): Promise<void> {
  return new Promise((resolve, reject) => {
    let seen = '';
    const timer = setTimeout(() => reject(new Error(`no ${re} on stderr within ${ms} ms:\n${seen}`)), ms);
    child.stderr?.on('data', (d: Buffer) => {
      seen += d.toString();
      if (re.test(seen)) {
        clearTimeout(timer);
        resolve();
      }
    });
    child.on('exit', () => {
      clearTimeout(timer);
      reject(new Error(`the run ended before ${re} appeared:\n${seen}`));
    });
  });
}

for (const driver of ['mysql', 'postgres'] as const) {
  test(`${driver}: a lost connection is re-established and the statements prepared again`, async (t) => {
    const db = await ownDatabase(t, driver, 'reconnect');
    if (!db) return;
    const common = ['--db', db.url, '--table-size', '100'];
    assert.equal((await runCli(['prepare', 'oltp_read_only', ...common])).code, 0);
    const { child, done } = startCli([
      'run',
      'oltp_read_only',
      ...common,
      '--time',
      '4',
      '--progress',
      '--format',
      'json',
    ]);
    // the first progress line means the clients are connected and measuring
    await stderrLine(child, /\[ 1s \]/, 20_000);
    const killed = await killSessions(db.target);
    assert.ok(killed > 0, 'found the run’s session to kill');
    const res = parseRun(await done);
    assert.ok((res.sysbench?.reconnects ?? 0) >= 1, JSON.stringify(res.errors));
    assert.ok((res.sysbench?.transactions ?? 0) > 0);
  });
}
