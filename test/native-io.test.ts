/**
 * The native I/O core (`?io=native`) against the real servers, beside the JavaScript path (`?io=js`): the
 * same answers from the same statements (counts, affected rows, rows of `all()`, errors and their
 * classification, results spanning many reads, requests queued on one connection), connections killed in
 * flight and idle, the same counts on every kind of workload through the CLI, a PostgreSQL server restarted
 * under a run (a throw-away cluster; at 4 clients, where batches run on their connections' threads, after
 * its sessions were killed under the same run), statement batches, MariaDB's answers without unchanged column
 * definitions (cache metadata) on both paths, and the JavaScript path with a note when the addon cannot be
 * loaded or is of another build. Without the built addon the native cases are skipped with the reason (and fail under CI=true, which
 * builds it).
 */
import assert from 'node:assert/strict';
import { readdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { type TestContext, test } from 'node:test';
import { loadEnvironmentNotes, loadIoOf } from '../src/driver/connectors.ts';
import { DbError } from '../src/driver/errors.ts';
import { loadDriver } from '../src/driver/index.ts';
import { failSharedThread, nativeUnavailable, useNativeDesign } from '../src/driver/native-core.ts';
import { BATCH_MAX, batchMaxAsked, StatementBatch } from '../src/driver/statement-batch.ts';
import type { Connection, PreparedStatement, Target } from '../src/driver/types.ts';
import { parseTarget } from '../src/driver/url.ts';
import { claimEvents } from '../src/engine/client.ts';
import { UsageError } from '../src/errors.ts';
import type { RunResult } from '../src/metrics/run-result.ts';
import { ROOT, runCli, startCli, tmpDir } from './helpers/cli.ts';
import { expectError } from './helpers/db-errors.ts';
import { sharedThreadRunNs, threadsNamed } from './helpers/io-thread.ts';
import { startPgCluster } from './helpers/pg-cluster.ts';
import { need } from './helpers/preconditions.ts';
import { totalCounts } from './helpers/run-counts.ts';
import { MYSQL_URL, needServer, PG_URL, TEST_DATABASES } from './helpers/servers.ts';
import { waitFor, waitForOutput } from './helpers/wait.ts';

/** True when the addon is there; otherwise the test is skipped with the reason (failed under CI=true). */
const needNative = (t: TestContext): boolean => need(t, nativeUnavailable());

const withIo = (t: Target, io: 'native' | 'js'): Target => ({ ...t, params: { ...t.params, io } });

async function load(t: Target): Promise<Connection> {
  const d = await loadDriver(t.driver);
  return d.connect(t, { connectTimeoutMs: 5000, load: true });
}

/**
 * waitFor's polling for what another thread or the server does: every 5 ms (a check that is an admin query
 * takes its round trip besides), for at most 10 s.
 */
const THREAD_WAIT = { timeoutMs: 10_000, everyMs: 5 };

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
      await waitFor('the statement to run', () => busy(a.sessionId), THREAD_WAIT);
      await kill(a.sessionId);
      await sleeping;
      await queued;
      await expectError(a.query('SELECT 1'), 'reconnect', [...lost, 'ER_CONNECTION_ALREADY_CLOSED']);
      await kill(b.sessionId);
      await waitFor('the idle session to end', () => gone(b.sessionId), THREAD_WAIT);
      await expectError(b.query('SELECT 1'), 'reconnect', lost);
    } finally {
      await Promise.all([a.close(), b.close(), admin.close()]);
    }
  });
}

