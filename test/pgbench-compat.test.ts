/**
 * `dbsmack pgbench` against the real pgbench 15 on the same PostgreSQL: tables made by either run under
 * the other; the built-in scripts and a script using every meta-command give the same transaction counts
 * for the same -c and -t; the reports have pgbench's layout line for line; TPC-B's balances add up; the
 * random functions give pgbench's values for a seed and pgbench's shapes for another; every expression
 * of test/fixtures/pgbench/expressions.txt evaluates as in pgbench; -C opens a connection per
 * transaction (counted on the server); bad scripts fail the way pgbench fails.
 * Needs the CLI built (`npm run build`), PostgreSQL and pgbench.
 */
import assert from 'node:assert/strict';
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { type TestContext, test } from 'node:test';
import { loadDriver } from '../src/driver/index.ts';
import type { Connection, Target } from '../src/driver/types.ts';
import type { RunResult } from '../src/metrics/run-result.ts';
import { chiSquareTwoSample } from './helpers/chi-square.ts';
import { runCli, tmpDir } from './helpers/cli.ts';
import { ownDatabase } from './helpers/own-database.ts';
import { layout, needPgbench, pgEnv, reportValue, runPgbench } from './helpers/pgbench.ts';

const FIXTURES = path.join(import.meta.dirname, 'fixtures', 'pgbench');

/** pgbench's tables have fixed names: each test makes them in a database of its own. */
async function setup(t: TestContext): Promise<{ target: Target; conn: Connection } | undefined> {
  if (!needPgbench(t)) return undefined;
  const own = await ownDatabase(t, 'postgres', 'pgbench');
  if (!own) return undefined;
  const target = own.target;
  const conn = await (await loadDriver('postgres')).connect(target, { connectTimeoutMs: 5000 });
  t.after(() => conn.close());
  return { target, conn };
}

/** setup(), then pgbench's tables at scale 1 made by `dbsmack pgbench -i` (no vacuum). */
async function setupScale1(t: TestContext): Promise<{ target: Target; conn: Connection } | undefined> {
  const s = await setup(t);
  if (!s) return undefined;
  const init = await dbsmack(s.target, ['-i', '-s', '1', '-I', 'dtGp']);
  assert.equal(init.code, 0, init.stderr);
  return s;
}

/** `dbsmack pgbench ARGS` with libpq's variables pointing at the target. */
function dbsmack(target: Target, args: string[], cwd?: string) {
  return runCli(['pgbench', ...args], { env: pgEnv(target), ...(cwd ? { cwd } : {}) });
}

/**
 * `args` run by pgbench, then by `dbsmack pgbench` with batches on and off (`reset` before each run): each
 * aborts a client with `message` (dbsmack exits 4) after the same transactions. Returns pgbench's count.
 */
async function abortsAsPgbench(
  target: Target,
  args: string[],
  message: RegExp,
  reset?: () => Promise<unknown>,
): Promise<string | undefined> {
  await reset?.();
  const theirs = await runPgbench(target, args);
  const processed = reportValue(theirs.stdout, 'number of transactions actually processed:');
  assert.match(theirs.stderr, message);
  for (const batch of ['on', 'off']) {
    await reset?.();
    const ours = await runCli(['pgbench', ...args, '--no-history'], {
      env: { ...pgEnv(target), DBSMACK_BATCH: batch },
    });
    assert.equal(ours.code, 4, ours.stderr);
    assert.match(ours.stderr, message, `batches ${batch}`);
    assert.equal(
      reportValue(ours.stdout, 'number of transactions actually processed:'),
      processed,
      `batches ${batch}`,
    );
  }
  return processed;
}

async function one(conn: Connection, sql: string): Promise<string> {
  const rows = await conn.all(sql);
  return String(Object.values(rows[0] ?? {})[0]);
}

/** TPC-B's `transactions` all in pgbench_history, and the accounts', tellers' and branches' balances its sum. */
async function balancesAddUp(conn: Connection, transactions: number): Promise<void> {
  assert.equal(await one(conn, 'select count(*) from pgbench_history'), String(transactions));
  const history = await one(conn, 'select sum(delta) from pgbench_history');
  assert.notEqual(history, '0');
  assert.equal(await one(conn, 'select sum(abalance) from pgbench_accounts'), history);
  assert.equal(await one(conn, 'select sum(tbalance) from pgbench_tellers'), history);
  assert.equal(await one(conn, 'select sum(bbalance) from pgbench_branches'), history);
}

/** Every row of the four tables, hashed, and the columns: equal for equal tables. */
async function tablesDigest(conn: Connection): Promise<string> {
  const parts: string[] = [];
  for (const t of ['pgbench_accounts', 'pgbench_branches', 'pgbench_tellers', 'pgbench_history']) {
    parts.push(
      await one(conn, `select count(*) || ':' || coalesce(sum(hashtext(x::text)), 0) from ${t} x`),
      await one(
        conn,
        `select string_agg(column_name || ' ' || data_type || ' ' || is_nullable || ' ' || coalesce(character_maximum_length, 0), ',' order by ordinal_position) from information_schema.columns where table_name = '${t}' and table_schema = current_schema()`,
      ),
    );
  }
  parts.push(
    await one(
      conn,
      "select string_agg(conname || ':' || contype::text, ',' order by conname) from pg_constraint where conrelid::regclass::text like 'pgbench_%'",
    ),
  );
  return parts.join('\n');
}

