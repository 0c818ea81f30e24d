/**
 * The first share of a run's clients in the main thread (engine/spawn.ts `mainThreadLoadFits`,
 * load-thread.ts): the same counts as with worker threads only (`DBSMACK_LOAD_THREADS=workers`), recorded in the RunResult and
 * said in the report; runs whose clients could hold a thread (SQLite, the JavaScript I/O path, a user's
 * module) stay in workers; the main thread's timers fire on time while a statement waits in the native core
 * (it reads libuv's timer heap); and a client the engine gives up on is closed at once, in the process that
 * goes on (a sweep, an experiment): the server sees its session go, and the next run gets the main thread.
 * Real servers, the built CLI; without the addon the tests are skipped with the reason (and fail under
 * CI=true, which builds it).
 */
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { type TestContext, test } from 'node:test';
import { resolveWorkload } from '../src/cli/run.ts';
import { loadDriver } from '../src/driver/index.ts';
import { askedDesign, nativeUnavailable, sharedIoSupported } from '../src/driver/native-core.ts';
import { parseTarget } from '../src/driver/url.ts';
import { defaultWorkers, soloIoMaxClients } from '../src/engine/capacity.ts';
import { RunController, runOnce } from '../src/engine/run-once.ts';
import type { RunResult } from '../src/metrics/run-result.ts';
import { planFrom } from '../src/run/plan.ts';
import { runCli, tmpDir } from './helpers/cli.ts';
import { settledRunNs, sharedThreadRunNs } from './helpers/io-thread.ts';
import { ownDatabase } from './helpers/own-database.ts';
import { need } from './helpers/preconditions.ts';

/** True when the addon is there; otherwise the test is skipped with the reason (failed under CI=true). */
const needNative = (t: TestContext): boolean => need(t, nativeUnavailable());

const WORKERS_ONLY = { DBSMACK_LOAD_THREADS: 'workers' };

async function runJson(args: string[], env: Record<string, string> = {}): Promise<RunResult> {
  const r = await runCli([...args, '--format', 'json', '--no-history'], { env });
  assert.equal(r.code, 0, r.stderr);
  return JSON.parse(r.stdout) as RunResult;
}

/**
 * A run of `ref` in this process, as a sweep or an experiment runs one run after another (nothing ends with
 * the process): `clients` in one load thread, at most one try, no warm-up.
 */
async function runInProcess(
  url: string,
  ref: string,
  clients: number,
  limit: { time?: number; events?: number },
): Promise<RunResult> {
  const opts = { db: url, connectTimeout: 5, warmup: 0, reportInterval: 1, maxTries: 1, reconnectTimeout: 1 };
  const resolved = await resolveWorkload(ref, []);
  return runOnce({
    plan: planFrom({ ...opts, clients, ...limit }, parseTarget(url), resolved),
    workload: resolved.workload,
    options: resolved.options,
    workers: 1,
    log: () => {},
    controller: new RunController(),
  });
}

for (const driver of ['mysql', 'postgres'] as const) {
  test(`${driver}: the main thread runs the first share of the clients, counting as worker threads do`, async (t) => {
    if (!needNative(t)) return;
    const own = await ownDatabase(t, driver, 'mainthr');
    if (!own) return;
    const size = ['--tables', '1', '--table-size', '500'];
    const p = await runCli(['prepare', 'oltp_read_only', '--db', own.url, ...size]);
    assert.equal(p.code, 0, p.stderr);
    const run = ['run', 'oltp_read_only', '--db', own.url, ...size, '--events', '300'];
    for (const shape of [
      ['--threads', '1'],
      ['--threads', '3', '--workers', '1'],
      ['--threads', '3', '--workers', '2'],
    ]) {
      const args = [...run, ...shape];
      const main = await runJson(args);
      const workers = await runJson(args, WORKERS_ONLY);
      const where = shape.join(' ');
      assert.equal(main.main_thread, true, `${where}: the main thread took a share`);
      assert.equal(workers.main_thread, undefined, `${where}: DBSMACK_LOAD_THREADS=workers`);
      assert.equal(main.workers, workers.workers, `${where}: as many load threads either way`);
      for (const r of [main, workers]) {
        assert.equal(r.status, 'complete', where);
        assert.equal(r.totals.events, 300, where);
        assert.equal(r.totals.errors, 0, where);
      }
      assert.equal(main.totals.queries, workers.totals.queries, where);
      assert.deepEqual(
        Object.fromEntries(Object.entries(main.types).map(([k, v]) => [k, v.count])),
        Object.fromEntries(Object.entries(workers.types).map(([k, v]) => [k, v.count])),
        where,
      );
    }
    const text = await runCli([...run, '--threads', '3', '--workers', '2', '--no-history']);
    assert.equal(text.code, 0, text.stderr);
    assert.match(text.stdout, /3 clients in the main thread and 1 worker,/);
  });
}

