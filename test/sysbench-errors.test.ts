/**
 * Errors as sysbench treats them: duplicate keys under --skip-trx are counted, not fatal; a lost connection
 * is re-established and its statements prepared again.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { loadDriver } from '../src/driver/index.ts';
import type { Target } from '../src/driver/types.ts';
import type { RunResult } from '../src/metrics/run-result.ts';
import { runCli, startCli } from './helpers/cli.ts';
import { needServer, SERVER_URLS } from './helpers/servers.ts';

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

test('postgres: duplicate keys under --skip-trx are counted as ignored errors, not fatal', async (t) => {
  const target = await needServer(t, 'postgres');
  if (!target) return;
  const url = SERVER_URLS.postgres;
  const common = ['--db', url, '--table-size', '8'];
  await runCli(['cleanup', 'oltp_write_only', ...common]);
  try {
    assert.equal((await runCli(['prepare', 'oltp_write_only', ...common])).code, 0);
    // four clients deleting and re-inserting 8 ids without transactions collide on the primary key
    const r = await runCli([
      'run',
      'oltp_write_only',
      ...common,
      '--skip-trx',
      'on',
      '--rand-type',
      'uniform',
      '--threads',
      '4',
      '--workers',
      '2',
      '--events',
      '400',
      '--format',
      'json',
    ]);
    assert.equal(r.code, 0, r.stderr + r.stdout.slice(0, 2000));
    const res = JSON.parse(r.stdout) as RunResult;
    assert.equal(res.status, 'complete');
    const dup = res.errors.filter((e) => e.code === '23505');
    assert.ok(dup.every((e) => e.ignored));
    assert.equal(
      res.sysbench?.ignored_errors,
      res.errors.filter((e) => e.ignored && e.kind !== 'reconnect').reduce((a, e) => a + e.count, 0),
    );
  } finally {
    await runCli(['cleanup', 'oltp_write_only', ...common]);
  }
});

async function killSessions(target: Target): Promise<number> {
  const driver = await loadDriver(target.driver);
  const c = await driver.connect(target, { connectTimeoutMs: 3000 });
  try {
    if (target.driver === 'postgres') {
      const rows = await c.all(
        "SELECT pg_terminate_backend(pid) AS k FROM pg_stat_activity WHERE application_name = 'dbsmack' AND pid <> pg_backend_pid() AND datname = current_database()",
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

for (const driver of ['mysql', 'postgres'] as const) {
  test(`${driver}: a lost connection is re-established and the statements prepared again`, async (t) => {
    const target = await needServer(t, driver);
    if (!target) return;
    const url = SERVER_URLS[driver];
    const common = ['--db', url, '--table-size', '100'];
    await runCli(['cleanup', 'oltp_read_only', ...common]);
    try {
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
      let measuring = false;
      child.stderr?.on('data', (d: Buffer) => {
        if (d.toString().includes('[ 1s ]')) measuring = true;
      });
      for (let i = 0; i < 80 && !measuring; i++) await sleep(100);
      const killed = measuring ? await killSessions(target) : 0;
      assert.ok(killed > 0, 'found the run’s session to kill');
      const r = await done;
      assert.equal(r.code, 0, r.stderr + r.stdout.slice(0, 1500));
      const res = JSON.parse(r.stdout) as RunResult;
      assert.equal(res.status, 'complete');
      assert.ok((res.sysbench?.reconnects ?? 0) >= 1, JSON.stringify(res.errors));
      assert.ok((res.sysbench?.transactions ?? 0) > 0);
    } finally {
      await runCli(['cleanup', 'oltp_read_only', ...common]);
    }
  });
}
