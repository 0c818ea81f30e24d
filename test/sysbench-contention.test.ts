/**
 * Every sysbench write workload under heavy contention (16 threads on a table of 20 rows, where 75% of
 * the ids fall on one row) on MariaDB and PostgreSQL, run by the real sysbench 1.0.20 and by dbsmack in
 * turn on the same tables: both complete, and where sysbench counts ignored errors (deadlocks, duplicate
 * keys, serialization failures) dbsmack counts them too, by code. Each server's tables are in a database
 * of this test's own.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { loadDriver } from '../src/driver/index.ts';
import type { Target } from '../src/driver/types.ts';
import type { RunResult } from '../src/metrics/run-result.ts';
import { runCli } from './helpers/cli.ts';
import { ownDatabase } from './helpers/own-database.ts';
import { needSysbench, parseSysbenchReport, runSysbench } from './helpers/sysbench.ts';

/** Workload and seconds; the two with transactions collide on every server and get longer. */
const WORKLOADS: [string, number][] = [
  ['oltp_read_write', 2],
  ['oltp_write_only', 2],
  ['oltp_update_index', 1],
  ['oltp_update_non_index', 1],
  ['oltp_delete', 1],
  ['oltp_insert', 1],
];
const TRANSACTIONS = new Set(['oltp_read_write', 'oltp_write_only']);
const SIZE = 20;
const THREADS = 16;

for (const driver of ['mysql', 'postgres'] as const) {
  test(`${driver}: every write workload under contention completes in sysbench and dbsmack, both counting ignored errors`, async (t) => {
    if (!needSysbench(t)) return;
    const db = await ownDatabase(t, driver, 'contention');
    if (!db) return;
    const p = await runCli(['prepare', 'oltp_read_write', '--db', db.url, '--table-size', String(SIZE)]);
    assert.equal(p.code, 0, p.stderr);
    const lines: string[] = [];
    for (const [workload, seconds] of WORKLOADS) {
      const sb = runSysbench(
        workload,
        db.target,
        [`--table-size=${SIZE}`, `--threads=${THREADS}`, `--time=${seconds}`],
        'run',
      );
      assert.equal(sb.code, 0, `sysbench ${workload}: ${sb.stdout}${sb.stderr}`);
      const rep = parseSysbenchReport(sb.stdout);

      const r = await runCli([
        'run',
        workload,
        '--db',
        db.url,
        '--table-size',
        String(SIZE),
        '--threads',
        String(THREADS),
        '--time',
        String(seconds),
        '--format',
        'json',
      ]);
      if (r.code !== 0) {
        let why = r.stdout.slice(0, 1500);
        try {
          const f = JSON.parse(r.stdout) as RunResult;
          why = `${f.status}: ${f.status_reason}; errors ${JSON.stringify(f.errors)}`;
        } catch {}
        assert.fail(
          `dbsmack ${workload} exited ${r.code}: ${r.stderr}${why}; the database's sessions after it: ${await sessions(db.target, db.name)}`,
        );
      }
      const res = JSON.parse(r.stdout) as RunResult;
      assert.equal(res.status, 'complete', `${workload}: ${res.status_reason}`);
      const s = res.sysbench;
      assert.ok(s);
      const byCode = s.ignored_errors_by_code ?? {};
      assert.equal(
        Object.values(byCode).reduce((a, n) => a + n, 0),
        s.ignored_errors,
        `${workload}: ${JSON.stringify(byCode)}`,
      );
      lines.push(
        `${workload}: sysbench ${rep.transactions} tx, ${rep.ignoredErrors} ignored; ` +
          `dbsmack ${s.transactions} tx, ${s.ignored_errors} ignored ${JSON.stringify(byCode)}`,
      );
      if (TRANSACTIONS.has(workload)) {
        assert.ok(rep.ignoredErrors > 0, `sysbench ${workload} met no contention: ${sb.stdout}`);
        assert.ok(s.ignored_errors > 0, `dbsmack ${workload} counted no ignored error: ${lines.at(-1)}`);
      }
      // what dbsmack ignores is what sysbench's driver ignores on this server
      const allowed = driver === 'postgres' ? ['40P01', '23505', '40001'] : ['1213', '1020', '1205'];
      for (const code of Object.keys(byCode))
        assert.ok(allowed.includes(code), `${workload} ignored ${code}`);
    }
    t.diagnostic(lines.join('\n'));
  });
}

/**
 * What every session in the test's database was doing (PostgreSQL: state and wait event; MariaDB:
 * command, state and seconds), to tell after a stuck run whether its sessions waited on locks or sat idle
 * in a transaction (a client that never sent its next statement).
 */
async function sessions(target: Target, name: string): Promise<string> {
  try {
    const c = await (await loadDriver(target.driver)).connect(target, { connectTimeoutMs: 5000 });
    try {
      const sql =
        target.driver === 'postgres'
          ? `SELECT pid, state, wait_event_type, wait_event, left(query, 50) AS q FROM pg_stat_activity WHERE datname = '${name}' AND pid <> pg_backend_pid()`
          : `SELECT id, command, state, time, left(info, 50) AS q FROM information_schema.processlist WHERE db = '${name}' AND id <> connection_id()`;
      return JSON.stringify(await c.all(sql));
    } finally {
      await c.close();
    }
  } catch (e) {
    return `(could not list them: ${(e as Error).message})`;
  }
}
