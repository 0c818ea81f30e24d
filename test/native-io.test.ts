/**
 * The native I/O core (`?io=native`) against the real servers, beside the JavaScript path (`?io=js`): the
 * same answers from the same statements (counts, affected rows, rows of `all()`, errors and their
 * classification, results spanning many reads, requests queued on one connection), connections killed in
 * flight and idle, the same counts on every kind of workload through the CLI, a PostgreSQL server restarted
 * under a run (a throw-away cluster), and the JavaScript path with a note when the addon cannot be loaded.
 * Without the built addon the native cases are skipped with the reason (and fail under CI=true, which
 * builds it).
 */
import assert from 'node:assert/strict';
import path from 'node:path';
import { type TestContext, test } from 'node:test';
import { loadIoOf } from '../src/driver/connectors.ts';
import type { DbError } from '../src/driver/errors.ts';
import { loadDriver } from '../src/driver/index.ts';
import { nativeUnavailable } from '../src/driver/native-core.ts';
import type { Connection, Target } from '../src/driver/types.ts';
import { parseTarget } from '../src/driver/url.ts';
import type { RunResult } from '../src/metrics/run-result.ts';
import { ROOT, runCli, startCli, tmpDir } from './helpers/cli.ts';
import { expectError } from './helpers/db-errors.ts';
import { startPgCluster } from './helpers/pg-cluster.ts';
import { MYSQL_URL, needServer, PG_URL } from './helpers/servers.ts';

/** True when the addon is there; otherwise the test is skipped with the reason (failed under CI=true). */
function needNative(t: TestContext): boolean {
  const why = nativeUnavailable();
  if (why === undefined) return true;
  if (process.env.CI === 'true') throw new Error(`CI=true and ${why}`);
  t.skip(why);
  process.stderr.write(`# skipped: ${why}\n`);
  return false;
}

const withIo = (t: Target, io: 'native' | 'js'): Target => ({ ...t, params: { ...t.params, io } });

async function load(t: Target): Promise<Connection> {
  const d = await loadDriver(t.driver);
  return d.connect(t, { connectTimeoutMs: 5000, load: true });
}

/** Poll `check` until it is true, at most `tries` times (each an admin query): no fixed sleeps. */
async function until(check: () => Promise<boolean>, what: string, tries = 200): Promise<void> {
  for (let i = 0; i < tries; i++) {
    if (await check()) return;
    await new Promise((r) => setImmediate(r));
  }
  assert.fail(`gave up waiting for ${what}`);
}

/** What a scripted session answers; the two I/O paths must answer alike. */
async function script(c: Connection, table: string): Promise<unknown[]> {
  const out: unknown[] = [];
  const note = async (p: Promise<unknown>): Promise<void> => {
    try {
      out.push(await p);
    } catch (e) {
      const err = e as DbError;
      out.push({ kind: err.kind, code: err.code });
    }
  };
  await c.query(`DROP TABLE IF EXISTS ${table}`);
  await c.query(`CREATE TABLE ${table} (id INT PRIMARY KEY, v VARCHAR(2000), n INT NULL)`);
  const ins = await c.prepare(`INSERT INTO ${table} (id, v, n) VALUES (?, ?, ?)`);
  for (let i = 1; i <= 300; i++) await note(ins.run([i, `${i}:${'x'.repeat(900)}`, i % 3 === 0 ? null : i]));
  await note(ins.run([1, 'dup', 1])); // duplicate key: fatal
  await note(c.query(`UPDATE ${table} SET n = 7 WHERE id <= 10`));
  await note(c.query(`UPDATE ${table} SET n = 7 WHERE id <= 10`)); // matched rows, not changed
  await note(c.query(`DELETE FROM ${table} WHERE id = 1000`));
  const sel = await c.prepare(`SELECT id, v FROM ${table} WHERE id <= ?`);
  await note(sel.run([300])); // ~270 KB: many reads
  await note(sel.run([0]));
  await note(c.query('SELEC 1')); // syntax error; the connection stays usable
  await note(c.all(`SELECT id, n FROM ${table} WHERE id IN (?, ?, ?) ORDER BY id`, [3, 4, 5]));
  await note(c.all(`SELECT COUNT(*) AS c FROM ${table}`));
  // requests queued on one connection are answered in order
  await note(Promise.all([1, 2, 3, 4, 5].map((k) => sel.run([k]))));
  await c.begin();
  await note(c.query(`DELETE FROM ${table} WHERE id <= 5`));
  await c.rollback();
  await note(c.all(`SELECT COUNT(*) AS c FROM ${table}`));
  await ins.close();
  await sel.close();
  await c.query(`DROP TABLE ${table}`);
  return out;
}