test("many PostgreSQL clients: one load thread by default, every second connection's batches on the shared I/O thread", async (t) => {
  if (!needNative(t)) return;
  if (!sharedIoSupported) {
    t.skip(`the shared I/O thread runs on x86 only (this is ${process.arch})`);
    return;
  }
  const own = await ownDatabase(t, 'postgres', 'mainthr_shared');
  if (!own) return;
  // the CLI: 16 clients get one load thread where two would be the default (2 to 5 cores), 4 get one each
  // (SOLO_IO_MAX_CLIENTS), and DBSMACK_NATIVE_DESIGN=3 (no shared thread) keeps two
  const one = defaultWorkers('postgres', 16, undefined, undefined, true);
  const two = defaultWorkers('postgres', 16);
  const run = ['run', 'select1', '--db', own.url, '--events', '3000'];
  const many = await runJson([...run, '--clients', '16']);
  assert.equal(many.workers, one);
  assert.equal(many.target.shared_io_thread, one === 1 ? true : undefined, 'the RunResult says so');
  assert.equal(many.totals.events, 3000);
  assert.equal(many.totals.errors, 0);
  const four = await runJson([...run, '--clients', '4']);
  assert.equal(four.workers, defaultWorkers('postgres', 4, undefined, undefined, true, true));
  assert.equal(four.target.shared_io_thread, undefined);
  // 8 clients: a thread each where the workload only reads (select1; not on an AMD EPYC machine, where they
  // share the loop as writers do: capacity.ts soloIoMaxClients), the shared loop where it writes (a script of
  // a temporary table of each connection's own)
  const eight = await runJson([...run, '--clients', '8']);
  const eightReaders = defaultWorkers('postgres', 8, undefined, undefined, true, true, true);
  assert.equal(eight.workers, eightReaders);
  assert.equal(eight.target.shared_io_thread, eightReaders === 1 ? true : undefined);
  const writes = path.join(tmpDir('dbsmack-mainthr-'), 'writes.sql');
  writeFileSync(writes, 'CREATE TEMP TABLE IF NOT EXISTS w (a int);\nINSERT INTO w VALUES (1);\n');
  const writer = await runJson(['run', writes, '--db', own.url, '--events', '800', '--clients', '8']);
  assert.equal(writer.workers, one, 'writers: the one load thread of 16 clients');
  assert.equal(writer.target.shared_io_thread, one === 1 ? true : undefined);
  assert.equal(writer.totals.errors, 0);
  if (one === 1 && soloIoMaxClients(true) >= 8)
    assert.ok(eight.workers > 1, `${eight.workers} load threads for 8 readers`);
  const asked = await runJson([...run, '--clients', '16'], { DBSMACK_NATIVE_DESIGN: '3' });
  assert.equal(asked.workers, two);
  assert.equal(asked.target.shared_io_thread, undefined);
  const text = await runCli([...run, '--clients', '16', '--no-history']);
  assert.equal(text.code, 0, text.stderr);
  if (one === 1)
    assert.match(text.stdout, /; native I\/O with a shared I\/O thread, \d+% of events in statement batches/);
  if (askedDesign() !== undefined) return; // (this process's own runs would take the design it names)
  // in this process, one load thread (the main thread, as a sweep's or an experiment's runs): 16 clients run
  // half their batches on the shared thread (2,000 statements: milliseconds of its CPU); a run of 4 clients
  // after it goes back to design 3 and leaves the thread asleep
  const before = Math.max(0, sharedThreadRunNs());
  const shared = await runInProcess(own.url, 'select1', 16, { events: 4000 });
  assert.equal(shared.target.shared_io_thread, true);
  assert.equal(shared.totals.events, 4000);
  assert.equal(shared.totals.errors, 0);
  const after = await settledRunNs();
  assert.ok(after > before + 1e6, `the shared thread ran ${(after - before) / 1e6} ms`);
  const few = await runInProcess(own.url, 'select1', 4, { events: 2000 });
  assert.equal(few.target.shared_io_thread, undefined);
  assert.equal(few.totals.events, 2000);
  assert.equal(sharedThreadRunNs(), after, 'the shared thread stays asleep under 4 clients');
});

