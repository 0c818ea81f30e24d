/**
 * `dbsmack run FILE.smack`: the two files shipped with super-smack, unchanged, on SQLite, MariaDB and
 * PostgreSQL, with num_queries exactly clients × rounds × shots; and our own fixtures for every part of the
 * language. Runs the built CLI (npm run build first).
 */
import assert from 'node:assert/strict';
import { existsSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { after, type TestContext, test } from 'node:test';
import { loadDriver } from '../src/driver/index.ts';
import type { RunResult } from '../src/metrics/run-result.ts';
import { ROOT, runCli, tmpDir } from './helpers/cli.ts';
import { needFile } from './helpers/preconditions.ts';
import { needServer, SERVER_URLS } from './helpers/servers.ts';

/** The files shipped with super-smack, from the project's shared fixtures beside the checkout. */
const SHIPPED = path.resolve(ROOT, '..', 'shared', 'fixtures', 'super-smack');
const needShipped = (t: TestContext, name: string): boolean =>
  needFile(t, path.join(SHIPPED, name), `super-smack's shipped ${name} (../shared/fixtures/super-smack)`);
const FIX = path.join(ROOT, 'test', 'fixtures', 'smack');
/** One data directory for the file: words.dat (90,000 rows) is generated once. */
const DATA = tmpDir('dbsmack-smack-data-');

// The tables the files make (http_auth, smk_kv) are in this file's own databases, dropped with them.
after(() => rmSync(DATA, { recursive: true, force: true }));

async function runJson(args: string[], cwd?: string): Promise<{ r: RunResult; stderr: string }> {
  const res = await runCli(['run', ...args, '--format', 'json', '-D', DATA, '-q'], cwd ? { cwd } : {});
  assert.equal(res.code, 0, res.stderr);
  return { r: JSON.parse(res.stdout) as RunResult, stderr: res.stderr };
}

const backends: { name: string; db: (t: TestContext) => Promise<string | undefined> }[] = [
  { name: 'SQLite', db: async () => `sqlite:${path.join(DATA, 'shipped.sqlite')}` },
  {
    name: 'MariaDB',
    db: async (t) => ((await needServer(t, 'mysql')) ? SERVER_URLS.mysql : undefined),
  },
  {
    name: 'PostgreSQL',
    db: async (t) => ((await needServer(t, 'postgres')) ? SERVER_URLS.postgres : undefined),
  },
];

for (const b of backends) {
  test(`shipped select-key.smack and update-select.smack run unchanged on ${b.name}`, async (t) => {
    if (!needShipped(t, 'select-key.smack') || !needShipped(t, 'update-select.smack')) return;
    const db = await b.db(t);
    if (!db) return;
    const clients = 3;
    const rounds = 4;
    const sk = await runJson([
      path.join(SHIPPED, 'select-key.smack'),
      String(clients),
      String(rounds),
      '--db',
      db,
    ]);
    assert.equal(sk.r.status, 'complete');
    assert.equal(sk.r.types.select_index?.count, clients * rounds * 2);
    assert.equal(sk.r.groups?.length, 1);
    const g = sk.r.groups?.[0];
    assert.equal(g?.name, 'smacker1');
    assert.equal(g?.clients, clients);
    assert.equal(g?.types.select_index?.count, clients * rounds * 2);
    assert.equal(g?.connect_ms.count, clients);

    const us = await runJson([
      path.join(SHIPPED, 'update-select.smack'),
      String(clients),
      String(rounds),
      '--db',
      db,
    ]);
    assert.equal(us.r.types.select_index?.count, clients * rounds);
    assert.equal(us.r.types.update_index?.count, clients * rounds);
    assert.equal(us.r.events.count, clients * rounds);

    // the original text layout: tab-separated, types sorted by name
    const txt = await runCli(
      ['run', path.join(SHIPPED, 'update-select.smack'), '2', '3', '--db', db, '-D', DATA, '--classic'],
      {},
    );
    assert.equal(txt.code, 0, txt.stderr);
    const lines = txt.stdout.split('\n');
    assert.equal(lines[0], 'Query Barrel Report for client smacker');
    assert.match(lines[1] as string, /^connect: max=\d+ms {2}min=\d+ms avg= \d+ms from 2 clients $/);
    assert.equal(lines[2], 'Query_type\tnum_queries\tmax_time\tmin_time\tq_per_s');
    assert.match(lines[3] as string, /^select_index\t6\t\d+\t\d+\t\d+\.\d\d$/);
    assert.match(lines[4] as string, /^update_index\t6\t\d+\t\d+\t\d+\.\d\d$/);
    assert.equal(lines[5], '', '--classic prints only the original report');
  });
}

for (const b of backends) {
  test(`every part of the language on ${b.name}: two client types at once, dictionaries, prints`, async (t) => {
    const db = await b.db(t);
    if (!db) return;
    const res = await runCli(
      ['run', path.join(FIX, 'every-part.smack'), '3', '4', '--db', db, '-D', DATA],
      {},
    );
    assert.equal(res.code, 0, res.stderr);
    const out = res.stdout;
    assert.match(out, /Query Barrel Report for client reader\n/);
    assert.match(out, /\ncount_all\t12\t\d+\t\d+\t[\d.]+\nselect_key\t24\t/);
    assert.match(out, /reader selects=24\.000000\n/);
    assert.match(out, /reader counts=12\.000000 connects<=\d+\.\d{6}\n/);
    assert.match(
      out,
      /Query Barrel Report for client writer\n[^\n]*from 2 clients \n[^\n]*\ninsert_new\t10\t/,
    );
    assert.match(out, /writer inserts=10\.000000\n/);
    assert.match(out, /p95/, 'the extended table follows unless --classic');

    const { r } = await runJson([path.join(FIX, 'every-part.smack'), '2', '1', '--db', db]);
    assert.deepEqual(
      r.groups?.map((g) => [g.name, g.clients, Object.keys(g.types)]),
      [
        ['reader', 2, ['count_all', 'select_key']],
        ['writer', 2, ['insert_new']],
      ],
    );
    assert.equal(r.types['writer::insert_new']?.count, 10);
    assert.equal(r.types['reader::select_key']?.count, 4);
    assert.deepEqual(r.groups?.[0]?.output?.after, [
      'reader selects=4.000000',
      `reader counts=2.000000 connects<=${r.groups?.[0]?.connect_ms.max.toFixed(6)}`,
    ]);

    // words with quotes, a backslash, a semicolon and an escaped comma reached the table intact
    const { parseTarget } = await import('../src/driver/url.ts');
    const target = parseTarget(db);
    const c = await (await loadDriver(target.driver)).connect(target, { connectTimeoutMs: 3000 });
    const rows = await c.all("select v from smk_kv where k like 'new_%' order by k");
    await c.close();
    const got = new Set(rows.map((row) => String(Object.values(row)[0])));
    for (const w of ['red', "gr'een", 'o"k', 'back\\slash', 'semi;colon, comma'])
      assert.ok(got.has(w), `${w} in ${[...got]}`);
  });
}

test('sleeps in the barrel and between unloads; a query in main; rounds from two unloads', async () => {
  const db = `sqlite:${path.join(DATA, 'sleeps.sqlite')}`;
  const { r } = await runJson([path.join(FIX, 'sleeps.smack'), '--db', db]);
  assert.equal(r.types.one?.count, 3);
  assert.equal(r.events.count, 3);
  // three barrel sleeps of 50 ms and one main sleep of 100 ms: the run cannot be shorter
  assert.ok(r.elapsed_s >= 0.25, `elapsed ${r.elapsed_s}`);
  assert.equal(r.groups?.[0]?.output?.after[0]?.startsWith('one=3.000000 max='), true);
});

test('malformed files exit 2 with FILE:LINE:COLUMN and a hint, without a stack trace', async () => {
  const res = await runCli(['run', path.join(FIX, 'bad', 'unknown-property.smack'), '1', '1'], {});
  assert.equal(res.code, 2);
  assert.match(
    res.stderr,
    /unknown-property\.smack:3:3: unknown property 'colour' in a query block near 'colour'\n/,
  );
  assert.match(res.stderr, /\nhint: a query block takes: query, type, has_result_set, parsed/);
  assert.doesNotMatch(res.stderr, /at .*\.ts:\d+/);
});

test('a missing command-line argument of a shipped file is an error at the $N that needs it', async (t) => {
  if (!needShipped(t, 'select-key.smack')) return;
  const missing = await runCli(['run', path.join(SHIPPED, 'select-key.smack'), '10'], {});
  assert.equal(missing.code, 2);
  assert.match(
    missing.stderr,
    /select-key\.smack:\d+:\d+: \$2 refers to command-line argument 2, but 1 argument was given/,
  );
});

test('a smack file on stdin (-)', async () => {
  const src = readFileSync(path.join(FIX, 'sleeps.smack'), 'utf8').replace(/-0\.05/, '');
  const res = await runCli(
    ['run', '-', '--db', `sqlite:${path.join(DATA, 'stdin.sqlite')}`, '--format', 'json', '-q'],
    { input: src },
  );
  assert.equal(res.code, 0, res.stderr);
  assert.equal((JSON.parse(res.stdout) as RunResult).types.one?.count, 3);
});

test('gen_data_file runs a shell command only with --allow-shell', async () => {
  const dir = tmpDir();
  const file = path.join(dir, 'shell.smack');
  writeFileSync(
    file,
    `client "a" { db "shell"; }
table "smk_shell" { client "a"; create "create table smk_shell (n integer)"; min_rows "3"; data_file "n.dat";
  gen_data_file "seq 1 5"; }
query "q" { query "select count(*) from smk_shell"; type "count"; }
client "c" { db "shell"; query_barrel "1 q"; }
main { c.init(); c.set_num_rounds(1); c.create_threads(1); c.connect(); c.unload_query_barrel(); c.collect_threads(); }
`,
  );
  const refused = await runCli(['run', file, '-D', dir], {});
  assert.equal(refused.code, 2);
  assert.match(
    refused.stderr,
    /shell\.smack:3:\d+: gen_data_file runs a shell command \('seq 1 5'\), and shell commands run only with --allow-shell/,
  );
  assert.equal(existsSync(path.join(dir, 'n.dat')), false);
  const allowed = await runCli(['run', file, '-D', dir, '--allow-shell', '--format', 'json', '-q'], {});
  assert.equal(allowed.code, 0, allowed.stderr);
  assert.equal(readFileSync(path.join(dir, 'n.dat'), 'utf8'), '1\n2\n3\n4\n5\n');
  assert.match(allowed.stderr, /5 rows loaded client-side/);
});

test('dbsmack gen-data -n N -f FORMAT', async () => {
  const res = await runCli(['gen-data', '-n', '3', '-f', '%4-4s%n,%n'], {});
  assert.equal(res.code, 0, res.stderr);
  assert.match(res.stdout, /^[a-z]{4}1,1\n[a-z]{4}2,2\n[a-z]{4}3,3\n$/);
  const bad = await runCli(['gen-data', '-n', '3', '-f', '%q'], {});
  assert.equal(bad.code, 2);
  assert.match(bad.stderr, /gen-data: 'q' at position 2 is not a gen-data field/);
});