for (const driver of ['mysql', 'postgres'] as const) {
  test(`native io (${driver}): the same answers as the JavaScript path, statement times from the core`, async (t) => {
    if (!needNative(t)) return;
    const target = await needServer(t, driver);
    if (!target) return;
    const table = `native_io_${driver}_${process.pid}`;
    const js = await load(withIo(target, 'js'));
    const nat = await load(withIo(target, 'native'));
    try {
      assert.equal(nat.constructor.name, driver === 'mysql' ? 'NativeMysqlConnection' : 'NativePgConnection');
      assert.notEqual(js.constructor.name, nat.constructor.name);
      assert.equal(nat.serverVersion, js.serverVersion);
      const a = await script(js, `${table}_js`);
      const b = await script(nat, `${table}_nat`);
      assert.deepEqual(b, a);
      assert.ok(
        a.some((x) => typeof x === 'object' && x !== null && (x as DbError).kind === 'fatal'),
        'the script met errors',
      );
      await nat.query('SELECT 1');
      assert.ok((nat.timedUs ?? 0) > 0, `statement time from the core: ${nat.timedUs}`);
    } finally {
      await Promise.all([js.close(), nat.close()]);
    }
  });

  test(`native io (${driver}): a session killed in flight and one killed idle reject with kind reconnect`, async (t) => {
    if (!needNative(t)) return;
    const target = await needServer(t, driver);
    if (!target) return;
    const a = await load(withIo(target, 'native'));
    const b = await load(withIo(target, 'native'));
    const d = await loadDriver(driver);
    const admin = await d.connect(target, { connectTimeoutMs: 5000 });
    const kill = (id: number | undefined): Promise<unknown> =>
      driver === 'mysql'
        ? admin.query(`KILL ${Number(id)}`)
        : admin.query(`SELECT pg_terminate_backend(${Number(id)})`);
    const busy = async (id: number | undefined): Promise<boolean> => {
      const rows =
        driver === 'mysql'
          ? await admin.all(
              `SELECT 1 AS x FROM information_schema.processlist WHERE id = ? AND info LIKE 'SELECT SLEEP%'`,
              [id],
            )
          : await admin.all(
              `SELECT 1 AS x FROM pg_stat_activity WHERE pid = ? AND query LIKE 'SELECT pg_sleep%' AND state = 'active'`,
              [id],
            );
      return rows.length > 0;
    };
    const gone = async (id: number | undefined): Promise<boolean> => {
      const rows =
        driver === 'mysql'
          ? await admin.all('SELECT 1 AS x FROM information_schema.processlist WHERE id = ?', [id])
          : await admin.all('SELECT 1 AS x FROM pg_stat_activity WHERE pid = ?', [id]);
      return rows.length === 0;
    };
    try {
      const lost = [
        '1927',
        '2013',
        '57P01',
        'PROTOCOL_CONNECTION_LOST',
        'CONNECTION_LOST',
        'ECONNRESET',
        'EPIPE',
      ];
      const sleeping = expectError(
        a.query(driver === 'mysql' ? 'SELECT SLEEP(10)' : 'SELECT pg_sleep(10)'),
        'reconnect',
        lost,
      );
      const queued = expectError(a.query('SELECT 1'), 'reconnect', lost);
      await until(() => busy(a.sessionId), 'the statement to run');
      await kill(a.sessionId);
      await sleeping;
      await queued;
      await expectError(a.query('SELECT 1'), 'reconnect', [...lost, 'ER_CONNECTION_ALREADY_CLOSED']);
      await kill(b.sessionId);
      await until(() => gone(b.sessionId), 'the idle session to end');
      await expectError(b.query('SELECT 1'), 'reconnect', lost);
    } finally {
      await Promise.all([a.close(), b.close(), admin.close()]);
    }
  });
}

/** Counts of a run that must not depend on the I/O path. */
function counts(r: RunResult): unknown {
  return {
    status: r.status,
    queries: r.totals.queries,
    events: r.totals.events,
    errors: r.totals.errors,
    types: Object.fromEntries(Object.entries(r.types).map(([k, v]) => [k, v.count])),
    sysbench:
      r.sysbench === undefined
        ? undefined
        : {
            read: r.sysbench.read,
            write: r.sysbench.write,
            other: r.sysbench.other,
            tx: r.sysbench.transactions,
          },
  };
}

async function runBoth(args: string[]): Promise<{ native: RunResult; js: RunResult }> {
  const out: Partial<Record<'native' | 'js', RunResult>> = {};
  for (const io of ['native', 'js'] as const) {
    const r = await runCli([...args, '--format', 'json'], { env: { DBSMACK_IO: io } });
    assert.equal(r.code, 0, `${io}: ${r.stderr}`);
    out[io] = JSON.parse(r.stdout) as RunResult;
    assert.equal(out[io]?.target.io, io, 'the RunResult records the I/O path');
  }
  return out as { native: RunResult; js: RunResult };
}

