/** Bad input as a new user makes it: one clear line, a documented exit code, no stack trace, no password. */
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import { runCli, tmpDir } from './helpers/cli.ts';
import { MYSQL_URL, needServer } from './helpers/servers.ts';

const PASSWORD = 'Zq7-not-to-be-seen';

function assertOneLineError(stderr: string, pattern: RegExp): void {
  const lines = stderr.trimEnd().split('\n');
  assert.match(lines[0] ?? '', pattern);
  assert.ok(lines.length <= 2, `at most an error line and a hint line:\n${stderr}`);
  if (lines[1] !== undefined) assert.match(lines[1], /^hint: |^\(see dbsmack --help\)$/);
  assert.doesNotMatch(stderr, /\n\s+at /, 'no stack trace');
}

test('a closed port with a password in the URL: one line, exit 3, the password nowhere', async () => {
  const dir = tmpDir();
  const out = path.join(dir, 'r.json');
  for (const scheme of ['mysql', 'postgres']) {
    const url = `${scheme}://bench:${PASSWORD}@127.0.0.1:1/test`;
    const r = await runCli(['run', 'select1', '--db', url, '--out', out, '--format', 'json'], { cwd: dir });
    assert.equal(r.code, 3, r.stderr);
    assertOneLineError(
      r.stderr,
      new RegExp(
        `^dbsmack: cannot connect to ${scheme}://bench:\\*\\*\\*@127\\.0\\.0\\.1:1/test: .*ECONNREFUSED`,
      ),
    );
    assert.equal(r.stdout, '');
    assert.ok(!r.stderr.includes(PASSWORD));
  }
  for (const f of readdirSync(dir)) assert.ok(!readFileSync(path.join(dir, f), 'utf8').includes(PASSWORD), f);
  // Even with --debug the stack trace is redacted.
  const d = await runCli(['run', 'select1', '--db', `mysql://u:${PASSWORD}@127.0.0.1:1/x`, '--debug']);
  assert.equal(d.code, 3);
  assert.ok(!d.stderr.includes(PASSWORD));
});

test('wrong credentials: exit 3 with a hint, no password', async (t) => {
  if (!(await needServer(t, 'mysql'))) return;
  const url = MYSQL_URL.replace('mysql://root@', `mysql://root:${PASSWORD}@`);
  const r = await runCli(['run', 'select1', '--db', url]);
  assert.equal(r.code, 3, r.stderr);
  // the database of the test URL (DBSMACK_TEST_MYSQL_URL may name another than test)
  const db = new URL(MYSQL_URL).pathname.slice(1).replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  assertOneLineError(
    r.stderr,
    new RegExp(
      `^dbsmack: cannot connect to mysql://root:\\*\\*\\*@127\\.0\\.0\\.1:3306/${db}: Access denied`,
    ),
  );
  assert.match(r.stderr, /hint: check the user name and password/);
  assert.ok(!r.stderr.includes(PASSWORD));
});

test('usage errors exit 2 with one line', async () => {
  const cases: [string[], RegExp][] = [
    [['frobnicate'], /^dbsmack: unknown command 'frobnicate'/],
    [
      ['run', 'select1', '--no-such-option', '1'],
      /^dbsmack: unknown option '--no-such-option': neither run nor select1 has it/,
    ],
    [['run', 'nosuch'], /^dbsmack: unknown workload 'nosuch'/],
    [['run', 'select1', '--clients', '0'], /^dbsmack: --clients expects a positive integer, got '0'/],
    [['run', 'select1', '--time', 'soon'], /^dbsmack: --time expects a number of seconds, got 'soon'/],
    [
      ['run', 'select1', '--db', `mysql://u:${PASSWORD}@h:port/db`],
      /^dbsmack: malformed database URL 'mysql:\/\/u:\*\*\*@h:port\/db'/,
    ],
    [['run', 'select1', '--db', 'oracle://x'], /^dbsmack: unsupported database URL 'oracle:\/\/x'/],
    [['run', 'select1', '--format', 'xml'], /^dbsmack: unknown format 'xml'/],
    [['run', './missing.smack'], /^dbsmack: \.\/missing\.smack: no such file/],
    [['run'], /^dbsmack: missing required argument 'workload'/],
  ];
  for (const [args, pattern] of cases) {
    const r = await runCli(args);
    assert.equal(r.code, 2, `${args.join(' ')}: ${r.stderr}`);
    assertOneLineError(r.stderr, pattern);
    assert.ok(!r.stderr.includes(PASSWORD));
  }
});

test('--help and --version exit 0 and document the options', async () => {
  const h = await runCli(['run', '--help']);
  assert.equal(h.code, 0);
  for (const opt of [
    '--db',
    '--clients',
    '--threads',
    '--rounds',
    '--events',
    '--time',
    '--warmup',
    '--report-interval',
    '--max-tries',
    '--ignore-errors',
    '--format',
    '--out',
  ]) {
    assert.ok(h.stdout.includes(opt), opt);
  }
  const v = await runCli(['--version']);
  assert.equal(v.code, 0);
  assert.match(v.stdout, /^\d+\.\d+\.\d+/);
  const l = await runCli(['list']);
  assert.match(l.stdout, /^select1\s/m);
});
