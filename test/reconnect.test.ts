/**
 * A lost connection mid-run is re-established and counted, and the run completes: connections are killed
 * from outside while the clients run.
 */
import assert from 'node:assert/strict';
import path from 'node:path';
import { test } from 'node:test';
import { loadDriver } from '../src/driver/index.ts';
import type { Target } from '../src/driver/types.ts';
import type { RunResult } from '../src/metrics/run-result.ts';
import { startCli } from './helpers/cli.ts';
import { MYSQL_URL, needServer, PG_URL } from './helpers/servers.ts';

const sleepy = path.resolve(import.meta.dirname, 'fixtures', 'workloads', 'sleepy.ts');

async function killOthers(target: Target, tag: string): Promise<number> {
  const d = await loadDriver(target.driver);
  const admin = await d.connect(target, { connectTimeoutMs: 5000 });
  try {
    if (target.driver === 'postgres') {
      const rows = await admin.all(
        'SELECT pg_terminate_backend(pid) AS ok FROM pg_stat_activity WHERE application_name = ? AND pid <> pg_backend_pid()',
        [tag],
      );
      return rows.length;
    }
    const rows = await admin.all(
      "SELECT id FROM information_schema.processlist WHERE info LIKE 'SELECT SLEEP(0.005)%' AND id <> CONNECTION_ID()",
    );
    for (const r of rows) await admin.query(`KILL ${Number(r.id)}`).catch(() => {});
    return rows.length;
  } finally {
    await admin.close();
  }
}

for (const driver of ['postgres', 'mysql'] as const) {
  test(`${driver}: connections killed mid-run are re-established and counted`, async (t) => {
    const target = await needServer(t, driver);
    if (!target) return;
    const tag = `dbsmack_reconn_${process.pid}`;
    const url = driver === 'postgres' ? `${PG_URL}?application_name=${tag}` : MYSQL_URL;
    const { child, done } = startCli([
      'run',
      sleepy,
      '--db',
      url,
      '--clients',
      '3',
      '--time',
      '4',
      '--format',
      'json',
      '--progress',
    ]);
    let seen = '';
    await new Promise<void>((resolve) => {
      child.stderr?.on('data', (d: Buffer) => {
        seen += d.toString();
        if (/\[ 1s \]/.test(seen)) resolve();
      });
    });
    const tgt =
      driver === 'postgres'
        ? { ...target, params: { ...target.params, application_name: 'dbsmack_killer' } }
        : target;
    let killed = 0;
    for (let i = 0; i < 5 && killed === 0; i++) killed += await killOthers(tgt, tag);
    assert.ok(killed > 0, 'found connections to kill');
    const r = await done;
    assert.equal(r.code, 0, r.stderr);
    const res = JSON.parse(r.stdout) as RunResult;
    assert.equal(res.status, 'complete');
    assert.ok(res.totals.reconnects >= 1, `reconnects ${res.totals.reconnects}`);
    assert.ok(
      res.errors.some((e) => e.kind === 'reconnect' && e.ignored),
      JSON.stringify(res.errors),
    );
    assert.ok(
      res.intervals.some((p) => p.reconnects > 0),
      'the timeline shows when it happened',
    );
    assert.ok(res.totals.events > 100, `events ${res.totals.events}`);
  });
}