test('clients that could hold a thread stay in worker threads: SQLite, the JavaScript I/O path, a module', async (t) => {
  if (!needNative(t)) return;
  const own = await ownDatabase(t, 'postgres', 'mainthr_js');
  if (!own) return;
  const dir = tmpDir('dbsmack-mainthr-');
  const sqlite = await runJson([
    'run',
    'select1',
    '--db',
    `sqlite:${path.join(dir, 's.db')}`,
    '--events',
    '50',
  ]);
  assert.equal(sqlite.main_thread, undefined, 'SQLite');
  const js = await runJson(['run', 'select1', '--db', `${own.url}?io=js`, '--events', '50']);
  assert.equal(js.target.io, 'js');
  assert.equal(js.main_thread, undefined, 'the JavaScript I/O path');
  const mod = path.join(dir, 'w.mjs');
  writeFileSync(
    mod,
    "export default { name: 'w', client(ctx) { return { event: () => ctx.query('one', 'SELECT 1') }; } };\n",
  );
  const m = await runJson(['run', mod, '--db', own.url, '--events', '50']);
  assert.equal(m.target.io, 'native');
  assert.equal(m.main_thread, undefined, "a user's module");
  assert.equal(m.totals.events, 50);
});

test("the main thread's timers fire on time while a statement waits in the native core", async (t) => {
  if (!needNative(t)) return;
  const own = await ownDatabase(t, 'postgres', 'mainthr_timer');
  if (!own) return;
  const target = parseTarget(own.url);
  const conn = await (await loadDriver('postgres')).connect(target, { connectTimeoutMs: 5000, load: true });
  try {
    let ticks = 0;
    let waiting = true;
    const tick = (): void => {
      ticks++;
      if (waiting) setTimeout(tick, 5);
    };
    setTimeout(tick, 5);
    // one second in the core's wait: a 5 ms timer chain ticks about 200 times when the wait gives way to
    // the thread's timers, at most 20 when it only ends at its own 50 ms bound
    await conn.query('SELECT pg_sleep(1)');
    waiting = false;
    assert.ok(ticks > 60, `a 5 ms timer ticked ${ticks} times during a statement of 1 s`);
  } finally {
    await conn.close();
  }
});

test('a client in the main thread that the engine gives up on is closed at once, and the next run may use the thread', async (t) => {
  if (!needNative(t)) return;
  const own = await ownDatabase(t, 'postgres', 'mainthr_stuck');
  if (!own) return;
  const dir = tmpDir('dbsmack-mainthr-');
  const script = path.join(dir, 'stuck.sql');
  // the server checks every 100 ms whether its client is still there, and ends the session when it is not
  writeFileSync(script, 'SET client_connection_check_interval = 100;\nSELECT pg_sleep(120);\n');
  const target = parseTarget(own.url);
  const run = (ref: string, limit: { time?: number; events?: number }): Promise<RunResult> =>
    runInProcess(own.url, ref, 1, limit);
  const res = await run(script, { time: 1 });
  assert.equal(res.main_thread, true);
  assert.equal(res.status, 'partial');
  assert.match(
    res.status_reason ?? '',
    /^1 client in the main thread did not stop in time and was given up on/,
  );
  // the connection was closed when the engine gave up (the server saw it go), not left sleeping for two
  // minutes under the next run
  const admin = await (await loadDriver('postgres')).connect(target, { connectTimeoutMs: 5000 });
  try {
    let left = 1;
    for (let i = 0; i < 100 && left > 0; i++) {
      const rows = await admin.all(
        "SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = current_database() AND query LIKE '%pg_sleep(120)%' AND pid <> pg_backend_pid()",
      );
      left = Number(rows[0]?.n);
      if (left > 0) await new Promise((r) => setTimeout(r, 50));
    }
    assert.equal(left, 0, 'the stuck session is still on the server');
  } finally {
    await admin.close();
  }
  const next = await run('select1', { events: 20 });
  assert.equal(next.main_thread, true, 'the main thread serves the next run');
  assert.equal(next.totals.events, 20);
});

test('two runs at once in one process: one holds the main thread, the other runs in a worker', async (t) => {
  if (!needNative(t)) return;
  const own = await ownDatabase(t, 'postgres', 'mainthr_two');
  if (!own) return;
  const start = (limit: { time?: number; events?: number }): Promise<RunResult> =>
    runInProcess(own.url, 'select1', 2, limit);
  // two seconds each, started together: they overlap for certain, and must not share the main thread
  const both = await Promise.all([start({ time: 2 }), start({ time: 2 })]);
  assert.deepEqual(
    both.map((r) => r.main_thread === true).sort(),
    [false, true],
    'exactly one run in the main thread',
  );
  for (const r of both) {
    assert.equal(r.status, 'complete');
    assert.ok(r.totals.events > 100, `${r.totals.events} events`);
    assert.equal(r.totals.errors, 0);
  }
  // and the main thread is free again once both have ended
  const next = await start({ events: 100 });
  assert.equal(next.main_thread, true);
  assert.equal(next.totals.events, 100);
});