for (const driver of ['mysql', 'postgres'] as const) {
  test(`native io (${driver}): select1, sysbench, smack and TS-module workloads count the same on both paths`, async (t) => {
    if (!needNative(t)) return;
    const target = await needServer(t, driver);
    if (!target) return;
    const url = driver === 'mysql' ? MYSQL_URL : PG_URL;
    const sb = ['--tables', '1', '--table-size', '200'];
    await runCli(['cleanup', 'oltp_read_write', '--db', url, '--tables', '1']);
    const prep = await runCli(['prepare', 'oltp_read_write', '--db', url, ...sb]);
    assert.equal(prep.code, 0, prep.stderr);
    // The smack file loads its table (and makes words.dat) when the table is missing: start without it.
    const dropSmackTable = async (): Promise<void> => {
      const c = await (await loadDriver(driver)).connect(target, { connectTimeoutMs: 5000 });
      await c.query('DROP TABLE IF EXISTS http_auth');
      await c.close();
    };
    await dropSmackTable();
    const data = tmpDir('dbsmack-native-smack-');
    const kv = path.join(ROOT, 'examples', 'kv-zipfian.ts');
    const kvPrep = await runCli(['prepare', kv, '--db', url]);
    assert.equal(kvPrep.code, 0, kvPrep.stderr);
    t.after(async () => {
      await runCli(['cleanup', 'oltp_read_write', '--db', url, '--tables', '1']);
      await runCli(['cleanup', kv, '--db', url]);
      await dropSmackTable();
    });
    const runs: [string, string[]][] = [
      ['select1', ['run', 'select1', '--db', url, '--clients', '3', '--events', '400']],
      ['oltp_read_write', ['run', 'oltp_read_write', '--db', url, ...sb, '--clients', '1', '--events', '40']],
      ['smack', ['run', path.join(ROOT, 'examples', 'select-key.smack'), '2', '30', '--db', url, '-D', data]],
      [
        'module',
        [
          'run',
          path.join(ROOT, 'examples', 'kv-zipfian.ts'),
          '--db',
          url,
          '--clients',
          '2',
          '--events',
          '200',
        ],
      ],
    ];
    for (const [name, args] of runs) {
      const r = await runBoth(args);
      assert.deepEqual(counts(r.native), counts(r.js), name);
      assert.ok(r.native.totals.queries > 0, `${name} ran statements`);
    }
  });
}

test('native io: a PostgreSQL server restarted under a run is reconnected to, on both paths', async (t) => {
  if (!needNative(t)) return;
  const cluster = await startPgCluster(t);
  if (cluster === undefined) return;
  try {
    for (const io of ['native', 'js'] as const) {
      const { child, done } = startCli(
        [
          'run',
          'select1',
          '--db',
          `${cluster.url('postgres')}&io=${io}`,
          '--clients',
          '2',
          '--time',
          '4',
          '--reconnect-timeout',
          '30',
          '--format',
          'json',
          '--progress',
        ],
        {},
      );
      let seen = '';
      await new Promise<void>((resolve) => {
        child.stderr?.on('data', (d: Buffer) => {
          seen += d.toString();
          if (/\[ 1s \]/.test(seen)) resolve();
        });
        child.on('close', () => resolve());
      });
      cluster.restart();
      const r = await done;
      assert.equal(r.code, 0, r.stderr);
      const res = JSON.parse(r.stdout) as RunResult;
      assert.equal(res.target.io, io);
      assert.equal(res.status, 'complete', io);
      assert.ok(res.totals.reconnects >= 1, `${io}: reconnects ${res.totals.reconnects}`);
      assert.ok(
        res.errors.some((e) => e.kind === 'reconnect'),
        JSON.stringify(res.errors),
      );
    }
  } finally {
    cluster.stop();
  }
});

test('native io: without the addon the JavaScript path runs, with a note; ?io= is checked', async (t) => {
  const target = await needServer(t, 'mysql');
  if (!target) return;
  const missing = path.join(tmpDir(), 'no-such-addon.node');
  const r = await runCli(['run', 'select1', '--db', MYSQL_URL, '--events', '20', '--format', 'json'], {
    env: { DBSMACK_NATIVE_ADDON: missing, DBSMACK_IO: '' },
  });
  assert.equal(r.code, 0, r.stderr);
  assert.match(r.stderr, /note: the native I\/O core was not built .*JavaScript I\/O path/);
  const res = JSON.parse(r.stdout) as RunResult;
  assert.equal(res.target.io, 'js');
  assert.equal(res.totals.queries, 20);
  const quiet = await runCli(['run', 'select1', '--db', `${MYSQL_URL}?io=js`, '--events', '5'], {
    env: { DBSMACK_NATIVE_ADDON: missing },
  });
  assert.equal(quiet.code, 0, quiet.stderr);
  assert.doesNotMatch(quiet.stderr, /native I\/O core/, '?io=js asks for no note');
  const bad = await runCli(['run', 'select1', '--db', `${MYSQL_URL}?io=fast`]);
  assert.equal(bad.code, 2);
  assert.match(bad.stderr, /unknown I\/O path 'fast'/);
  assert.throws(() => parseTarget(`${MYSQL_URL}?io=native&connector=mysql2`), /needs the dbsmack connector/);
  assert.equal(loadIoOf(parseTarget(`${MYSQL_URL}?connector=mariadb`)), 'js', 'library connectors are on JS');
});