test("tables made by dbsmack pgbench -i equal pgbench -i's, and each runs under the other", async (t) => {
  const s = await setup(t);
  if (!s) return;
  const theirs = await runPgbench(s.target, ['-i', '-s', '2', '--foreign-keys']);
  assert.equal(theirs.code, 0, theirs.stderr);
  const digestTheirs = await tablesDigest(s.conn);
  const ours = await dbsmack(s.target, ['-i', '-s', '2', '--foreign-keys']);
  assert.equal(ours.code, 0, ours.stderr);
  assert.match(
    ours.stderr,
    /^dropping old tables\.\.\.\ncreating tables\.\.\.\ngenerating data \(client-side\)\.\.\.\n/,
  );
  assert.match(ours.stderr, /200000 of 200000 tuples \(100%\) done/);
  assert.match(
    ours.stderr,
    /done in \d+\.\d\d s \(drop tables .* s, create tables .* s, client-side generate .* s, vacuum .* s, primary keys .* s, foreign keys .* s\)\./,
  );
  assert.equal(await tablesDigest(s.conn), digestTheirs);
  // pgbench runs on dbsmack's tables
  const run = await runPgbench(s.target, ['-c', '2', '-t', '10']);
  assert.equal(run.code, 0, run.stderr);
  assert.equal(reportValue(run.stdout, 'number of transactions actually processed:'), '20/20');
  // and dbsmack on pgbench's (server-side generated this time)
  assert.equal((await runPgbench(s.target, ['-i', '-s', '1', '-I', 'dtGvp'])).code, 0);
  const back = await dbsmack(s.target, ['-c', '2', '-t', '10', '--no-history']);
  assert.equal(back.code, 0, back.stderr);
  assert.equal(reportValue(back.stdout, 'number of transactions actually processed:'), '20/20');
  assert.equal(reportValue(back.stdout, 'scaling factor:'), '1');
});

