/**
 * The sysbench workloads against the real sysbench 1.0.20 on MariaDB and PostgreSQL: the same counts for
 * the same events, tables prepared by either tool running under the other, and a report that parses as
 * sysbench's.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { Target } from '../src/driver/types.ts';
import type { RunResult } from '../src/metrics/run-result.ts';
import { runCli } from './helpers/cli.ts';
import { needServer, SERVER_URLS } from './helpers/servers.ts';
import {
  needSysbench,
  parseSysbenchReport,
  runSysbench,
  SYSBENCH_INTERVAL_LINE,
} from './helpers/sysbench.ts';

const SIZE = ['--table-size', '1000'];

async function dbsmack(args: string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return runCli(args);
}

async function cleanupBoth(url: string, target: Target): Promise<void> {
  await dbsmack(['cleanup', 'oltp_read_write', '--db', url, '--tables', '2']);
  runSysbench('oltp_read_write', target, ['--tables=2'], 'cleanup');
}

for (const driver of ['mysql', 'postgres'] as const) {
  const url = SERVER_URLS[driver];

  test(`${driver}: tables prepared by dbsmack run under sysbench, and the other way round`, async (t) => {
    const target = await needServer(t, driver);
    if (!target || !needSysbench(t)) return;
    await cleanupBoth(url, target);
    try {
      const p = await dbsmack([
        'prepare',
        'oltp_read_write',
        '--db',
        url,
        ...SIZE,
        '--tables',
        '2',
        '--threads',
        '4',
      ]);
      assert.equal(p.code, 0, p.stderr);
      const sb = runSysbench(
        'oltp_read_write',
        target,
        ['--table-size=1000', '--tables=2', '--events=30'],
        'run',
      );
      assert.equal(sb.code, 0, sb.stdout + sb.stderr);
      const rep = parseSysbenchReport(sb.stdout);
      assert.equal(rep.transactions, 30);
      assert.equal(rep.ignoredErrors, 0);
      const c = await dbsmack(['cleanup', 'oltp_read_write', '--db', url, '--tables', '2']);
      assert.equal(c.code, 0, c.stderr);

      const sp = runSysbench(
        'oltp_read_write',
        target,
        ['--table-size=1000', '--tables=2', '--threads=2'],
        'prepare',
      );
      assert.equal(sp.code, 0, sp.stdout + sp.stderr);
      const r = await dbsmack([
        'run',
        'oltp_read_write',
        '--db',
        url,
        ...SIZE,
        '--tables',
        '2',
        '--events',
        '30',
        '--format',
        'json',
      ]);
      assert.equal(r.code, 0, r.stderr);
      const res = JSON.parse(r.stdout) as RunResult;
      assert.equal(res.status, 'complete');
      assert.equal(res.sysbench?.transactions, 30);
    } finally {
      await cleanupBoth(url, target);
    }
  });

  test(`${driver}: read/write/other equal sysbench's for the same --events with one thread`, async (t) => {
    const target = await needServer(t, driver);
    if (!target || !needSysbench(t)) return;
    await cleanupBoth(url, target);
    try {
      const sp = runSysbench('oltp_read_write', target, ['--table-size=1000'], 'prepare');
      assert.equal(sp.code, 0, sp.stdout + sp.stderr);
      const cases: [string, string[]][] = [
        ['oltp_read_only', []],
        ['oltp_read_write', []],
        ['oltp_read_write', ['--range-selects=off', '--point-selects=3', '--delete-inserts=2']],
        ['oltp_write_only', []],
        ['oltp_point_select', []],
        ['oltp_update_index', []],
        ['oltp_update_non_index', ['--non-index-updates=2']],
        ['oltp_read_only', ['--skip-trx=on', '--rand-type=uniform']],
      ];
      for (const [w, extra] of cases) {
        const sb = runSysbench(w, target, ['--table-size=1000', '--events=10', ...extra], 'run');
        assert.equal(sb.code, 0, sb.stdout + sb.stderr);
        const want = parseSysbenchReport(sb.stdout);
        const r = await dbsmack([
          'run',
          w,
          '--db',
          url,
          ...SIZE,
          '--events',
          '10',
          '--format',
          'json',
          ...extra,
        ]);
        assert.equal(r.code, 0, r.stderr);
        const got = (JSON.parse(r.stdout) as RunResult).sysbench;
        assert.ok(got, 'the result has a sysbench block');
        const label = `${w} ${extra.join(' ')}`;
        assert.deepEqual(
          {
            read: got.read,
            write: got.write,
            other: got.other,
            total: got.total,
            transactions: got.transactions,
          },
          {
            read: want.read,
            write: want.write,
            other: want.other,
            total: want.total,
            transactions: want.transactions,
          },
          label,
        );
        assert.equal(got.ignored_errors, want.ignoredErrors, label);
        assert.equal(got.reconnects, want.reconnects, label);
      }
    } finally {
      await cleanupBoth(url, target);
    }
  });
}

test('mysql: --format sysbench parses as sysbench output, interval lines included', async (t) => {
  const target = await needServer(t, 'mysql');
  if (!target || !needSysbench(t)) return;
  const url = SERVER_URLS.mysql;
  await cleanupBoth(url, target);
  try {
    assert.equal((await dbsmack(['prepare', 'oltp_read_only', '--db', url, ...SIZE])).code, 0);
    const r = await dbsmack([
      'run',
      'oltp_read_only',
      '--db',
      url,
      ...SIZE,
      '--time',
      '2',
      '--report-interval',
      '1',
      '--percentile',
      '99',
      '--format',
      'sysbench',
    ]);
    assert.equal(r.code, 0, r.stderr);
    const rep = parseSysbenchReport(r.stdout);
    assert.ok(rep.transactions > 0);
    assert.equal(rep.events, rep.transactions);
    assert.equal(rep.read, rep.transactions * 14);
    assert.equal(rep.other, rep.transactions * 2);
    assert.equal(rep.total, rep.read + rep.write + rep.other);
    assert.ok(rep.latency.min <= rep.latency.avg && rep.latency.avg <= rep.latency.max);
    assert.ok(rep.latency.percentile !== undefined);
    assert.match(r.stdout, /^ {9}99th percentile: +[\d.]+$/m);
    const lines = r.stdout.split('\n').filter((l) => l.startsWith('['));
    assert.ok(lines.length >= 1, r.stdout);
    for (const l of lines) assert.match(l, SYSBENCH_INTERVAL_LINE);
    assert.match(lines[0] ?? '', /lat \(ms,99%\)/);
  } finally {
    await cleanupBoth(url, target);
  }
});

test('running before prepare says so and names the prepare command', async (t) => {
  const target = await needServer(t, 'postgres');
  if (!target) return;
  const url = SERVER_URLS.postgres;
  await dbsmack(['cleanup', 'oltp_read_only', '--db', url, '--tables', '3']);
  const r = await dbsmack(['run', 'oltp_read_only', '--db', url, '--tables', '3', '--events', '5']);
  assert.equal(r.code, 2, r.stderr);
  assert.match(r.stderr, /sbtest1 does not exist/);
  assert.match(r.stderr, /dbsmack prepare oltp_read_only --db postgres:\/\/\S+ --tables 3/);
});

test('sysbench-style connection options become the target; the password never shows', async (t) => {
  const target = await needServer(t, 'postgres');
  if (!target) return;
  const conn = [
    '--db-driver=pgsql',
    `--pgsql-host=${target.host ?? '127.0.0.1'}`,
    `--pgsql-port=${target.port ?? 5432}`,
    `--pgsql-user=${target.user ?? 'root'}`,
    `--pgsql-db=${target.database ?? 'test'}`,
  ];
  const ok = await dbsmack(['run', 'select1', ...conn, '--events', '5', '--format', 'json']);
  assert.equal(ok.code, 0, ok.stderr);
  const res = JSON.parse(ok.stdout) as RunResult;
  assert.equal(res.target.driver, 'postgres');
  assert.equal(
    res.target.url,
    `postgres://${target.user ?? 'root'}@${target.host ?? '127.0.0.1'}:${target.port ?? 5432}/${target.database ?? 'test'}`,
  );
  const bad = await dbsmack([
    'run',
    'select1',
    '--db-driver=mysql',
    '--mysql-host=127.0.0.1',
    '--mysql-port=1',
    '--mysql-password=s3cr3t-pw',
    '--events',
    '1',
  ]);
  assert.equal(bad.code, 3, bad.stderr);
  assert.match(bad.stderr, /mysql:\/\/sbtest:\*\*\*@127\.0\.0\.1:1\/sbtest/);
  assert.doesNotMatch(bad.stderr + bad.stdout, /s3cr3t-pw/);
});
