/**
 * Ctrl-C while statements run for a minute: the first SIGINT cancels them on the server (PostgreSQL
 * pg_cancel_backend, MySQL KILL QUERY) and the run ends at once with what it measured, rather than waiting
 * for the engine's grace and terminating the workers (which lost their measurements and left the server
 * running the statements). The cancelled statements are the stop's doing: not counted, not errors, and
 * `dbsmack pgbench` prints no client abort for them.
 */
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { type TestContext, test } from 'node:test';
import { parseTarget } from '../src/driver/url.ts';
import type { RunResult } from '../src/metrics/run-result.ts';
import { startCli, tmpDir } from './helpers/cli.ts';
import { connectTo, MYSQL_URL, needServer, PG_URL, TEST_DATABASES } from './helpers/servers.ts';
import { waitFor } from './helpers/wait.ts';

type Server = 'mysql' | 'postgres';
const URLS: Record<Server, string> = { mysql: MYSQL_URL, postgres: PG_URL };

/** Sessions of this test's database whose statement holds `marker`, as the server lists them. */
async function running(server: Server, marker: string): Promise<number> {
  const conn = await connectTo(parseTarget(URLS[server]));
  try {
    const rows =
      server === 'postgres'
        ? await conn.all(
            `SELECT count(*) AS n FROM pg_stat_activity WHERE datname = '${TEST_DATABASES.postgres}' AND state = 'active' AND query LIKE '%${marker}%' AND pid <> pg_backend_pid()`,
          )
        : await conn.all(
            `SELECT count(*) AS n FROM information_schema.processlist WHERE db = '${TEST_DATABASES.mysql}' AND info LIKE '%${marker}%' AND id <> connection_id()`,
          );
    return Number((rows[0] as { n: unknown }).n);
  } finally {
    await conn.close();
  }
}

/** Start `args`, wait until `clients` sessions run the marked statement, send one SIGINT, wait for the end. */
async function interruptWhileRunning(server: Server, args: string[], marker: string, clients: number) {
  const dir = tmpDir();
  const { child, done } = startCli(args, { cwd: dir });
  try {
    await waitFor(`${clients} sessions running the minute-long statement`, async () => {
      return (await running(server, marker)) >= clients;
    });
    const t0 = Date.now();
    child.kill('SIGINT');
    const r = await done;
    const afterMs = Date.now() - t0;
    // The statements ended on the server too: nothing of this run is still running there.
    const left = await running(server, marker);
    return { r, afterMs, left };
  } finally {
    child.kill('SIGKILL');
  }
}

function longModule(dir: string, sql: string): string {
  const mod = path.join(dir, 'long.mjs');
  writeFileSync(
    mod,
    `export default { name: 'long', client(ctx) { return { async event() { await ctx.query('long', ${JSON.stringify(sql)}); } }; } };\n`,
  );
  return mod;
}

async function runCancelled(t: TestContext, server: Server, sql: (marker: string) => string): Promise<void> {
  if (!(await needServer(t, server))) return;
  const marker = `dbsmack_cancel_${server}_${process.pid}`;
  const dir = tmpDir();
  const mod = longModule(dir, sql(marker));
  const { r, afterMs, left } = await interruptWhileRunning(
    server,
    [
      'run',
      mod,
      '--db',
      URLS[server],
      '--clients',
      '3',
      '--workers',
      '2',
      '--time',
      '120',
      '--format',
      'json',
    ],
    marker,
    3,
  );
  assert.equal(r.code, 130, r.stderr);
  const res = JSON.parse(r.stdout) as RunResult;
  assert.equal(res.status, 'partial');
  // Interrupted, not "did not stop in time and were terminated" (the grace's way out, 5 s later).
  assert.match(res.status_reason ?? '', /interrupted/);
  assert.doesNotMatch(res.status_reason ?? '', /did not stop/);
  // The cancelled statements are neither errors nor measurements (MySQL's SLEEP ends without an error).
  assert.equal(res.totals.errors, 0, JSON.stringify(res.errors));
  assert.equal(res.totals.queries, 0);
  assert.equal(left, 0, 'the statements still run on the server');
  // Not a timing target: far below the minute the statements would take, and the grace's 5 s.
  assert.ok(afterMs < 4000, `ended ${afterMs} ms after the SIGINT`);
}

test('the first SIGINT cancels minute-long statements on PostgreSQL', async (t) => {
  await runCancelled(t, 'postgres', (m) => `SELECT pg_sleep(60) /* ${m} */`);
});

test('the first SIGINT cancels minute-long statements on MariaDB', async (t) => {
  await runCancelled(t, 'mysql', (m) => `SELECT SLEEP(60) /* ${m} */`);
});

test('dbsmack pgbench: the first SIGINT cancels the scripts statements, with no client aborts', async (t) => {
  if (!(await needServer(t, 'postgres'))) return;
  const marker = `dbsmack_cancel_pgbench_${process.pid}`;
  const dir = tmpDir();
  const script = path.join(dir, 'sleep.sql');
  writeFileSync(script, `SELECT pg_sleep(60) /* ${marker} */;\n`);
  const pg = parseTarget(PG_URL);
  const { r, left } = await interruptWhileRunning(
    'postgres',
    [
      'pgbench',
      '-h',
      pg.host ?? '127.0.0.1',
      '-p',
      String(pg.port ?? 5432),
      '-U',
      pg.user ?? 'root',
      '-n',
      '-c',
      '2',
      '-j',
      '2',
      '-T',
      '120',
      '-f',
      script,
      TEST_DATABASES.postgres,
    ],
    marker,
    2,
  );
  assert.doesNotMatch(r.stderr, /aborted in command/);
  assert.match(r.stderr, /interrupted by a signal/);
  assert.match(r.stdout, /number of failed transactions: 0/);
  assert.equal(left, 0, 'the statements still run on the server');
});
