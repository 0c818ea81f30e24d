/**
 * Failures around the run itself, as a new user meets them: a refused login is "cannot connect" (exit 3,
 * with the hint) on every command and connector, whatever the workload; every command names its own
 * action; `prepare` over tables that exist names `cleanup`; `cleanup` of a smack file needs no `$1 $2`.
 * Runs the built CLI (npm run build first).
 */
import assert from 'node:assert/strict';
import { copyFileSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import { DbError } from '../src/driver/errors.ts';
import { parseTarget } from '../src/driver/url.ts';
import { AdminConnectError } from '../src/engine/admin.ts';
import { ConnectError, UsageError, UserError } from '../src/errors.ts';
import { adminError, connectHint } from '../src/run/run-errors.ts';
import { ROOT, runCli, tmpDir } from './helpers/cli.ts';
import { needServer, SERVER_URLS } from './helpers/servers.ts';

const FIX = path.join(ROOT, 'test', 'fixtures', 'smack');

/** The test URL with its user replaced by one the server does not know. */
function withUnknownUser(url: string): string {
  const u = new URL(url);
  u.username = 'nobody_dbsmack_test';
  u.password = '';
  return u.toString();
}

test('every refused-login code is "cannot connect" with the hint, from any phase', () => {
  const target = parseTarget('postgres://u:secret@127.0.0.1:5432/db');
  // MariaDB 1698 (no password / unix_socket account), 1045, 1044; PostgreSQL 28000 (no such role), 28P01.
  for (const code of ['1045', '1698', '1044', '28000', '28P01']) {
    assert.equal(connectHint(code), 'check the user name and password', code);
    for (const e of [
      new DbError('fatal', code, 'Access denied'),
      new AdminConnectError(new DbError('fatal', code, 'Access denied')),
    ]) {
      assert.throws(
        () => adminError(e, target, { action: 'run' }),
        (err: unknown) => {
          assert.ok(err instanceof ConnectError, `${code}: ${String(err)}`);
          assert.equal(err.exitCode, 3);
          assert.match(err.message, /^cannot connect to postgres:\/\/u:\*\*\*@127\.0\.0\.1:5432\/db: /);
          assert.equal(err.hint, 'check the user name and password');
          return true;
        },
      );
    }
  }
  // Any failure to open a connection is one, whatever its code (too many connections here).
  assert.throws(
    () =>
      adminError(new AdminConnectError(new DbError('fatal', '1040', 'Too many connections')), target, {
        action: 'prepare',
      }),
    (err: unknown) => err instanceof ConnectError && /max_connections/.test(err.hint ?? ''),
  );
  // Other errors name the command that failed, not "prepare".
  assert.throws(
    () => adminError(new DbError('fatal', '1064', 'syntax'), target, { action: 'run' }),
    (err: unknown) => err instanceof UserError && err.exitCode === 4 && /^run failed on /.test(err.message),
  );
  // prepare over existing tables: a usage error that names the cleanup command.
  for (const e of [
    new DbError('fatal', '1050', "Table 'sbtest1' already exists"),
    new DbError('fatal', '42P07', 'relation "sbtest1" already exists'),
    new DbError('fatal', 'SQLITE_ERROR', 'table sbtest1 already exists'),
  ]) {
    assert.throws(
      () => adminError(e, target, { action: 'prepare', cleanup: 'dbsmack cleanup oltp_point_select' }),
      (err: unknown) =>
        err instanceof UsageError &&
        /the tables exist already/.test(err.message) &&
        /`dbsmack cleanup oltp_point_select`/.test(err.hint ?? ''),
    );
  }
});

for (const server of ['mysql', 'postgres'] as const) {
  test(`a refused login on ${server}: exit 3 and the hint, for run, prepare, cleanup and sweep, on every connector`, async (t) => {
    if (!(await needServer(t, server))) return;
    const bad = withUnknownUser(SERVER_URLS[server]);
    const connectors = server === 'mysql' ? ['dbsmack', 'mysql2', 'mariadb'] : ['dbsmack', 'pg'];
    const cases: string[][] = [];
    for (const c of connectors) {
      const url = `${bad}${bad.includes('?') ? '&' : '?'}connector=${c}`;
      // select1 meets the refusal in the load workers; oltp_point_select already in its table check.
      cases.push(['run', 'select1', '--db', url, '--time', '1']);
      cases.push(['run', 'oltp_point_select', '--db', url, '--time', '1']);
    }
    cases.push(['prepare', 'oltp_point_select', '--db', bad, '--table-size', '10']);
    cases.push(['cleanup', 'oltp_point_select', '--db', bad]);
    cases.push(['sweep', 'oltp_point_select', '--db', bad, '--clients', '1', '--repeat', '1', '--time', '1']);
    for (const args of cases) {
      const r = await runCli(args);
      const what = `${args.join(' ')}:\n${r.stderr}`;
      assert.equal(r.code, 3, what);
      assert.match(r.stderr, /^dbsmack: cannot connect to (mysql|postgres):\/\/nobody_dbsmack_test@/m, what);
      assert.match(r.stderr, /^hint: check the user name and password$/m, what);
      assert.doesNotMatch(r.stderr, /prepare failed/, what);
    }
  });
}

const tableBackends = [
  { name: 'SQLite', url: async () => `sqlite:${path.join(tmpDir(), 'p.sqlite')}` },
  {
    name: 'MariaDB',
    url: async (t: Parameters<typeof needServer>[0]) =>
      (await needServer(t, 'mysql')) ? SERVER_URLS.mysql : undefined,
  },
  {
    name: 'PostgreSQL',
    url: async (t: Parameters<typeof needServer>[0]) =>
      (await needServer(t, 'postgres')) ? SERVER_URLS.postgres : undefined,
  },
];

/** A workload module of this test's own, whose table no other test touches. */
function ownTableWorkload(): string {
  const file = path.join(tmpDir(), 'own-table.mjs');
  writeFileSync(
    file,
    `export default {
  name: 'own_table',
  async prepare({ conn }) { await conn.query('CREATE TABLE dbsmack_prepare_twice (k INTEGER PRIMARY KEY)'); },
  async cleanup({ conn }) { await conn.query('DROP TABLE IF EXISTS dbsmack_prepare_twice'); },
  client(ctx) { return { event: () => ctx.query('q', 'SELECT 1') }; },
};
`,
  );
  return file;
}

for (const b of tableBackends) {
  test(`prepare twice on ${b.name}: the tables exist, and the hint names cleanup`, async (t) => {
    const url = await b.url(t);
    if (!url) return;
    // sysbench's tables on a file of this test's own; a module's table of its own on the shared servers
    const sqlite = url.startsWith('sqlite:');
    const workload = sqlite ? ['oltp_point_select', '--table-size', '10'] : [ownTableWorkload()];
    const args = [...workload, '--db', url];
    await runCli(['cleanup', ...args]);
    try {
      const first = await runCli(['prepare', ...args]);
      assert.equal(first.code, 0, first.stderr);
      const again = await runCli(['prepare', ...args]);
      assert.equal(again.code, 2, again.stderr);
      assert.match(again.stderr, /^dbsmack: prepare: the tables exist already in /m);
      assert.match(again.stderr, /^hint: drop them first with `dbsmack cleanup \S+ --db [^`]+`/m);
      assert.doesNotMatch(again.stderr, /prepare failed/);
    } finally {
      const c = await runCli(['cleanup', ...args]);
      assert.equal(c.code, 0, c.stderr);
    }
  });
}

test('prepare and cleanup of a smack file need none of its $1 $2', async () => {
  const data = tmpDir();
  const file = path.join(data, 'every-part.smack');
  copyFileSync(path.join(FIX, 'every-part.smack'), file);
  const p = await runCli(['prepare', file, '-D', data]);
  assert.equal(p.code, 0, p.stderr);
  const c = await runCli(['cleanup', file, '-D', data]);
  assert.equal(c.code, 0, c.stderr);
  assert.match(c.stderr, /dropped table smk_kv/);
  // The arguments of the documented `cleanup FILE ARGS…` form are still accepted.
  const withArgs = await runCli(['cleanup', file, '2', '3', '-D', data]);
  assert.equal(withArgs.code, 0, withArgs.stderr);
  // A run still needs them, and says so with the position.
  const run = await runCli(['run', file, '-D', data]);
  assert.equal(run.code, 2);
  assert.match(run.stderr, /every-part\.smack:\d+:\d+: \$\d refers to command-line argument/);
});

test('a failure while a run sets up names the command: run, sweep', async () => {
  const data = tmpDir();
  const file = path.join(data, 'bad-create.smack');
  writeFileSync(
    file,
    readFileSync(path.join(FIX, 'every-part.smack'), 'utf8').replace(
      'create table smk_kv (',
      'crate table smk_kv (',
    ),
  );
  const run = await runCli(['run', file, '1', '1', '-D', data]);
  assert.equal(run.code, 4, run.stderr);
  assert.match(run.stderr, /^dbsmack: run failed on sqlite:.*crate/m);
  const sweep = await runCli(['sweep', file, '--clients', '1', '--repeat', '1', '-D', data, '1']);
  assert.equal(sweep.code, 4, sweep.stderr);
  assert.match(sweep.stderr, /^dbsmack: sweep failed on sqlite:.*crate/m);
  const prepare = await runCli(['prepare', file, '-D', data]);
  assert.equal(prepare.code, 4, prepare.stderr);
  assert.match(prepare.stderr, /^dbsmack: prepare failed on sqlite:.*crate/m);
});

test('a DbError records no JavaScript stack unless --debug asked for stacks, and leaves the stack limit as it was', () => {
  const limit = Error.stackTraceLimit;
  const plain = new DbError('retryable', '40001', 'could not serialize access');
  assert.equal(plain.stack, 'DbError: could not serialize access');
  assert.equal(Error.stackTraceLimit, limit);
  assert.match(new Error('x').stack ?? '', /\n +at /, 'other errors keep theirs');
  DbError.stacks = true;
  try {
    assert.match(new DbError('fatal', '42P01', 'no such table').stack ?? '', /\n +at /);
  } finally {
    DbError.stacks = false;
  }
});
