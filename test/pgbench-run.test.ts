/**
 * pgbench scripts elsewhere: `dbsmack pgbench`'s getopt-style command line; `dbsmack run FILE.sql` and
 * `run pgbench` (statement types named after the script and line, `--format pgbench`, sweeps); the
 * pgbench tables and built-in scripts on MariaDB and SQLite (`-i` in their dialect, TPC-B's balances).
 * The runs need the CLI built (`npm run build`).
 */
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import { parsePgbenchArgs } from '../src/cli/pgbench.ts';
import { loadDriver } from '../src/driver/index.ts';
import type { Target } from '../src/driver/types.ts';
import { parseTarget } from '../src/driver/url.ts';
import type { RunResult } from '../src/metrics/run-result.ts';
import { runCli, tmpDir } from './helpers/cli.ts';
import { ownDatabase } from './helpers/own-database.ts';
import { reportValue } from './helpers/pgbench.ts';

test("the command line is read as pgbench's getopt_long reads it", () => {
  const a = parsePgbenchArgs([
    '-c4',
    '-j',
    '2',
    '-nS',
    '--time=5',
    '--cl',
    '3',
    '-f',
    'a.sql@2',
    '-Dx=1',
    '-D',
    'y=2',
    'mydb',
  ]);
  assert.deepEqual(a.opts, [
    { name: 'client', value: '4' },
    { name: 'jobs', value: '2' },
    { name: 'no-vacuum', value: true },
    { name: 'select-only', value: true },
    { name: 'time', value: '5' },
    { name: 'client', value: '3' },
    { name: 'file', value: 'a.sql@2' },
    { name: 'define', value: 'x=1' },
    { name: 'define', value: 'y=2' },
  ]);
  assert.deepEqual(a.positional, ['mydb']);
  assert.throws(() => parsePgbenchArgs(['-x']), /invalid option -- 'x'/);
  assert.throws(() => parsePgbenchArgs(['--pro', '1']), /option '--pro' is ambiguous/);
  assert.throws(() => parsePgbenchArgs(['--nope']), /unrecognized option '--nope'/);
  assert.throws(() => parsePgbenchArgs(['-c']), /option requires an argument -- 'c'/);
  assert.throws(() => parsePgbenchArgs(['--connect=1']), /doesn't allow an argument/);
});

test("pgbench's option rules: bad values and mixed modes are usage errors (exit 2) before anything connects", async () => {
  const bad: [string[], RegExp][] = [
    [['-t', '5', '-T', '5'], /specify either a number of transactions \(-t\) or a duration \(-T\), not both/],
    [['-c', '0'], /-c\/--clients must be in range 1\.\.2147483647/],
    [['-c', 'x'], /invalid value "x" for option -c\/--clients/],
    [['-i', '-c', '2'], /cannot be used in initialization \(-i\) mode/],
    [['-F', '90'], /cannot be used in benchmarking mode/],
    [['-M', 'fast'], /invalid query mode \(-M\): "fast"/],
    [
      ['--max-tries', '0', '-t', '3'],
      /an unlimited number of transaction tries can only be used with --latency-limit or a duration/,
    ],
    [['-b', 'nosuch'], /no builtin script found for name "nosuch"/],
    [['-D', 'novalue'], /invalid variable definition: "novalue"/],
    [['-l'], /--log is not supported by dbsmack pgbench/],
    [['-f', 'a.sql@x'], /invalid weight specification: @x/],
    [['db1', 'db2'], /too many command-line arguments \(first is "db2"\)/],
  ];
  for (const [args, message] of bad) {
    const r = await runCli(['pgbench', ...args, '--db', 'sqlite::memory:']);
    assert.equal(r.code, 2, `${args.join(' ')}: ${r.stderr}`);
    assert.match(r.stderr, message, args.join(' '));
    assert.equal(r.stdout, '');
  }
  const help = await runCli(['pgbench', '--help']);
  assert.equal(help.code, 0);
  assert.match(help.stdout, /-M, --protocol=simple\|extended\|prepared/);
  const show = await runCli(['pgbench', '--show-script=select']);
  assert.equal(show.code, 0);
  assert.match(
    show.stderr,
    /^-- select-only: <builtin: select only>\n\\set aid random\(1, 100000 \* :scale\)\nSELECT abalance/,
  );
});

test("dbsmack run FILE.sql on SQLite: statement types named after the script and line, pgbench's report", async () => {
  const dir = tmpDir();
  const file = path.join(dir, 'kv.sql');
  writeFileSync(
    file,
    '\\set k random(1, 100)\nINSERT INTO kv VALUES (:k, :client_id) ON CONFLICT (k) DO UPDATE SET v = kv.v + 1;\nSELECT v FROM kv WHERE k = :k \\gset\n\\if :v < 0\n  SELECT 1/0;\n\\endif\n',
  );
  const db = `sqlite:${path.join(dir, 'kv.sqlite')}`;
  const target = parseTarget(db);
  const conn = await (await loadDriver('sqlite')).connect(target, { connectTimeoutMs: 1000 });
  await conn.query('create table kv (k integer primary key, v integer)');
  await conn.close();
  const out = path.join(dir, 'r.json');
  const r = await runCli(
    [
      'run',
      file,
      '--db',
      db,
      '--clients',
      '2',
      '--rounds',
      '25',
      '--per-command',
      '-o',
      out,
      '--format',
      'pgbench',
    ],
    { cwd: dir },
  );
  assert.equal(r.code, 0, r.stderr);
  assert.match(r.stdout, /^transaction type: kv\.sql$/m);
  assert.match(r.stdout, /^number of transactions actually processed: 50\/50$/m);
  assert.match(r.stdout, /^statement latencies in milliseconds, failures and retries:$/m);
  assert.match(r.stdout, /^ +\d+\.\d{3} +0 +0 {2}\\set k random\(1, 100\)$/m);
  assert.match(r.stdout, /^ +\d+\.\d{3} +0 +0 {2}SELECT v FROM kv WHERE k = :k $/m);
  const result = JSON.parse((await import('node:fs')).readFileSync(out, 'utf8')) as RunResult;
  assert.deepEqual(Object.keys(result.types).sort(), ['kv.sql:2', 'kv.sql:3']);
  assert.equal(result.types['kv.sql:2']?.count, 50);
  assert.equal(result.steps?.['kv.sql:1']?.count, 50, 'the \\set is timed under --per-command');
  assert.equal(result.pgbench?.processed, 50);
  assert.equal(result.pgbench?.scripts[0]?.commands.length, 6);
  // a bad script stops run the same way
  const badFile = path.join(dir, 'bad.sql');
  writeFileSync(badFile, 'SELECT 1;\n\\set x random(1)\n');
  const bad = await runCli(['run', badFile, '--db', db], { cwd: dir });
  assert.equal(bad.code, 2);
  assert.match(
    bad.stderr,
    /^dbsmack: bad\.sql:2:8: unexpected number of arguments \(random\) in command "set"$/m,
  );
});

test('a sweep runs a pgbench script at each client count', async () => {
  const dir = tmpDir();
  const file = path.join(dir, 'one.sql');
  writeFileSync(file, 'SELECT :client_id;\n');
  const out = path.join(dir, 'sweep.json');
  const r = await runCli(
    [
      'sweep',
      file,
      '--db',
      `sqlite:${path.join(dir, 'x.sqlite')}`,
      '--clients',
      '1,2',
      '--repeat',
      '1',
      '--rounds',
      '20',
      '-o',
      out,
    ],
    { cwd: dir },
  );
  assert.equal(r.code, 0, r.stderr);
  const doc = JSON.parse((await import('node:fs')).readFileSync(out, 'utf8')) as {
    points: { clients: number }[];
  };
  assert.deepEqual(
    doc.points.map((p) => p.clients),
    [1, 2],
  );
});

async function balances(target: Target): Promise<string[]> {
  const conn = await (await loadDriver(target.driver)).connect(target, { connectTimeoutMs: 5000 });
  try {
    const out: string[] = [];
    for (const q of [
      'select sum(abalance) as s from pgbench_accounts',
      'select sum(tbalance) as s from pgbench_tellers',
      'select sum(bbalance) as s from pgbench_branches',
      'select sum(delta) as s from pgbench_history',
      'select count(*) as s from pgbench_history',
    ]) {
      out.push(String((await conn.all(q))[0]?.s));
    }
    return out;
  } finally {
    await conn.close();
  }
}

for (const which of ['mysql', 'sqlite'] as const) {
  test(`pgbench on ${which === 'mysql' ? 'MariaDB' : 'SQLite'}: -i in its dialect, the built-in scripts, TPC-B's balances`, async (t) => {
    let db: string;
    let target: Target | undefined;
    if (which === 'mysql') {
      const own = await ownDatabase(t, 'mysql', 'pgbench');
      if (!own) return;
      target = own.target;
      db = own.url;
    } else {
      db = `sqlite:${path.join(tmpDir(), 'pgbench.sqlite')}`;
      target = parseTarget(db);
    }
    const init = await runCli(['pgbench', '--db', db, '-i', '-s', '1']);
    assert.equal(init.code, 0, init.stderr);
    assert.match(init.stderr, /creating primary keys\.\.\.\ndone in /);
    const tpcb = await runCli([
      'pgbench',
      '--db',
      db,
      '-c',
      '3',
      '-t',
      '20',
      '-M',
      'prepared',
      '--max-tries',
      '20',
      '-r',
    ]);
    assert.equal(tpcb.code, 0, tpcb.stderr);
    assert.equal(reportValue(tpcb.stdout, 'number of transactions actually processed:'), '60/60');
    assert.equal(reportValue(tpcb.stdout, 'scaling factor:'), '1');
    if (which === 'mysql')
      assert.match(tpcb.stdout, /^ +\d+\.\d{3} +0 +\d+ {2}COMMIT;$/m, 'MariaDB has no END');
    const [a, tl, b, h, n] = await balances(target);
    assert.equal(n, '60');
    assert.notEqual(h, '0');
    assert.deepEqual([a, tl, b], [h, h, h]);
    for (const mode of ['simple', 'extended']) {
      const sel = await runCli(['pgbench', '--db', db, '-c', '2', '-t', '10', '-S', '-M', mode, '-n']);
      assert.equal(sel.code, 0, sel.stderr);
      assert.equal(reportValue(sel.stdout, 'number of transactions actually processed:'), '20/20');
    }
    const cleanup = await runCli(['cleanup', 'pgbench', '--db', db]);
    assert.equal(cleanup.code, 0, cleanup.stderr);
  });
}