test('built-in scripts: the same transaction counts and report layout as pgbench for the same options', async (t) => {
  const s = await setup(t);
  if (!s) return;
  assert.equal((await runPgbench(s.target, ['-i', '-s', '1', '-q'])).code, 0);
  const cases: string[][] = [
    ['-c', '3', '-t', '7'],
    ['-c', '2', '-t', '5', '-S', '-M', 'prepared', '-r'],
    ['-c', '2', '-t', '5', '-N', '-M', 'extended', '-r', '--max-tries', '3'],
    // enough transactions that each script gets some (with 12, select-only got none 1 time in 130, and its
    // latency lines were missing)
    [
      '-c',
      '2',
      '-t',
      '30',
      '-b',
      'tpcb-like@2',
      '-b',
      'select-only',
      '-r',
      '--failures-detailed',
      '--max-tries=2',
    ],
    ['-c', '2', '-T', '2', '-S', '-P', '1'],
    ['-c', '2', '-t', '4', '-S', '-C', '-j', '2'],
    ['-c', '2', '-t', '3', '-S', '-L', '50'],
  ];
  for (const args of cases) {
    const theirs = await runPgbench(s.target, args);
    const ours = await dbsmack(s.target, [...args, '--no-history']);
    const what = `pgbench ${args.join(' ')}`;
    assert.equal(theirs.code, 0, `${what}: ${theirs.stderr}`);
    assert.equal(ours.code, 0, `${what}: ${ours.stderr}`);
    if (!args.includes('-T')) {
      const label = 'number of transactions actually processed:';
      assert.equal(reportValue(ours.stdout, label), reportValue(theirs.stdout, label), what);
    }
    assert.deepEqual(layout(ours.stdout), layout(theirs.stdout), what);
    assert.match(ours.stdout, /^pgbench \(dbsmack .*, server 15\./, what);
    if (args.includes('-P'))
      assert.match(
        ours.stderr,
        /^progress: 1\.0 s, \d+\.\d tps, lat \d+\.\d{3} ms stddev \d+\.\d{3}, 0 failed$/m,
      );
    assert.match(ours.stderr, /starting vacuum\.\.\.end\./);
  }
});

test('TPC-B-like under dbsmack: the balances of accounts, tellers and branches equal the sum of the history', async (t) => {
  const s = await setupScale1(t);
  if (!s) return;
  const run = await dbsmack(s.target, ['-c', '4', '-j', '2', '-t', '40', '-M', 'prepared', '--no-history']);
  assert.equal(run.code, 0, run.stderr);
  assert.equal(reportValue(run.stdout, 'number of transactions actually processed:'), '160/160');
  await balancesAddUp(s.conn, 160);
});

test('-c 16 -j 2: one load worker whose native core runs half the connections on its shared I/O thread, every transaction in the balances', async (t) => {
  const s = await setupScale1(t);
  if (!s) return;
  const out = path.join(tmpDir(), 'r.json');
  const run = await dbsmack(s.target, [
    '-c',
    '16',
    '-j',
    '2',
    '-t',
    '30',
    '-M',
    'prepared',
    '--no-history',
    '-o',
    out,
  ]);
  assert.equal(run.code, 0, run.stderr);
  assert.equal(reportValue(run.stdout, 'number of threads:'), '2'); // as asked, as pgbench prints it
  assert.equal(reportValue(run.stdout, 'number of transactions actually processed:'), '480/480');
  const result = JSON.parse(readFileSync(out, 'utf8')) as RunResult;
  if (result.target.io === 'native') {
    assert.equal(result.workers, 1);
    assert.equal(result.target.shared_io_thread, true);
  } else assert.equal(result.workers, 2); // the JavaScript I/O path has no shared thread
  assert.equal(result.totals.queries, 7 * 480);
  await balancesAddUp(s.conn, 480);
});

test("TPC-B's transactions as statement batches (seven statements an event, -M prepared and simple): pgbench's random numbers, the same rows", async (t) => {
  const s = await setupScale1(t);
  if (!s) return;
  // what each transaction drew (aid, tid, bid, delta: TPC-B's four \set), as a sorted list: the draws do not
  // depend on the tables, so each run after the history is emptied must write the same rows
  const history = async (): Promise<string> => {
    const rows = await s.conn.all(
      "select string_agg(concat_ws(':', tid, bid, aid, delta), ',' order by tid, bid, aid, delta) as h from pgbench_history",
    );
    await s.conn.query('truncate pgbench_history');
    return String(rows[0]?.h);
  };
  const dir = tmpDir();
  for (const mode of ['prepared', 'simple']) {
    const args = ['-n', '-M', mode, '-c', '3', '-j', '2', '-t', '150', '--random-seed=5'];
    const theirs = await runPgbench(s.target, args);
    assert.equal(theirs.code, 0, theirs.stderr);
    const expected = await history();
    assert.equal(expected.split(',').length, 450);
    for (const batch of ['on', 'off']) {
      const out = path.join(dir, `tpcb-${mode}-${batch}.json`);
      const ours = await runCli(['pgbench', ...args, '--no-history', '-o', out], {
        env: { ...pgEnv(s.target), DBSMACK_BATCH: batch },
      });
      assert.equal(ours.code, 0, ours.stderr);
      assert.equal(reportValue(ours.stdout, 'number of transactions actually processed:'), '450/450');
      assert.equal(await history(), expected, `${mode}, batches ${batch}: other random numbers`);
      const result = JSON.parse(readFileSync(out, 'utf8')) as RunResult;
      const batched = result.client_stats.reduce((n, c) => n + (c.batched ?? 0), 0);
      // on the JavaScript I/O path (DBSMACK_IO=js) nothing is batched
      if (batch === 'on' && result.target.io === 'native')
        assert.ok(batched > 300, `${batched} transactions batched`);
      else assert.equal(batched, 0);
      // seven statements a transaction, each counted under its own command
      assert.equal(result.totals.queries, 7 * 450, `${mode}, batches ${batch}`);
    }
  }
});

test("a script with every meta-command gives pgbench's transaction counts in every query mode", async (t) => {
  const s = await setup(t);
  if (!s) return;
  assert.equal((await runPgbench(s.target, ['-i', '-s', '1', '-I', 'dtGp'])).code, 0);
  const dir = tmpDir();
  const file = path.join(dir, 'every.sql');
  writeFileSync(
    file,
    [
      '-- every meta-command pgbench has',
      '\\set n random(1, 10)',
      '\\set half :n / 2',
      '\\if :n > 5',
      '  \\set big 1',
      '\\elif :n > 2',
      '  \\set big 2',
      '\\else',
      '  \\set big 3',
      '\\endif',
      '\\sleep 1 ms',
      '\\sleep :n us',
      'SELECT :n AS n, :big AS big, :half * 2 AS twice \\gset p_',
      'SELECT 1 AS one \\aset',
      '\\setshell shellv echo 7',
      '\\shell true',
      '\\if :p_n = :n and :one = 1 and :shellv = 7',
      '  SELECT 1;',
      '\\else',
      '  SELECT 1/0;',
      '\\endif',
      'BEGIN;',
      'SELECT abalance FROM pgbench_accounts WHERE aid = :n;',
      'END;',
      '',
    ].join('\n'),
  );
  const pipelined = path.join(dir, 'pipeline.sql');
  writeFileSync(
    pipelined,
    '\\set n random(1, 10)\n\\startpipeline\nSELECT :n;\nSELECT :n + 1;\n\\endpipeline\n',
  );
  for (const mode of ['simple', 'extended', 'prepared']) {
    for (const f of mode === 'simple' ? [file] : [file, pipelined]) {
      const args = ['-n', '-c', '2', '-t', '9', '-M', mode, '-f', f];
      const theirs = await runPgbench(s.target, args);
      const ours = await dbsmack(s.target, [...args, '--allow-shell', '--no-history']);
      assert.equal(theirs.code, 0, theirs.stderr);
      assert.equal(ours.code, 0, ours.stderr);
      const label = 'number of transactions actually processed:';
      assert.equal(reportValue(ours.stdout, label), '18/18', `${mode} ${f}`);
      assert.equal(reportValue(theirs.stdout, label), '18/18');
      assert.deepEqual(layout(ours.stdout), layout(theirs.stdout));
    }
  }
  // pgbench aborts a pipeline under the simple protocol; so does dbsmack
  const simple = await dbsmack(s.target, ['-n', '-c', '1', '-t', '2', '-f', pipelined, '--no-history']);
  assert.equal(simple.code, 4);
  assert.match(
    simple.stderr,
    /client 0 aborted in command 1 \(startpipeline\) of script 0; cannot use pipeline mode with the simple query protocol/,
  );
  assert.equal(reportValue(simple.stdout, 'number of transactions actually processed:'), '0/2');
});

/** The `debug(...)` lines of a run, in order. */
const debugLines = (stderr: string): string[] => stderr.split('\n').filter((l) => l.startsWith('debug('));

test("random functions: pgbench's values for the same --random-seed, pgbench's shapes for another", async (t) => {
  const s = await setup(t);
  if (!s) return;
  const dir = tmpDir();
  const exact = path.join(dir, 'exact.sql');
  const fns = [
    'random(1, 1000000)',
    'random_exponential(1, 1000, 2.5)',
    'random_gaussian(-100, 100, 2.5)',
    'random_zipfian(1, 1000, 1.07)',
    'random(-4000000000000000000, 4000000000000000000)',
    'hash(:aid)',
    'permute(:aid, 1000, :client_id)',
  ];
  writeFileSync(
    exact,
    `\\set aid random(1, 1000)\n${fns.map((f, i) => `\\set x${i} debug(${f})`).join('\n')}\n`,
  );
  const args = ['-n', '-c', '3', '-t', '20', '--random-seed=12345', '-f', exact];
  const theirs = await runPgbench(s.target, args);
  const ours = await dbsmack(s.target, [...args, '--no-history']);
  assert.equal(theirs.code, 0, theirs.stderr);
  assert.equal(ours.code, 0, ours.stderr);
  assert.equal(debugLines(ours.stderr).length, 3 * 20 * fns.length);
  // pgbench interleaves its clients; compare each client's sequence, which depends only on the seed
  const sorted = (l: string[]): string[] => [...l].sort();
  assert.deepEqual(sorted(debugLines(ours.stderr)), sorted(debugLines(theirs.stderr)));

  const shapes: [string, number, number][] = [
    ['random(1, 50)', 1, 50],
    ['random_exponential(1, 50, 3)', 1, 50],
    ['random_gaussian(1, 50, 2.5)', 1, 50],
    ['random_zipfian(1, 50, 1.5)', 1, 50],
  ];
  for (const [fn, lo, hi] of shapes) {
    const f = path.join(dir, 'shape.sql');
    writeFileSync(f, `\\set x debug(${fn})\n`);
    const n = 20000;
    const a = await runPgbench(s.target, ['-n', '-t', String(n), '--random-seed=1', '-f', f]);
    const b = await dbsmack(s.target, ['-n', '-t', String(n), '--random-seed=2', '-f', f, '--no-history']);
    const counts = (stderr: string): number[] => {
      const c = new Array<number>(hi - lo + 1).fill(0);
      for (const l of debugLines(stderr)) {
        const v = Number(l.slice(l.lastIndexOf(' ') + 1));
        c[v - lo] = (c[v - lo] as number) + 1;
      }
      return c;
    };
    const ca = counts(a.stderr);
    const cb = counts(b.stderr);
    assert.equal(
      ca.reduce((x, y) => x + y, 0),
      n,
    );
    assert.equal(
      cb.reduce((x, y) => x + y, 0),
      n,
    );
    const fit = chiSquareTwoSample(ca, cb);
    assert.ok(
      fit.p > 0.001,
      `${fn}: pgbench and dbsmack differ, chi-square ${fit.stat.toFixed(1)} on ${fit.df} df, p = ${fit.p}`,
    );
  }
});

test('every expression of the fixture evaluates as in pgbench, errors included', async (t) => {
  const s = await setup(t);
  if (!s) return;
  const dir = tmpDir();
  const exprs = readFileSync(path.join(FIXTURES, 'expressions.txt'), 'utf8').split('\n').filter(Boolean);
  const f = path.join(dir, 'e.sql');
  const result = async (which: 'pgbench' | 'dbsmack', e: string): Promise<string> => {
    writeFileSync(f, `\\set x debug(${e})\n`);
    const r =
      which === 'pgbench'
        ? await runPgbench(s.target, ['-n', '-t', '1', '-f', f])
        : await dbsmack(s.target, ['-n', '-t', '1', '-f', f, '--no-history']);
    const d = debugLines(r.stderr)[0];
    if (d !== undefined) return d;
    // pgbench: "pgbench: error: MESSAGE" then "client 0 aborted …"; dbsmack: "client 0 aborted …; MESSAGE"
    const m =
      which === 'pgbench'
        ? /pgbench: error: (?!client)(.*)/.exec(r.stderr)
        : /aborted in command 0 \(set\) of script 0; (.*)/.exec(r.stderr);
    return `error: ${m?.[1] ?? r.stderr}`;
  };
  // the ones that evaluate go in one script each side; the errors one run each
  const ok: string[] = [];
  for (const e of exprs) {
    const theirs = await result('pgbench', e);
    if (theirs.startsWith('error: ')) assert.equal(await result('dbsmack', e), theirs, e);
    else ok.push(e);
  }
  writeFileSync(f, `${ok.map((e, i) => `\\set x${i} debug(${e})`).join('\n')}\n`);
  const theirs = await runPgbench(s.target, ['-n', '-t', '1', '--random-seed=3', '-f', f]);
  const ours = await dbsmack(s.target, ['-n', '-t', '1', '--random-seed=3', '-f', f, '--no-history']);
  assert.deepEqual(debugLines(ours.stderr), debugLines(theirs.stderr));
  assert.ok(ok.length > 60 && ok.length < exprs.length);
});

test('-C opens a new connection for every transaction, as pgbench does (counted on the server)', async (t) => {
  const s = await setup(t);
  if (!s) return;
  await s.conn.query('drop table if exists dbsmack_conn_log');
  await s.conn.query('create table dbsmack_conn_log(pid int, started timestamptz)');
  t.after(() => s.conn.query('drop table if exists dbsmack_conn_log').catch(() => {}));
  const f = path.join(tmpDir(), 'conn.sql');
  writeFileSync(
    f,
    'INSERT INTO dbsmack_conn_log SELECT pid, backend_start FROM pg_stat_activity WHERE pid = pg_backend_pid();\n',
  );
  const sessions = () => one(s.conn, 'select count(distinct (pid, started)) from dbsmack_conn_log');
  for (const [args, expected] of [
    [['-C', '-c', '2', '-t', '5'], '10'],
    [['-c', '2', '-t', '5'], '2'],
  ] as const) {
    await s.conn.query('truncate dbsmack_conn_log');
    const theirs = await runPgbench(s.target, ['-n', ...args, '-f', f]);
    assert.equal(theirs.code, 0, theirs.stderr);
    assert.equal(await sessions(), expected, `pgbench ${args.join(' ')}`);
    await s.conn.query('truncate dbsmack_conn_log');
    const ours = await dbsmack(s.target, ['-n', ...args, '-f', f, '--no-history']);
    assert.equal(ours.code, 0, ours.stderr);
    assert.equal(await sessions(), expected, `dbsmack pgbench ${args.join(' ')}`);
    if (args[0] === '-C')
      assert.match(
        ours.stdout,
        /^average connection time = \d+\.\d{3} ms\ntps = \d+\.\d{6} \(including reconnection times\)$/m,
      );
  }
});

test('serialization failures are retried up to --max-tries and counted as pgbench counts them', async (t) => {
  const s = await setup(t);
  if (!s) return;
  assert.equal((await runPgbench(s.target, ['-i', '-s', '1', '-I', 'dtGp'])).code, 0);
  const f = path.join(tmpDir(), 'conflict.sql');
  // four clients update one row in repeatable read, with a pause in between: most overlap and conflict
  writeFileSync(
    f,
    'BEGIN ISOLATION LEVEL REPEATABLE READ;\nSELECT abalance FROM pgbench_accounts WHERE aid = 1;\n\\sleep 2 ms\nUPDATE pgbench_accounts SET abalance = abalance + 1 WHERE aid = 1;\nEND;\n',
  );
  const once = await dbsmack(s.target, [
    '-n',
    '-c',
    '4',
    '-t',
    '15',
    '-f',
    f,
    '-r',
    '--failures-detailed',
    '--no-history',
  ]);
  assert.equal(once.code, 0, once.stderr);
  const processed = Number(
    reportValue(once.stdout, 'number of transactions actually processed:')?.split('/')[0],
  );
  const failed = Number(reportValue(once.stdout, 'number of failed transactions:')?.split(' ')[0]);
  assert.ok(failed > 0, once.stdout);
  assert.equal(processed + failed, 60);
  assert.equal(
    reportValue(once.stdout, 'number of serialization failures:'),
    reportValue(once.stdout, 'number of failed transactions:'),
  );
  // the per-command failures are on the UPDATE
  assert.match(once.stdout, new RegExp(`^ +\\d+\\.\\d{3} +${failed}  UPDATE pgbench_accounts`, 'm'));
  const retried = await dbsmack(s.target, [
    '-n',
    '-c',
    '4',
    '-t',
    '15',
    '-f',
    f,
    '--max-tries=1000',
    '--no-history',
  ]);
  assert.equal(retried.code, 0, retried.stderr);
  assert.equal(reportValue(retried.stdout, 'number of transactions actually processed:'), '60/60');
  assert.equal(reportValue(retried.stdout, 'number of failed transactions:'), '0 (0.000%)');
  assert.ok(Number(reportValue(retried.stdout, 'total number of retries:')) > 0, retried.stdout);
  assert.equal(
    await one(s.conn, 'select abalance from pgbench_accounts where aid = 1'),
    String(60 + processed),
  );
});

test("retries end at -T's end (the transaction dropped with its retries, as pgbench drops it) and at -L", async (t) => {
  const s = await setup(t);
  if (!s) return;
  const dir = tmpDir();
  const fail = "DO $$ BEGIN RAISE EXCEPTION 'conflict' USING ERRCODE = '40001'; END $$;\n";
  const always = path.join(dir, 'always.sql');
  writeFileSync(always, fail);
  // 0.3 s, then the failure: the first transaction fails twice by 0.6 s (counted: one failed, retried
  // once); the second's retry starts before 1 s and fails after it (dropped, with its retry)
  const slow = path.join(dir, 'slow.sql');
  writeFileSync(slow, `SELECT pg_sleep(0.3);\n${fail}`);
  const cases: [string[], Record<string, string>][] = [
    // retried without end until the time is up: nothing counted at all
    [
      ['-T', '1', '--max-tries', '0', '-f', always],
      { processed: '0', failed: '0 (NaN%)', retried: '0 (NaN%)', retries: '0' },
    ],
    [
      ['-T', '1', '--max-tries', '2', '-f', slow],
      { processed: '0', failed: '1 (100.000%)', retried: '1 (100.000%)', retries: '1' },
    ],
    // -L bounds the tries of each transaction: every one fails after some (before, this never ended)
    [
      ['-t', '10', '--max-tries', '0', '-L', '50', '-f', always],
      { processed: '0/10', failed: '10 (100.000%)', retried: '10 (100.000%)', retries: 'many' },
    ],
  ];
  for (const [args, want] of cases) {
    const what = `pgbench ${args.join(' ')}`;
    const theirs = await runPgbench(s.target, ['-n', ...args]);
    // before the deadline rule the first case restarted for ever: "did not stop in time", exit 4
    const ours = await dbsmack(s.target, ['-n', ...args, '--no-history']);
    assert.equal(theirs.code, 0, `${what}: ${theirs.stderr}`);
    assert.equal(ours.code, 0, `${what}: ${ours.stderr}`);
    for (const out of [theirs.stdout, ours.stdout]) {
      const retries = reportValue(out, 'total number of retries:');
      assert.deepEqual(
        {
          processed: reportValue(out, 'number of transactions actually processed:'),
          failed: reportValue(out, 'number of failed transactions:'),
          retried: reportValue(out, 'number of transactions retried:'),
          retries: want.retries === 'many' && Number(retries) >= 10 ? 'many' : retries,
        },
        want,
        `${what}:\n${out}`,
      );
    }
    assert.deepEqual(layout(ours.stdout), layout(theirs.stdout), what);
  }
});

test('-R with -L: transactions due more than the limit ago are skipped and counted, lag and skips in the -P lines', async (t) => {
  const s = await setup(t);
  if (!s) return;
  const f = path.join(tmpDir(), 'slow.sql');
  // 50 ms a transaction against 100 due a second: the client falls behind and skips most of them
  writeFileSync(f, 'SELECT pg_sleep(0.05);\n');
  const args = ['-n', '-c', '1', '-T', '2', '-R', '100', '-L', '10', '-P', '1', '-f', f];
  const theirs = await runPgbench(s.target, args);
  const ours = await dbsmack(s.target, [...args, '--no-history']);
  assert.equal(theirs.code, 0, theirs.stderr);
  assert.equal(ours.code, 0, ours.stderr);
  assert.deepEqual(layout(ours.stdout), layout(theirs.stdout));
  for (const [who, r] of [
    ['pgbench', theirs],
    ['dbsmack', ours],
  ] as const) {
    const processed = Number(reportValue(r.stdout, 'number of transactions actually processed:'));
    const skipped = Number(reportValue(r.stdout, 'number of transactions skipped:')?.split(' ')[0]);
    assert.ok(processed > 0 && skipped > processed, `${who}:\n${r.stdout}`);
    // each one that ran took 50 ms, over the 10 ms limit
    assert.equal(
      reportValue(r.stdout, 'number of transactions above the 10.0 ms latency limit:'),
      `${processed}/${processed} (100.000%)`,
      `${who}:\n${r.stdout}`,
    );
    assert.match(
      r.stderr,
      /^progress: 1\.0 s, [\d.]+ tps, lat [\d.]+ ms stddev [\d.]+, 0 failed, lag [\d.]+ ms, [1-9]\d* skipped$/m,
      who,
    );
  }
});

test('bad scripts: stopped before the run where pgbench stops them, clients aborted where pgbench aborts them', async (t) => {
  const s = await setup(t);
  if (!s) return;
  const bad = path.join(FIXTURES, 'bad');
  for (const f of readdirSync(bad).filter((x) => x.endsWith('.sql') && x !== 'shell-not-allowed.sql')) {
    const file = path.join(bad, f);
    const expect = /^-- expect (\d+):(\d+) /m.exec(readFileSync(file, 'utf8'));
    const theirs = await runPgbench(s.target, ['-n', '-t', '1', '-f', file]);
    const ours = await dbsmack(s.target, ['-n', '-t', '1', '-f', file, '--no-history']);
    assert.equal(theirs.code, 1, `${f}: pgbench accepted it`);
    assert.equal(theirs.stdout.includes('transaction type'), false, `${f}: pgbench ran it`);
    assert.equal(ours.code, 2, `${f}: ${ours.stderr}`);
    assert.equal(ours.stdout, '');
    assert.ok(ours.stderr.includes(`${file}:${expect?.[1]}:${expect?.[2]}: `), `${f}: ${ours.stderr}`);
    // pgbench names the same line where it names one (for \gset it names where its scanner got to)
    const line = /\.sql:(\d+): /.exec(theirs.stderr)?.[1];
    if (line !== undefined && !theirs.stderr.includes('\\gset')) {
      assert.equal(line, expect?.[1], `${f}: pgbench said ${theirs.stderr}`);
    }
  }
  const dir = tmpDir();
  // [script, what dbsmack says, what pgbench says, transactions processed before the abort]
  const runtime: [string, RegExp, RegExp, string][] = [
    [
      '\\set x :nope + 1\n',
      /client 0 aborted in command 0 \(set\) of script 0; undefined variable "nope"/,
      /undefined variable "nope"/,
      '0/2',
    ],
    [
      '\\set x 1 / 0\n',
      /client 0 aborted in command 0 \(set\) of script 0; division by zero/,
      /division by zero/,
      '0/2',
    ],
    [
      'SELECT 1 AS a WHERE false \\gset\n',
      /client 0 script 0 command 0 query 0: expected one row, got 0/,
      /client 0 script 0 command 0 query 0: expected one row, got 0/,
      '0/2',
    ],
    ['SELECT 1 AS a UNION SELECT 2 \\gset\n', /expected one row, got 2/, /expected one row, got 2/, '0/2'],
    [
      'BEGIN;\nSELECT 1;\n',
      /client 0 aborted: end of script reached without completing the last transaction/,
      /client 0 aborted: end of script reached without completing the last transaction/,
      '1/2',
    ],
    [
      'SELECT nosuchcolumn;\n',
      /client 0 script 0 aborted in command 0 query 0: ERROR: {2}column "nosuchcolumn" does not exist/,
      /client 0 script 0 aborted in command 0 query 0: ERROR: {2}column "nosuchcolumn" does not exist/,
      '0/2',
    ],
  ];
  for (const [script, ourMessage, theirMessage, processed] of runtime) {
    const file = path.join(dir, 'r.sql');
    writeFileSync(file, script);
    const theirs = await runPgbench(s.target, ['-n', '-t', '2', '-f', file]);
    const ours = await dbsmack(s.target, ['-n', '-t', '2', '-f', file, '--no-history']);
    assert.equal(theirs.code, 2, script);
    assert.equal(ours.code, 4, `${script}: ${ours.stderr}`);
    assert.match(ours.stderr, ourMessage);
    assert.match(theirs.stderr, theirMessage, `${script}: pgbench said ${theirs.stderr}`);
    assert.equal(reportValue(theirs.stdout, 'number of transactions actually processed:'), processed);
    assert.equal(reportValue(ours.stdout, 'number of transactions actually processed:'), processed);
    assert.match(ours.stderr, /Run was aborted; the above results are incomplete\./);
  }
});

/**
 * A function f(cid, x) that logs the value it got in the table `drawn`, except that the first time a client
 * gets a multiple of 4 it fails with a serialization error (the sequences it counts with are not rolled
 * back), so that a retry must bring the same value. Returns a reader of what was logged, each client's
 * values in order, which also empties the log and restarts the count.
 */
async function flipping(conn: Connection): Promise<() => Promise<string>> {
  await conn.query('create table drawn (id bigserial primary key, cid int, x bigint)');
  await conn.query('create sequence flip_0');
  await conn.query('create sequence flip_1');
  await conn.query(
    `create function f(cid int, x bigint) returns int language plpgsql as $$
     begin
       if x % 4 = 0 then
         if nextval('flip_' || cid) % 2 = 1 then
           raise exception 'made to fail' using errcode = '40001';
         end if;
       end if;
       insert into drawn (cid, x) values (cid, x);
       return 1;
     end $$`,
  );
  return async () => {
    const rows = await conn.all(
      "select cid, string_agg(x::text, ',' order by id) as xs from drawn group by cid order by cid",
    );
    await conn.query('truncate drawn');
    await conn.query('alter sequence flip_0 restart');
    await conn.query('alter sequence flip_1 restart');
    return JSON.stringify(rows);
  };
}

test("batched transactions (-M prepared, one \\set-then-statement script): pgbench's random numbers, retries replay them, aborts as pgbench's", async (t) => {
  const s = await setup(t);
  if (!s) return;
  // f() (flipping) fails some transactions once: the retry must bring the same value
  const drawn = await flipping(s.conn);
  const dir = tmpDir();
  const file = path.join(dir, 'draw.sql');
  writeFileSync(file, '\\set x random(1, 1000000)\nSELECT f(:client_id, :x);\n');
  const args = [
    '-n',
    '-M',
    'prepared',
    '-c',
    '2',
    '-t',
    '300',
    '--random-seed=7',
    '--max-tries=3',
    '-f',
    file,
  ];
  const theirs = await runPgbench(s.target, args);
  assert.equal(theirs.code, 0, theirs.stderr);
  const expected = await drawn();
  const retries = reportValue(theirs.stdout, 'total number of retries:');
  assert.ok(Number(retries) > 10, theirs.stdout);
  for (const batch of ['on', 'off']) {
    const ours = await runCli(['pgbench', ...args, '--no-history'], {
      env: { ...pgEnv(s.target), DBSMACK_BATCH: batch },
    });
    assert.equal(ours.code, 0, ours.stderr);
    assert.equal(await drawn(), expected, `batches ${batch}: another sequence of values`);
    assert.equal(reportValue(ours.stdout, 'total number of retries:'), retries, `batches ${batch}`);
    assert.equal(reportValue(ours.stdout, 'number of transactions actually processed:'), '600/600');
  }

  // a duplicate key in the middle of a batch aborts the client with pgbench's message, after the same
  // transactions
  await s.conn.query('create table uniq (x int primary key)');
  const dup = path.join(dir, 'dup.sql');
  writeFileSync(dup, '\\set x random(1, 40)\nINSERT INTO uniq VALUES (:x);\n');
  const dupArgs = ['-n', '-M', 'prepared', '-c', '1', '-t', '100', '--random-seed=3', '-f', dup];
  await abortsAsPgbench(
    s.target,
    dupArgs,
    /client 0 script 0 aborted in command 1 query 0: ERROR: {2}duplicate key/,
    () => s.conn.query('truncate uniq'),
  );
});

test("statements one after the other as one sequence (-M prepared, -M simple): a failure in their middle is pgbench's, its retry too", async (t) => {
  const s = await setup(t);
  if (!s) return;
  // f() (flipping) fails some transactions once; here it is the middle one of five statements run as one
  // sequence
  const drawn = await flipping(s.conn);
  const dir = tmpDir();
  const file = path.join(dir, 'middle.sql');
  writeFileSync(
    file,
    '\\set x random(1, 1000000)\nBEGIN;\nSELECT 1;\nSELECT f(:client_id, :x);\nSELECT 2;\nEND;\n',
  );
  const args = ['-n', '-c', '2', '-t', '200', '--random-seed=11', '-f', file];
  await s.conn.query('create table uniq (x int primary key)');
  for (const mode of ['prepared', 'simple']) {
    // retried: the same values committed, the same retries
    const retry = [...args, '-M', mode, '--max-tries=3'];
    const theirs = await runPgbench(s.target, retry);
    assert.equal(theirs.code, 0, theirs.stderr);
    const expected = await drawn();
    const retries = reportValue(theirs.stdout, 'total number of retries:');
    assert.ok(Number(retries) > 10, theirs.stdout);
    for (const batch of ['on', 'off']) {
      const out = path.join(dir, 'retry.json');
      const ours = await runCli(['pgbench', ...retry, '--no-history', '-o', out], {
        env: { ...pgEnv(s.target), DBSMACK_BATCH: batch },
      });
      assert.equal(ours.code, 0, ours.stderr);
      assert.equal(await drawn(), expected, `${mode}, batches ${batch}: another sequence of values`);
      // the transactions run as statement batches (five statements an event: executions, or text queries
      // under -M simple), a retry after the failed one's rollback
      const result = JSON.parse(readFileSync(out, 'utf8')) as RunResult;
      const batched = result.client_stats.reduce((n, c) => n + (c.batched ?? 0), 0);
      if (batch === 'on' && result.target.io === 'native')
        assert.ok(batched > 200, `${mode}: ${batched} transactions batched`);
      else assert.equal(batched, 0, `${mode}, batches ${batch}`);
      assert.equal(
        reportValue(ours.stdout, 'total number of retries:'),
        retries,
        `${mode}, batches ${batch}`,
      );
      assert.equal(reportValue(ours.stdout, 'number of transactions actually processed:'), '400/400');
    }
    // not retried: the failures counted on the command that failed (-r), the transaction rolled back, so that
    // the next one starts clean
    const failing = [...args, '-M', mode, '-r'];
    const pgb = await runPgbench(s.target, failing);
    assert.equal(pgb.code, 0, pgb.stderr);
    const failedTx = reportValue(pgb.stdout, 'number of failed transactions:');
    await drawn();
    for (const batch of ['on', 'off']) {
      const ours = await runCli(['pgbench', ...failing, '--no-history'], {
        env: { ...pgEnv(s.target), DBSMACK_BATCH: batch },
      });
      assert.equal(ours.code, 0, ours.stderr);
      await drawn();
      assert.equal(
        reportValue(ours.stdout, 'number of failed transactions:'),
        failedTx,
        `${mode}, batches ${batch}`,
      );
      const failed = Number(failedTx?.split(' ')[0]);
      assert.ok(failed > 10, ours.stdout);
      assert.match(
        ours.stdout,
        new RegExp(`^ +\\d+\\.\\d{3} +${failed}  SELECT f\\(`, 'm'),
        `${mode}, batches ${batch}`,
      );
      assert.match(ours.stdout, /^ +\d+\.\d{3} +0 {2}SELECT 2;?$/m, `${mode}, batches ${batch}`);
      // each statement timed under its own command
      for (const command of ['BEGIN', 'SELECT 1', 'SELECT f(', 'SELECT 2', 'END']) {
        const line = ours.stdout.split('\n').find((l) => l.includes(`  ${command}`));
        assert.ok(
          line !== undefined && Number(line.trim().split(/ +/)[0]) > 0,
          `${mode}, ${command}: ${line}`,
        );
      }
    }

    // a duplicate key in the middle aborts the client with pgbench's message naming that command, after the
    // same transactions
    const dup = path.join(dir, 'dup.sql');
    writeFileSync(
      dup,
      '\\set x random(1, 40)\nBEGIN;\nSELECT 1;\nINSERT INTO uniq VALUES (:x);\nSELECT 2;\nEND;\n',
    );
    const dupArgs = ['-n', '-M', mode, '-c', '1', '-t', '100', '--random-seed=3', '-f', dup];
    await abortsAsPgbench(
      s.target,
      dupArgs,
      /client 0 script 0 aborted in command 3 query 0: ERROR: {2}duplicate key/,
      () => s.conn.query('truncate uniq'),
    );
  }
});

test("a lost connection aborts the client as pgbench's does, in every path (one statement, a sequence, a batch)", async (t) => {
  const s = await setup(t);
  if (!s) return;
  const dir = tmpDir();
  // client 0 ends its own session in its third transaction (k counts them: variables live across a client's
  // transactions), in the middle of three statements that run as one sequence under -M prepared and simple
  const middle = path.join(dir, 'lost.sql');
  writeFileSync(
    middle,
    '\\set k :k + 1\nSELECT 1;\nSELECT CASE WHEN :client_id = 0 AND :k = 3 THEN pg_terminate_backend(pg_backend_pid()) END;\nSELECT 2;\n',
  );
  const lost =
    /client 0 script 0 aborted in command 2 query 0: FATAL: {2}terminating connection due to administrator command$/m;
  for (const mode of ['prepared', 'simple', 'extended']) {
    const args = ['-n', '-M', mode, '-c', '2', '-t', '5', '-D', 'k=0', '-f', middle];
    const theirs = await runPgbench(s.target, args);
    assert.match(theirs.stderr, lost, mode);
    assert.equal(reportValue(theirs.stdout, 'number of transactions actually processed:'), '7/10', mode);
    for (const batch of ['on', 'off']) {
      const ours = await runCli(['pgbench', ...args, '--no-history', '-o', path.join(dir, 'r.json')], {
        env: { ...pgEnv(s.target), DBSMACK_BATCH: batch },
      });
      const how = `${mode}, batches ${batch}`;
      assert.equal(ours.code, 4, `${how}: ${ours.stderr}`);
      assert.match(ours.stderr, lost, how);
      assert.match(ours.stderr, /Run was aborted; the above results are incomplete/, how);
      assert.equal(reportValue(ours.stdout, 'number of transactions actually processed:'), '7/10', how);
      const result = JSON.parse(readFileSync(path.join(dir, 'r.json'), 'utf8'));
      assert.equal(result.totals.reconnects ?? 0, 0, `${how}: the connection was opened again`);
    }
  }

  // one \set and one statement under -M prepared: transactions run as statement batches; a session ended in
  // the middle of a batch aborts its client after the same transactions as pgbench's
  const one = path.join(dir, 'lost-one.sql');
  writeFileSync(
    one,
    '\\set x random(1, 40)\nSELECT CASE WHEN :client_id = 0 AND :x = 17 THEN pg_terminate_backend(pg_backend_pid()) END;\n',
  );
  const args = ['-n', '-M', 'prepared', '-c', '2', '-t', '200', '--random-seed=5', '-f', one];
  const processed = await abortsAsPgbench(
    s.target,
    args,
    /client 0 script 0 aborted in command 1 query 0: FATAL: {2}terminating connection/,
  );
  assert.notEqual(processed, '400/400');
});

test("-P with statements running past -T's end: the last progress line on time, with what ended by then, as pgbench's", async (t) => {
  const s = await setup(t);
  if (!s) return;
  const dir = tmpDir();
  const f = path.join(dir, 'slow.sql');
  // started at 0 s, ends at 1.6 s: in flight when the 1 s run ends
  writeFileSync(f, 'SELECT pg_sleep(1.6);\n');
  const args = ['-n', '-c', '2', '-j', '2', '-T', '1', '-P', '1', '-f', f];
  const theirs = await runPgbench(s.target, args);
  assert.equal(theirs.code, 0, theirs.stderr);
  const first = (out: string): string | undefined => /^progress: 1\.0 s, .*$/m.exec(out)?.[0];
  assert.equal(first(theirs.stderr), 'progress: 1.0 s, 0.0 tps, lat 0.000 ms stddev 0.000, 0 failed');
  for (const batch of ['on', 'off']) {
    const ours = await runCli(['pgbench', ...args, '--no-history'], {
      env: { ...pgEnv(s.target), DBSMACK_BATCH: batch },
    });
    assert.equal(ours.code, 0, ours.stderr);
    // The transactions that ended after the deadline are in the report, not in the 1.0 s line (which
    // used to be printed after them, with them: "1.0 s, 2.0 tps, lat 1601 ms").
    assert.equal(first(ours.stderr), first(theirs.stderr), `batches ${batch}: ${ours.stderr}`);
    assert.equal(
      reportValue(ours.stdout, 'number of transactions actually processed:'),
      reportValue(theirs.stdout, 'number of transactions actually processed:'),
    );
  }
});