/** Counts of a run that must not depend on the I/O path. */
function counts(r: RunResult): unknown {
  return {
    ...totalCounts(r),
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

/** A sysbench workload's tables made afresh, `sb` its --tables and --table-size (an earlier run may have left others). */
async function freshSysbench(workload: string, url: string, sb: string[]): Promise<void> {
  const tables = sb[sb.indexOf('--tables') + 1] as string;
  await runCli(['cleanup', workload, '--db', url, '--tables', tables]);
  const prep = await runCli(['prepare', workload, '--db', url, ...sb]);
  assert.equal(prep.code, 0, prep.stderr);
}

for (const driver of ['mysql', 'postgres'] as const) {
  test(`native io (${driver}): select1, sysbench, smack and TS-module workloads count the same on both paths`, async (t) => {
    if (!needNative(t)) return;
    const target = await needServer(t, driver);
    if (!target) return;
    const url = driver === 'mysql' ? MYSQL_URL : PG_URL;
    const sb = ['--tables', '1', '--table-size', '200'];
    await freshSysbench('oltp_read_write', url, sb);
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
      await waitForOutput(child, /\[ 1s \]/, 'the first progress line of the run');
      cluster.restart();
      const r = await done;
      // (why a run ended partial is its status_reason, past the first 4,000 characters of the JSON)
      const why = (): string => {
        try {
          const p = JSON.parse(r.stdout) as RunResult;
          return `status ${p.status}: ${p.status_reason ?? '-'}; errors ${JSON.stringify(p.errors)}`;
        } catch {
          return r.stdout.slice(0, 4000);
        }
      };
      assert.equal(r.code, 0, `${io}: ${r.stderr}\n${why()}`);
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

// PostgreSQL at 4 clients, in the two layouts of few clients: by default a load thread each, reading its one
// connection with blocking calls (solo(), native-core.ts SOLO_IO_MAX_CLIENTS), and with --workers 2 two load
// threads of two connections each, whose batches run on the connections' own threads (design D, the core's
// PG_THREADED; `dbsmack pgbench -c 4 -j 2` too). Sessions killed under the run, then the server restarted,
// on a throw-away cluster.
for (const layout of [
  { name: 'a load thread each', options: [] as string[], workers: 4, connThreads: 0 },
  {
    name: "two load threads, batches on their connections' threads",
    options: ['--workers', '2'],
    workers: 2,
    connThreads: 4,
  },
])
  test(`native io (postgres, 4 clients, ${layout.name}): reconnects after sessions are killed and the server restarts`, async (t) => {
    if (!needNative(t)) return;
    const cluster = await startPgCluster(t);
    if (cluster === undefined) return;
    const url = `${cluster.url('postgres')}&io=native`;
    let admin: Connection | undefined;
    try {
      admin = await (await loadDriver('postgres')).connect(parseTarget(url), { connectTimeoutMs: 5000 });
      const { child, done } = startCli(
        [
          'run',
          'select1',
          '--db',
          url,
          '--clients',
          '4',
          '--time',
          '6',
          '--reconnect-timeout',
          '30',
          '--format',
          'json',
          '--progress',
          ...layout.options,
        ],
        {},
      );
      await waitForOutput(child, /\[ 1s \]/, 'the first progress line of the run');
      const pid = child.pid as number;
      assert.equal(
        threadsNamed('dbsmack-conn', pid),
        layout.connThreads,
        'threads of connections (design D)',
      );
      const db = admin;
      const sessions = async (): Promise<number[]> =>
        (
          await db.all(
            `SELECT pid FROM pg_stat_activity WHERE backend_type = 'client backend' AND pid <> pg_backend_pid()`,
          )
        ).map((r) => Number(r.pid));
      const first = await sessions();
      assert.equal(first.length, 4, `the run's sessions: ${first}`);
      for (const s of first) await db.query(`SELECT pg_terminate_backend(${s})`);
      // four new sessions, none of the old
      await waitFor(
        'the run to reconnect',
        async () => {
          const now = await sessions();
          return now.length === 4 && now.every((s) => !first.includes(s));
        },
        THREAD_WAIT,
      );
      await db.close();
      admin = undefined;
      cluster.restart();
      const r = await done;
      assert.equal(r.code, 0, r.stderr);
      const res = JSON.parse(r.stdout) as RunResult;
      assert.equal(res.target.io, 'native');
      assert.equal(res.workers, layout.workers);
      assert.equal(res.status, 'complete', res.status_reason);
      // each connection lost twice: killed, then by the restart
      assert.ok(res.totals.reconnects >= 8, `reconnects ${res.totals.reconnects}`);
      assert.ok(
        res.errors.some((e) => e.kind === 'reconnect'),
        JSON.stringify(res.errors),
      );
      batchCounts(res);
      // the run went on after the restart (about 2 s in, done in well under a second on the throw-away
      // cluster; the run lasts 6 s): its last interval ran statements
      const last = res.intervals.at(-1);
      assert.ok((last?.queries ?? 0) > 0, `the last interval: ${JSON.stringify(last)}`);
    } finally {
      await admin?.close();
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
  // An addon of another build (here a stand-in of interface 1, the one before open() took option bits):
  // not used, and said so.
  const other = path.join(tmpDir(), 'other-build.cjs');
  writeFileSync(other, 'module.exports = { interface: 1, init() {}, open() { return 0; } };\n');
  const old = await runCli(['run', 'select1', '--db', MYSQL_URL, '--events', '20', '--format', 'json'], {
    env: { DBSMACK_NATIVE_ADDON: other, DBSMACK_IO: '' },
  });
  assert.equal(old.code, 0, old.stderr);
  assert.match(
    old.stderr,
    /note: the native I\/O core in .* is of another dbsmack build \(interface 1, this one needs \d+\)/,
  );
  assert.equal((JSON.parse(old.stdout) as RunResult).target.io, 'js');
  assert.equal((JSON.parse(old.stdout) as RunResult).totals.queries, 20);
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

// ---- statement batches (ClientHandler.single on the native core) -------------------------------------------

/** A batch of `stmt` executions, one per parameter list. */
function batchOf(stmt: PreparedStatement, params: unknown[][], budgetUs = 1e6): StatementBatch {
  const b = new StatementBatch();
  for (const p of params) b.add(stmt.encode?.(p) as Uint8Array);
  b.budgetUs = budgetUs;
  return b;
}

// The ways the core runs a batch: from the worker's epoll_wait (B), on the connection's own thread (D),
// (the default, 3, where the worker has one connection, as here: the test's other connection is on the
// JavaScript path) with blocking reads on the worker's thread, in slices that let its event loop run, and
// (4) on the core's shared I/O thread, which takes every second native connection's batches (the test opens
// a spare one first, which stays on the worker's thread).
const DESIGNS = [
  ['epoll', 0],
  ['thread', 2],
  ['one connection', 3],
  ['shared thread', 4],
] as const;

/** Design 4: a native connection opened first, so that the test's own is the second (the shared thread's). */
async function spareFor(design: number, target: Target): Promise<Connection | undefined> {
  return design === 4 ? await load(withIo(target, 'native')) : undefined;
}

/** Run the test's native connections on `design`, and on the environment's design after it. */
function onDesign(t: TestContext, design: number): void {
  useNativeDesign(design);
  t.after(() => useNativeDesign(undefined));
}

for (const [how, design] of DESIGNS)
  for (const driver of ['mysql', 'postgres'] as const) {
    test(`native io (${driver}, batches ${how}): a batch runs its statements in turn, each timed, and ends at its deadline or first error`, async (t) => {
      if (!needNative(t)) return;
      const target = await needServer(t, driver);
      if (!target) return;
      onDesign(t, design);
      const table = `native_batch_${driver}_${process.pid}`;
      const spare = await spareFor(design, target);
      const nat = await load(withIo(target, 'native'));
      const js = await load(withIo(target, 'js'));
      try {
        assert.equal(typeof nat.runBatch, 'function');
        assert.equal(js.runBatch, undefined, 'only native connections batch');
        assert.throws(() => useNativeDesign(design === 0 ? 2 : 0), /init: connections are open/);
        await nat.query(`DROP TABLE IF EXISTS ${table}`);
        await nat.query(`CREATE TABLE ${table} (id INT PRIMARY KEY)`);
        const ins = await nat.prepare(`INSERT INTO ${table} (id) VALUES (?)`);
        // every statement's result: affected rows, its own time, ends in order
        const b = batchOf(ins, [[1], [2], [3], [4]]);
        const threads = (): number => readdirSync('/proc/self/task').length;
        const before = threads();
        const shared = sharedThreadRunNs();
        await nat.runBatch?.(b);
        // design D runs it on a thread of the connection's own, which stays until the connection closes
        if (design === 2) assert.ok(threads() > before, `a thread for the batch: ${before} → ${threads()}`);
        // design 4 on the shared thread
        if (design === 4) assert.ok(shared >= 0 && sharedThreadRunNs() > shared, 'the shared thread ran it');
        assert.equal(b.done, 4);
        assert.equal(b.error, undefined);
        for (let i = 0; i < 4; i++) {
          assert.equal(b.status(i), 0);
          assert.equal(b.value(i), 1);
          assert.ok(b.latencyUs(i) > 0 && b.latencyUs(i) <= b.endUs(i), `statement ${i} timed`);
          if (i > 0) assert.ok(b.endUs(i) >= b.endUs(i - 1) + b.latencyUs(i) - 1, 'one at a time');
        }
        const sel = await nat.prepare(`SELECT id FROM ${table} WHERE id <= ?`);
        const rows = batchOf(sel, [[0], [2], [4]]);
        await nat.runBatch?.(rows);
        assert.deepEqual([rows.value(0), rows.value(1), rows.value(2)], [0, 2, 4], 'rows counted');
        // a deadline already passed: the first statement runs, no other starts
        const late = batchOf(sel, [[1], [1], [1]], 0);
        await nat.runBatch?.(late);
        assert.equal(late.done, 1);
        assert.equal(late.error, undefined);
        // events of three statements (ClientHandler.sequence): the deadline is looked at only where an event
        // starts, so the first event's three statements all run, and no other event starts
        const lateGroups = batchOf(sel, [[1], [2], [3], [1], [2], [3]], 0);
        lateGroups.group = 3;
        await nat.runBatch?.(lateGroups);
        assert.equal(lateGroups.done, 3);
        assert.deepEqual([lateGroups.value(0), lateGroups.value(1), lateGroups.value(2)], [1, 2, 3]);
        // a server error mid-batch ends it there, classified as on the per-statement path
        const dup = batchOf(ins, [[10], [11], [1], [12]]);
        await nat.runBatch?.(dup);
        assert.equal(dup.done, 3);
        assert.deepEqual([dup.status(0), dup.status(1), dup.status(2)], [0, 0, 1]);
        const single = await js.prepare(`INSERT INTO ${table} (id) VALUES (?)`);
        const perStatement = await single.run([1]).then(
          () => assert.fail('a duplicate key'),
          (e: DbError) => ({ kind: e.kind, code: e.code, sqlState: e.sqlState }),
        );
        const err = dup.error as DbError;
        assert.deepEqual({ kind: err.kind, code: err.code, sqlState: err.sqlState }, perStatement);
        await single.close();
        // the connection goes on after the error
        const after = batchOf(sel, [[12]]);
        await nat.runBatch?.(after);
        assert.equal(after.value(0), 6, 'rows 1..4, 10 and 11: 12 never ran');
        await ins.close();
        await sel.close();
        await nat.query(`DROP TABLE ${table}`);
      } finally {
        await Promise.all([js.close(), nat.close(), spare?.close()]);
      }
    });

    test(`native io (${driver}, batches ${how}): a session killed in the middle of a batch ends it with kind reconnect`, async (t) => {
      if (!needNative(t)) return;
      const target = await needServer(t, driver);
      if (!target) return;
      onDesign(t, design);
      const spare = await spareFor(design, target);
      const a = await load(withIo(target, 'native'));
      const d = await loadDriver(driver);
      const admin = await d.connect(target, { connectTimeoutMs: 5000 });
      try {
        const sleep = await a.prepare(driver === 'mysql' ? 'SELECT SLEEP(?)' : 'SELECT pg_sleep(?)');
        const b = batchOf(sleep, [[0], [0], [10], [0]]);
        const running = a.runBatch?.(b);
        await waitFor(
          'the third statement to run',
          async () => {
            const rows =
              driver === 'mysql'
                ? await admin.all(
                    `SELECT 1 AS x FROM information_schema.processlist WHERE id = ? AND time_ms > 0 AND info LIKE 'SELECT SLEEP%'`,
                    [a.sessionId],
                  )
                : await admin.all(
                    `SELECT 1 AS x FROM pg_stat_activity WHERE pid = ? AND query LIKE 'SELECT pg_sleep%' AND state = 'active'`,
                    [a.sessionId],
                  );
            return rows.length > 0 && b.done === 2;
          },
          THREAD_WAIT,
        );
        await (driver === 'mysql'
          ? admin.query(`KILL ${Number(a.sessionId)}`)
          : admin.query(`SELECT pg_terminate_backend(${Number(a.sessionId)})`));
        await running;
        assert.equal(b.done, 3);
        assert.equal(b.status(2), 3, 'lost');
        assert.equal(b.error?.kind, 'reconnect');
        const again = batchOf(sleep, [[0]]);
        await a.runBatch?.(again);
        assert.equal(again.error?.kind, 'reconnect', 'a later batch fails with the connection');
        if (spare !== undefined) {
          // design 4: a connection aborted (a stop, Ctrl-C) while the shared thread runs its batch: the
          // thread lets it go at once, and runs the next connection's batches as before
          await a.close(); // (the shared thread's: the next one opened is again)
          const c = await load(withIo(target, 'native'));
          const long = await c.prepare(driver === 'mysql' ? 'SELECT SLEEP(?)' : 'SELECT pg_sleep(?)');
          const cut = batchOf(long, [[0], [10]]);
          c.runBatch?.(cut).catch(() => {});
          await waitFor('the first statement to end', () => cut.done === 1, THREAD_WAIT);
          const t0 = Date.now();
          assert.equal(typeof c.abort, 'function');
          c.abort?.();
          assert.ok(Date.now() - t0 < 2000, `abort returned in ${Date.now() - t0} ms`);
          const next = await load(withIo(target, 'native'));
          const one = await next.prepare('SELECT 1');
          const ok = batchOf(one, [[], [], []]);
          const shared = sharedThreadRunNs();
          await next.runBatch?.(ok);
          assert.deepEqual([ok.done, ok.error, ok.value(2)], [3, undefined, 1]);
          assert.ok(sharedThreadRunNs() > shared, 'on the shared thread');
          await next.close();
        }
      } finally {
        await Promise.all([a.close(), admin.close(), spare?.close()]);
      }
    });
  }

// Design 3 (the default) chooses per batch: MySQL's on the connection's own thread (D) wherever the load
// thread has 2 connections or more (up to 8 until 2026-12-06, up to 24 until 2026-12-07: the core's
// batchOnThread says why); PostgreSQL's from the load thread's epoll_wait (B). 26 connections here, more than
// the old bounds.
const MANY = 26;
for (const driver of ['mysql', 'postgres'] as const)
  test(`native io (${driver}): by default a load thread's ${MANY} connections run their batches ${driver === 'mysql' ? 'each on a thread of its own' : 'from its epoll_wait'}`, async (t) => {
    if (!needNative(t)) return;
    const target = await needServer(t, driver);
    if (!target) return;
    onDesign(t, 3);
    const conns = await Promise.all(Array.from({ length: MANY }, () => load(withIo(target, 'native'))));
    try {
      const before = threadsNamed('dbsmack-conn');
      const stmts = await Promise.all(conns.map((c) => c.prepare('SELECT 1')));
      const batches = stmts.map((s) => batchOf(s, [[], [], []]));
      await Promise.all(conns.map((c, i) => c.runBatch?.(batches[i] as StatementBatch)));
      for (const b of batches) assert.deepEqual([b.done, b.error, b.value(2)], [3, undefined, 1]);
      assert.equal(
        threadsNamed('dbsmack-conn') - before,
        driver === 'mysql' ? MANY : 0,
        'threads of connections made',
      );
      await Promise.all(stmts.map((s) => s.close()));
    } finally {
      await Promise.all(conns.map((c) => c.close()));
    }
  });

for (const driver of ['mysql', 'postgres'] as const)
  test(`native io (${driver}, shared thread): if the shared I/O thread fails, its batches end as lost and later ones run on the load thread`, async (t) => {
    if (!needNative(t)) return;
    const target = await needServer(t, driver);
    if (!target) return;
    onDesign(t, 4);
    const open = new Set<Connection>();
    const connect = async (): Promise<Connection> => {
      const c = await load(withIo(target, 'native'));
      open.add(c);
      return c;
    };
    const close = async (c: Connection | undefined): Promise<void> => {
      if (c !== undefined && open.delete(c)) await c.close();
    };
    const admin = await (await loadDriver(driver)).connect(target, { connectTimeoutMs: 5000 });
    try {
      const spare = await connect(); // (the first stays on this thread, the second is the shared thread's)
      const a = await connect();
      const sleep = await a.prepare(driver === 'mysql' ? 'SELECT SLEEP(?)' : 'SELECT pg_sleep(?)');
      const b = batchOf(sleep, [[0], [10], [0]]);
      const shared = sharedThreadRunNs();
      const running = a.runBatch?.(b);
      await waitFor(
        'the first statement to end',
        () => b.done === 1 && sharedThreadRunNs() > shared,
        THREAD_WAIT,
      );
      // the thread holds the batch, waiting for the 10 s statement's reply
      assert.equal(failSharedThread(), true, 'a shared thread was running');
      await running;
      assert.equal(b.done, 2, 'the statement in flight ended, no other started');
      assert.equal(b.status(1), 3, 'lost');
      assert.equal(b.error?.kind, 'reconnect');
      const later = batchOf(sleep, [[0]]);
      await a.runBatch?.(later);
      assert.equal(later.error?.kind, 'reconnect', 'the connection went with the thread');
      await waitFor('the shared thread to end', () => sharedThreadRunNs() === -1, THREAD_WAIT);
      assert.equal(failSharedThread(), false, 'none running now');
      await (driver === 'mysql'
        ? admin.query(`KILL ${Number(a.sessionId)}`)
        : admin.query(`SELECT pg_terminate_backend(${Number(a.sessionId)})`));
      // the next connection opened is again the one the shared thread would take: it runs on this thread
      await close(a);
      const c = await connect();
      const one = await c.prepare('SELECT 1');
      const ok = batchOf(one, [[], [], []]);
      await c.runBatch?.(ok);
      assert.deepEqual([ok.done, ok.error, ok.value(2)], [3, undefined, 1]);
      await close(c);
      await close(spare);
      // with no connection open, the next init makes a new shared thread, which runs batches again
      useNativeDesign(4);
      await waitFor(
        'a shared thread again (named by itself once started)',
        () => sharedThreadRunNs() >= 0,
        THREAD_WAIT,
      );
      await connect();
      const d = await connect();
      const again = await d.prepare('SELECT 1');
      const before = sharedThreadRunNs();
      const ok2 = batchOf(again, [[], []]);
      await d.runBatch?.(ok2);
      assert.deepEqual([ok2.done, ok2.error], [2, undefined]);
      assert.ok(sharedThreadRunNs() > before, 'on the new shared thread');
    } finally {
      await Promise.all([...open].map((c) => close(c)));
      await admin.close();
    }
  });

test('native io: a StatementBatch keeps its statements end to end, grows, and holds at most BATCH_MAX', () => {
  const b = new StatementBatch();
  const big = Buffer.alloc(6000, 7);
  b.add(Buffer.from([1, 2, 3]));
  b.add(big);
  b.add(big); // past the first 8 KiB: the buffer grows, what was there is kept
  assert.equal(b.count, 3);
  assert.deepEqual([...b.offsets.subarray(0, 4)], [0, 3, 6003, 12003]);
  assert.deepEqual([...b.bytes.subarray(0, 4)], [1, 2, 3, 7]);
  assert.equal(b.bytes[12002], 7);
  b.results[0] = 2;
  b.error = new DbError('fatal', 'X', 'x');
  b.reset();
  assert.equal(b.count, 0);
  assert.equal(b.done, 0);
  assert.equal(b.error, undefined);
  for (let i = 0; i < BATCH_MAX; i++) b.add(Buffer.from([i & 0xff]));
  assert.throws(() => b.add(Buffer.from([0])), new RegExp(`at most ${BATCH_MAX} statements`));
  const lost = new DbError('reconnect', 'CONNECTION_LOST', 'gone');
  b.failFirst(3, lost);
  assert.deepEqual([b.done, b.status(0), b.error], [1, 3, lost]);
});

test('native io: DBSMACK_BATCH_MAX takes a whole number from 16 to 4096 and ignores anything else', () => {
  assert.deepEqual(
    ['16', '2048', '4096', '15', '4097', '0', '-32', '64.5', '1e3', ' 64', '', 'many', undefined].map((v) =>
      batchMaxAsked(v),
    ),
    [
      16,
      2048,
      4096,
      undefined,
      undefined,
      undefined,
      undefined,
      undefined,
      undefined,
      undefined,
      undefined,
      undefined,
      undefined,
    ],
  );
  // this process's own (the test runner passes none): the default
  if (process.env.DBSMACK_BATCH_MAX === undefined) assert.equal(BATCH_MAX, 256);
});

test("native io: the load path's environment: DBSMACK_IO and DBSMACK_BATCH refuse what they do not take, the measuring knobs say they ignore it", async () => {
  assert.deepEqual(loadEnvironmentNotes({}), []);
  const good = {
    DBSMACK_IO: 'js',
    DBSMACK_BATCH: 'off',
    DBSMACK_NATIVE_DESIGN: '2',
    DBSMACK_BATCH_MAX: '2048',
    DBSMACK_NATIVE_YIELDS: '0',
    DBSMACK_NATIVE_FOLLOW: '0',
    DBSMACK_LOAD_THREADS: 'workers',
  };
  assert.deepEqual(loadEnvironmentNotes(good), []);
  // empty is unset (the tests clear DBSMACK_IO that way)
  assert.deepEqual(loadEnvironmentNotes(Object.fromEntries(Object.keys(good).map((k) => [k, '']))), []);
  // as the core reads the count: strtol to the end, not negative
  for (const y of ['3', '+3', ' 3', '200']) {
    assert.deepEqual(loadEnvironmentNotes({ DBSMACK_NATIVE_YIELDS: y }), []);
    assert.deepEqual(loadEnvironmentNotes({ DBSMACK_NATIVE_FOLLOW: y }), []);
  }
  for (const [name, value, said] of [
    [
      'DBSMACK_NATIVE_DESIGN',
      '7',
      /DBSMACK_NATIVE_DESIGN=7 is ignored \(it takes a design of the native core, 0 to 4\)/,
    ],
    [
      'DBSMACK_BATCH_MAX',
      '99999',
      /DBSMACK_BATCH_MAX=99999 is ignored \(it takes a whole number from 16 to 4096\): batches of up to \d+ statements/,
    ],
    ['DBSMACK_BATCH_MAX', '1e3', /DBSMACK_BATCH_MAX=1e3 is ignored/],
    ['DBSMACK_NATIVE_YIELDS', '-1', /DBSMACK_NATIVE_YIELDS=-1 is ignored/],
    ['DBSMACK_NATIVE_YIELDS', 'two', /DBSMACK_NATIVE_YIELDS=two is ignored/],
    [
      'DBSMACK_NATIVE_FOLLOW',
      '-16',
      /DBSMACK_NATIVE_FOLLOW=-16 is ignored \(it takes a whole number, 0 for never\): threads waiting for one local server's reply look at every 16th read/,
    ],
    ['DBSMACK_LOAD_THREADS', 'main', /DBSMACK_LOAD_THREADS=main is ignored \(it takes only workers\)/],
  ] as const) {
    const notes = loadEnvironmentNotes({ [name]: value });
    assert.equal(notes.length, 1, `${name}=${value}`);
    assert.match(notes[0] as string, said);
  }
  assert.throws(
    () => loadEnvironmentNotes({ DBSMACK_IO: 'JS' }),
    (e: Error) => e instanceof UsageError && /unknown I\/O path 'JS' in DBSMACK_IO/.test(e.message),
  );
  assert.throws(
    () => loadEnvironmentNotes({ DBSMACK_BATCH: 'no' }),
    (e: Error) => e instanceof UsageError && /unknown batch setting 'no' in DBSMACK_BATCH/.test(e.message),
  );
  // from the command line, on SQLite (no server): the refusal before anything runs, the note once on stderr
  const db = `sqlite:${path.join(tmpDir('dbsmack-envknobs-'), 'k.db')}`;
  const run = ['run', 'select1', '--db', db, '--events', '50', '--no-history'];
  const refused = await runCli(run, { env: { DBSMACK_IO: 'JS' } });
  assert.equal(refused.code, 2, refused.stderr);
  assert.match(refused.stderr, /unknown I\/O path 'JS' in DBSMACK_IO/);
  assert.doesNotMatch(refused.stderr, /internal/i);
  const noted = await runCli(run, { env: { DBSMACK_BATCH_MAX: '99999' } });
  assert.equal(noted.code, 0, noted.stderr);
  assert.equal(noted.stderr.match(/DBSMACK_BATCH_MAX=99999 is ignored/g)?.length, 1, noted.stderr);
  assert.match(noted.stdout, /totals: 50 queries/, 'the run went on with the default');
});

test('native io: events are claimed in batches without passing --events; ?batch= is checked', () => {
  const ctrl = new Int32Array(new SharedArrayBuffer(8));
  assert.equal(claimEvents(ctrl, 10, 4), 4);
  assert.equal(claimEvents(ctrl, 10, 4), 4);
  assert.equal(claimEvents(ctrl, 10, 4), 2);
  assert.equal(claimEvents(ctrl, 10, 4), 0);
  assert.equal(ctrl[1], 10);
  Atomics.sub(ctrl, 1, 3); // a batch gave three back
  assert.equal(claimEvents(ctrl, 10, 4), 3);
  assert.throws(() => parseTarget(`${MYSQL_URL}?batch=maybe`), /unknown batch setting 'maybe'/);
  assert.equal(parseTarget(`${PG_URL}?batch=off`).params.batch, 'off');
});

/** Counts of a run, its intervals' sums included (they must add up to the totals). */
function batchCounts(r: RunResult): unknown {
  const iv = r.intervals.reduce((a, i) => a + i.queries, 0);
  assert.equal(iv, r.totals.queries, 'the intervals add up to the totals');
  return counts(r);
}

for (const driver of ['mysql', 'postgres'] as const) {
  test(`native io (${driver}): batched events count as the per-statement and JavaScript paths do`, async (t) => {
    if (!needNative(t)) return;
    const target = await needServer(t, driver);
    if (!target) return;
    const url = driver === 'mysql' ? MYSQL_URL : PG_URL;
    const sb = ['--tables', '2', '--table-size', '300'];
    await freshSysbench('oltp_point_select', url, sb);
    t.after(() => runCli(['cleanup', 'oltp_point_select', '--db', url, '--tables', '2']));
    const runs: [string, string[]][] = [
      ['select1 events', ['run', 'select1', '--db', url, '--clients', '4', '--events', '3001']],
      ['select1 rounds', ['run', 'select1', '--db', url, '--clients', '3', '--rounds', '700']],
      [
        'select1 warm-up',
        ['run', 'select1', '--db', url, '--clients', '2', '--events', '500', '--warmup', '1'],
      ],
      [
        'point select',
        ['run', 'oltp_point_select', '--db', url, ...sb, '--clients', '3', '--events', '2000'],
      ],
      // ten clients in one load thread (design 4: five of them on the shared I/O thread)
      [
        'point select, one thread',
        [
          'run',
          'oltp_point_select',
          '--db',
          url,
          ...sb,
          '--clients',
          '10',
          '--workers',
          '1',
          '--events',
          '2000',
        ],
      ],
      ['update index', ['run', 'oltp_update_index', '--db', url, ...sb, '--clients', '2', '--events', '500']],
      // whole transactions as sequences (BEGIN, the body, COMMIT: OltpClient.transaction)
      ['read only', ['run', 'oltp_read_only', '--db', url, ...sb, '--clients', '3', '--events', '300']],
      ['read write', ['run', 'oltp_read_write', '--db', url, ...sb, '--clients', '1', '--events', '150']],
      // text INSERTs, one an event (SingleStatement.sql)
      ['insert', ['run', 'oltp_insert', '--db', url, ...sb, '--clients', '2', '--events', '400']],
      [
        'write only, no transactions',
        ['run', 'oltp_write_only', '--db', url, ...sb, '--skip-trx=on', '--clients', '1', '--events', '150'],
      ],
      // --db-ps-mode=disable: every statement a text query with its values in the SQL, batched as such
      [
        'read write, text',
        [
          'run',
          'oltp_read_write',
          '--db',
          url,
          ...sb,
          '--db-ps-mode',
          'disable',
          '--clients',
          '1',
          '--events',
          '150',
        ],
      ],
      // one SELECT an event, batched as single events: prepared, and as text
      [
        'random points',
        [
          'run',
          'select_random_points',
          '--db',
          url,
          '--table-size',
          '300',
          '--clients',
          '2',
          '--events',
          '600',
        ],
      ],
      [
        'random ranges, text',
        [
          'run',
          'select_random_ranges',
          '--db',
          url,
          '--table-size',
          '300',
          '--db-ps-mode=disable',
          '--clients',
          '2',
          '--events',
          '600',
        ],
      ],
      [
        'point select, text',
        [
          'run',
          'oltp_point_select',
          '--db',
          url,
          ...sb,
          '--db-ps-mode=disable',
          '--clients',
          '2',
          '--events',
          '1000',
        ],
      ],
    ];
    for (const [name, args] of runs) {
      const out: Record<string, unknown> = {};
      for (const [arm, env, more] of [
        ['batch', { DBSMACK_IO: 'native', DBSMACK_BATCH: 'on' }, []],
        ['batch epoll', { DBSMACK_IO: 'native', DBSMACK_BATCH: 'on', DBSMACK_NATIVE_DESIGN: '0' }, []],
        ['batch thread', { DBSMACK_IO: 'native', DBSMACK_BATCH: 'on', DBSMACK_NATIVE_DESIGN: '2' }, []],
        // one load thread, its batches on the connections' threads and at most 32 statements long (a
        // read_write transaction is 20: an event longer than the most is not batched with others)
        [
          'batch thread, short batches',
          { DBSMACK_IO: 'native', DBSMACK_BATCH: 'on', DBSMACK_NATIVE_DESIGN: '2', DBSMACK_BATCH_MAX: '32' },
          ['--workers', '1'],
        ],
        // one load thread, every second client's batches on the core's shared I/O thread
        [
          'batch shared thread',
          { DBSMACK_IO: 'native', DBSMACK_BATCH: 'on', DBSMACK_NATIVE_DESIGN: '4' },
          ['--workers', '1'],
        ],
        ['per statement', { DBSMACK_IO: 'native', DBSMACK_BATCH: 'off' }, []],
        ['js', { DBSMACK_IO: 'js' }, []],
      ] as const) {
        const r = await runCli([...args, ...more, '--format', 'json'], { env });
        assert.equal(r.code, 0, `${name} ${arm}: ${r.stderr}`);
        const res = JSON.parse(r.stdout) as RunResult;
        out[arm] = batchCounts(res);
        // the result says how many events ran in batches: most on the batch arm (a client's first event,
        // and events drawn for a batch its budget cut short, run on their own), none on the others
        const batched = res.client_stats.reduce((n, c) => n + (c.batched ?? -1), 0);
        if (arm.startsWith('batch'))
          assert.ok(batched > res.totals.events / 2, `${name} ${arm}: ${batched} batched`);
        else assert.equal(batched, 0, `${name} ${arm}`);
      }
      for (const [arm, got] of Object.entries(out)) assert.deepEqual(got, out.js, `${name} ${arm}`);
    }
    // by time, with intervals: the intervals add up, nothing is lost at the deadline
    const timed = await runCli(
      ['run', 'select1', '--db', url, '--clients', '4', '--time', '2', '--format', 'json'],
      { env: { DBSMACK_IO: 'native' } },
    );
    assert.equal(timed.code, 0, timed.stderr);
    const res = JSON.parse(timed.stdout) as RunResult;
    batchCounts(res);
    const text = await runCli(['run', 'select1', '--db', url, '--clients', '2', '--events', '400']);
    assert.match(text.stdout, /dbsmack CPU: .*; native I\/O, \d+% of events in statement batches$/m);
    assert.ok(res.intervals.length >= 2, `intervals: ${res.intervals.length}`);
    assert.ok(res.elapsed_s < 2.5, `the deadline held: ${res.elapsed_s}`);
  });
}

/** The three I/O arms a module's counts are compared across: batches on the core, one at a time on it, JS. */
const ARMS = [
  ['batch', { DBSMACK_IO: 'native', DBSMACK_BATCH: 'on' }],
  ['per statement', { DBSMACK_IO: 'native', DBSMACK_BATCH: 'off' }],
  ['js', { DBSMACK_IO: 'js' }],
] as const;

/**
 * `mod` prepared afresh on `table`, then run by 2 clients for `rounds` rounds with the duplicate key of
 * `driver` ignored, under one arm's environment: its result.
 */
async function ignoringDuplicates(
  driver: 'mysql' | 'postgres',
  url: string,
  mod: string,
  table: string[],
  rounds: number,
  [arm, env]: readonly [string, Readonly<Record<string, string>>],
): Promise<RunResult> {
  const prep = await runCli(['prepare', mod, '--db', url, ...table]);
  assert.equal(prep.code, 0, prep.stderr);
  const dup = driver === 'mysql' ? '1062' : '23505';
  const args = ['--clients', '2', '--rounds', String(rounds), '--ignore-errors', dup, '--format', 'json'];
  const r = await runCli(['run', mod, '--db', url, ...table, ...args], { env });
  assert.equal(r.code, 0, `${arm}: ${r.stderr}`);
  return JSON.parse(r.stdout) as RunResult;
}

for (const driver of ['mysql', 'postgres'] as const) {
  test(`native io (${driver}): errors in the middle of batches take the error policy as on the other paths`, async (t) => {
    if (!needNative(t)) return;
    const target = await needServer(t, driver);
    if (!target) return;
    const url = driver === 'mysql' ? MYSQL_URL : PG_URL;
    const mod = path.join(ROOT, 'test', 'fixtures', 'workloads', 'single-dup.ts');
    const table = ['--table', `single_dup_${process.pid}`];
    t.after(() => runCli(['cleanup', mod, '--db', url, ...table]));
    const out: Record<string, unknown> = {};
    for (const a of ARMS) {
      const [arm, env] = a;
      // skipped by --ignore-errors: every 7th event of each client fails and the run goes on
      const res = await ignoringDuplicates(driver, url, mod, table, 300, a);
      out[arm] = { ...(batchCounts(res) as object), errorCodes: res.errors.map((e) => [e.code, e.count]) };
      assert.equal(res.totals.errors, 2 * Math.floor(300 / 7), arm);
      // not ignored: the first one stops the run, as on the per-statement path
      const stop = await runCli(['run', mod, '--db', url, ...table, '--rounds', '300', '--format', 'json'], {
        env,
      });
      assert.equal(stop.code, 4, `${arm}: ${stop.stderr}`);
      const stopped = JSON.parse(stop.stdout) as RunResult;
      out[`${arm} stop`] = [
        stopped.status,
        stopped.totals.events,
        stopped.errors.map((e) => [e.code, e.kind]),
      ];
    }
    assert.deepEqual(out.batch, out.js);
    assert.deepEqual(out['per statement'], out.js);
    assert.deepEqual(out['batch stop'], out['js stop']);
    assert.deepEqual(out['per statement stop'], out['js stop']);
    // a draw that throws: the events drawn before it run, then it fails as the workload's error
    const throws = path.join(ROOT, 'test', 'fixtures', 'workloads', 'single-throws.ts');
    const thrown: Record<string, unknown> = {};
    for (const [arm, env] of [
      ['batch', { DBSMACK_IO: 'native', DBSMACK_BATCH: 'on' }],
      ['js', { DBSMACK_IO: 'js' }],
    ] as const) {
      const r = await runCli(['run', throws, '--db', url, '--time', '5', '--format', 'json'], { env });
      assert.equal(r.code, 4, `${arm}: ${r.stderr}`);
      const res = JSON.parse(r.stdout) as RunResult;
      thrown[arm] = [
        res.status,
        res.totals.queries,
        res.totals.events,
        res.errors.map((e) => [e.message, e.kind]),
      ];
    }
    assert.deepEqual(thrown.batch, thrown.js);
    assert.deepEqual(thrown.js, ['partial', 50, 50, [['the 51st draw refuses', 'fatal']]]);
  });
}

for (const driver of ['mysql', 'postgres'] as const) {
  test(`native io (${driver}): sequences failing in their middle count as the per-statement and JavaScript paths do`, async (t) => {
    if (!needNative(t)) return;
    const target = await needServer(t, driver);
    if (!target) return;
    const url = driver === 'mysql' ? MYSQL_URL : PG_URL;
    const mod = path.join(ROOT, 'test', 'fixtures', 'workloads', 'sequence-dup.ts');
    const table = ['--table', `sequence_dup_${process.pid}`];
    t.after(() => runCli(['cleanup', mod, '--db', url, ...table]));
    // prepared statements (ctx.runSequence), then the same as text queries (ctx.querySequence)
    for (const text of ['off', 'on']) {
      const out: Record<string, unknown> = {};
      for (const a of ARMS) {
        const arm = `${a[0]}${text === 'on' ? ', text' : ''}`;
        const res = await ignoringDuplicates(driver, url, mod, [...table, '--text', text], 100, a);
        // every 5th event fails at its third statement: 20 of each client's 100, skipped by --ignore-errors
        assert.equal(res.totals.errors, 40, `${arm}: ${JSON.stringify(res.errors)}`);
        const byType = Object.fromEntries(
          Object.entries(res.types).map(([k, s]) => [k, [s.count, s.errors]]),
        );
        assert.deepEqual(
          byType,
          { select: [200, 0], insert: [200, 0], insert_late: [160, 40], insert_after: [160, 0] },
          arm,
        );
        out[arm] = batchCounts(res);
        // what the inserts wrote, doubles included: the server got the types each execution was sent with
        const c = await (await loadDriver(driver)).connect(target, { connectTimeoutMs: 5000 });
        try {
          const rows = await c.all(`SELECT COUNT(*) AS n, SUM(v) AS s FROM ${table[1]} WHERE id > 0`);
          out[`${arm} rows`] = rows.map((x) => [Number(x.n), Number(x.s)]);
        } finally {
          await c.close();
        }
      }
      const armOf = (name: string): string => `${name}${text === 'on' ? ', text' : ''}`;
      assert.deepEqual(out[armOf('batch')], out[armOf('js')]);
      assert.deepEqual(out[armOf('per statement')], out[armOf('js')]);
      assert.deepEqual(out[`${armOf('batch')} rows`], out[`${armOf('js')} rows`]);
      // each client: the insert in all 100 events (v = n: 5050), the other two in the 80 that do not fail
      // (v = n: 4000; the last one n + 0.5 from 50 on, 40 of them: 4020)
      assert.deepEqual(out[`${armOf('js')} rows`], [[2 * 260, 2 * (5050 + 4000 + 4020)]]);
    }
  });
}

for (const driver of ['mysql', 'postgres'] as const) {
  test(`native io (${driver}): a smack barrel of several queries runs as batches, counting as the other paths do`, async (t) => {
    if (!needNative(t)) return;
    const target = await needServer(t, driver);
    if (!target) return;
    const url = driver === 'mysql' ? MYSQL_URL : PG_URL;
    const file = path.join(ROOT, 'test', 'fixtures', 'smack', 'barrel-mix.smack');
    const data = tmpDir('dbsmack-native-barrel-');
    const dropTable = async (): Promise<void> => {
      const c = await (await loadDriver(driver)).connect(target, { connectTimeoutMs: 5000 });
      await c.query('DROP TABLE IF EXISTS smk_mix');
      await c.close();
    };
    t.after(dropTable);
    const out: Record<string, unknown> = {};
    for (const [arm, env] of ARMS) {
      // the table is made and loaded afresh by each run (its min_rows is never met)
      const r = await runCli(['run', file, '3', '150', '--db', url, '-D', data, '--format', 'json'], { env });
      assert.equal(r.code, 0, `${arm}: ${r.stderr}`);
      const res = JSON.parse(r.stdout) as RunResult;
      // a round is three lookups, an insert of the next unique key and a count: five text queries
      const batched = res.client_stats.reduce((n, c) => n + (c.batched ?? 0), 0);
      if (arm === 'batch') assert.ok(batched > res.totals.events / 2, `${arm}: ${batched} batched`);
      else assert.equal(batched, 0, arm);
      const c = await (await loadDriver(driver)).connect(target, { connectTimeoutMs: 5000 });
      try {
        const rows = await c.all("SELECT COUNT(*) AS n FROM smk_mix WHERE k LIKE 'new%'");
        out[arm] = { ...(batchCounts(res) as object), inserted: Number(rows[0]?.n) };
      } finally {
        await c.close();
      }
    }
    assert.deepEqual(out.batch, out.js);
    assert.deepEqual(out['per statement'], out.js);
    assert.deepEqual((out.js as { types: unknown }).types, {
      select_key: 3 * 150 * 3,
      insert_new: 3 * 150,
      count_all: 3 * 150,
    });
    assert.equal((out.js as { inserted: number }).inserted, 3 * 150);
  });
}

for (const driver of ['mysql', 'postgres'] as const) {
  test(`native io (${driver}): transactions declared as sequences are rolled back after a failure, on every path`, async (t) => {
    if (!needNative(t)) return;
    const target = await needServer(t, driver);
    if (!target) return;
    const url = driver === 'mysql' ? MYSQL_URL : PG_URL;
    const mod = path.join(ROOT, 'test', 'fixtures', 'workloads', 'sequence-tx.ts');
    const table = ['--table', `sequence_tx_${process.pid}`];
    t.after(() => runCli(['cleanup', mod, '--db', url, ...table]));
    const out: Record<string, unknown> = {};
    // the handler's fields written out, statementSequence of prepared statements, of text queries, the
    // fields written out with text queries (ctx.runSequence of drawn `sql`)
    for (const form of ['fields', 'helper', 'text', 'fields-text'])
      for (const a of ARMS) {
        const arm = `${form}, ${a[0]}`;
        const res = await ignoringDuplicates(driver, url, mod, [...table, '--form', form], 100, [arm, a[1]]);
        // every 5th event of each client fails at its third statement: 20 of each client's 100
        assert.equal(res.totals.errors, 40, `${arm}: ${JSON.stringify(res.errors)}`);
        const byType = Object.fromEntries(
          Object.entries(res.types).map(([k, s]) => [k, [s.count, s.errors]]),
        );
        assert.deepEqual(
          byType,
          {
            begin: [200, 0],
            insert: [200, 0],
            insert_late: [160, 40],
            insert_after: [160, 0],
            commit: [160, 0],
          },
          arm,
        );
        const batched = res.client_stats.reduce((n, c) => n + (c.batched ?? 0), 0);
        if (a[0] === 'batch') assert.ok(batched > res.totals.events / 2, `${arm}: ${batched} batched`);
        else assert.equal(batched, 0, arm);
        const c = await (await loadDriver(driver)).connect(target, { connectTimeoutMs: 5000 });
        try {
          const rows = await c.all(`SELECT COUNT(*) AS n FROM ${table[1]} WHERE id > 0`);
          out[arm] = { ...(batchCounts(res) as object), rows: Number(rows[0]?.n) };
          // the drawn text queries ran, not their statements' own SQL (which inserts v positive)
          const positive = await c.all(`SELECT COUNT(*) AS n FROM ${table[1]} WHERE id > 0 AND v > 0`);
          assert.equal(Number(positive[0]?.n), form.includes('text') ? 0 : Number(rows[0]?.n), arm);
        } finally {
          await c.close();
        }
      }
    // the failed transactions' first inserts were rolled back: 3 rows for each of 2 × 80 events
    assert.equal((out['fields, js'] as { rows: number }).rows, 2 * 80 * 3);
    for (const [arm, o] of Object.entries(out)) assert.deepEqual(o, out['fields, js'], arm);
  });
}

test("native io (postgres): declared parameter types reach the server on dbsmack's clients, native and JavaScript", async (t) => {
  if (!needNative(t)) return;
  if (!(await needServer(t, 'postgres'))) return;
  const mod = path.join(ROOT, 'test', 'fixtures', 'workloads', 'param-types.ts');
  const got: Record<string, unknown> = {};
  for (const [arm, env, url, types] of [
    ['native', { DBSMACK_IO: 'native' }, PG_URL, 'sysbench'],
    ['js', { DBSMACK_IO: 'js' }, PG_URL, 'sysbench'],
    ['native, none', { DBSMACK_IO: 'native' }, PG_URL, 'none'],
    // node-postgres declares none: the server infers them
    ['pg', { DBSMACK_IO: 'js' }, `${PG_URL}?connector=pg`, 'sysbench'],
  ] as const) {
    const r = await runCli(['run', mod, '--db', url, '--types', types, '--events', '3', '--format', 'json'], {
      env,
    });
    assert.equal(r.code, 0, `${arm}: ${r.stderr}`);
    got[arm] = (JSON.parse(r.stdout) as RunResult).counters;
  }
  assert.deepEqual(got, {
    native: { 'typed:{bigint,"character varying"}': 3 },
    js: { 'typed:{bigint,"character varying"}': 3 },
    'native, none': { 'typed:{text,text}': 3 },
    pg: { 'typed:{text,text}': 3 },
  });
  const bad = await runCli(['run', mod, '--db', PG_URL, '--types', 'bad', '--events', '1']);
  assert.equal(bad.code, 2, bad.stderr);
  assert.match(bad.stderr, /statement typed: unknown parameter type "int9" \(one of int2, /);
});

test('native io: a sequence that breaks its own rules stops the run, saying so, on every path', async (t) => {
  if (!needNative(t)) return;
  if (!(await needServer(t, 'postgres'))) return;
  const cases = [
    // drawn at another length than it declares
    ['sequence-badlen.ts', /sequence drew 2 statements where its length says 3/],
    // a prepared statement and a text query in one sequence
    ['sequence-mixed.ts', /statement 1 has its SQL \(a text query\) where the first has none/],
  ] as const;
  for (const [fixture, says] of cases)
    for (const [arm, env] of ARMS) {
      const mod = path.join(ROOT, 'test', 'fixtures', 'workloads', fixture);
      const r = await runCli(['run', mod, '--db', PG_URL, '--clients', '2', '--time', '5', '--no-history'], {
        env,
      });
      assert.equal(r.code, 4, `${fixture}, ${arm}: ${r.stderr}`);
      assert.match(r.stdout + r.stderr, says, `${fixture}, ${arm}`);
      assert.doesNotMatch(r.stdout + r.stderr, /internal error|at .*\.ts:\d+/i, `${fixture}, ${arm}`);
    }
});

test('native io: MariaDB sessions killed under a batched run are reconnected to', async (t) => {
  if (!needNative(t)) return;
  const target = await needServer(t, 'mysql');
  if (!target) return;
  const d = await loadDriver('mysql');
  const admin = await d.connect(target, { connectTimeoutMs: 5000 });
  try {
    const { child, done } = startCli(
      [
        'run',
        'select1',
        '--db',
        MYSQL_URL,
        '--clients',
        '3',
        '--time',
        '3',
        '--format',
        'json',
        '--progress',
      ],
      { env: { DBSMACK_IO: 'native' } },
    );
    await waitForOutput(child, /\[ 1s \]/, 'the first progress line of the run');
    const sessions = await admin.all(
      `SELECT id FROM information_schema.processlist WHERE db = ? AND id <> CONNECTION_ID()`,
      [TEST_DATABASES.mysql],
    );
    assert.ok(sessions.length >= 3, `the run's sessions: ${JSON.stringify(sessions)}`);
    for (const s of sessions) await admin.query(`KILL ${Number(s.id)}`).catch(() => {});
    const r = await done;
    assert.equal(r.code, 0, r.stderr);
    const res = JSON.parse(r.stdout) as RunResult;
    assert.equal(res.status, 'complete');
    assert.ok(res.totals.reconnects >= 1, `reconnects ${res.totals.reconnects}`);
    assert.ok(
      res.errors.some((e) => e.kind === 'reconnect'),
      JSON.stringify(res.errors),
    );
    batchCounts(res);
  } finally {
    await admin.close();
  }
});

test('native io (mysql): MariaDB leaves unchanged column definitions out of prepared results, on both paths', async (t) => {
  if (!needNative(t)) return;
  const target = await needServer(t, 'mysql');
  if (!target) return;
  for (const io of ['js', 'native'] as const) {
    const c = await load(withIo(target, io));
    const tb = `native_io_meta_${io}_${process.pid}`;
    try {
      const v = /MariaDB (\d+)\.(\d+)/.exec(c.serverVersion);
      if (v === null || Number(v[1]) * 100 + Number(v[2]) < 1006) {
        t.skip(`${c.serverVersion} has no MARIADB_CLIENT_CACHE_METADATA (MariaDB 10.6+)`);
        return;
      }
      await c.query(`DROP TABLE IF EXISTS ${tb}`);
      await c.query(`CREATE TABLE ${tb} (id INT PRIMARY KEY, payload_column VARCHAR(20))`);
      for (let i = 1; i <= 50; i++) await c.query(`INSERT INTO ${tb} VALUES (?, ?)`, [i, `v${i}`]);
      // What the server sent this session, before and after each step (SHOW STATUS answers alike).
      const sent = async (): Promise<number> =>
        Number((await c.all(`SHOW SESSION STATUS LIKE 'Bytes_sent'`))[0]?.Value);
      const sel = await c.prepare(`SELECT id, payload_column FROM ${tb} WHERE id = ?`);
      assert.equal(await sel.run([1]), 1);
      const b0 = await sent();
      const b1 = await sent();
      assert.equal(await sel.run([2]), 1);
      const b2 = await sent();
      assert.equal(await c.query(`SELECT id, payload_column FROM ${tb} WHERE id = 2`), 1);
      const b3 = await sent();
      const status = b1 - b0;
      const executed = b2 - b1 - status;
      const text = b3 - b2 - status;
      // Two column definitions are some 100 bytes; a binary row is a few bytes longer than a text one.
      assert.ok(
        executed + 60 < text,
        `${io}: the execution got ${executed} bytes, the same SELECT as text ${text} (definitions left out)`,
      );
      // Columns that change come again, and every count stays right.
      const all = await c.prepare(`SELECT * FROM ${tb} WHERE id <= ?`);
      assert.equal(await all.run([10]), 10);
      assert.equal(await all.run([50]), 50);
      await c.query(`ALTER TABLE ${tb} ADD COLUMN extra INT DEFAULT 7`);
      assert.equal(await all.run([20]), 20, `${io}: rows after the columns changed`);
      assert.equal(await all.run([0]), 0);
      assert.equal(await sel.run([3]), 1);
      assert.deepEqual(await c.all(`SELECT id, extra FROM ${tb} WHERE id = ?`, [4]), [{ id: 4, extra: 7 }]);
      await all.close();
      await sel.close();
    } finally {
      await c.query(`DROP TABLE IF EXISTS ${tb}`).catch(() => {});
      await c.close();
    }
  }
});
