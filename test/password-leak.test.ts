/**
 * No byte of a password leaves the process: a password that holds unencoded '@' and ':' (user information
 * runs up to the last '@', as in WHATWG URL), one with '/', '?' or '#' (refused with a hint, still masked),
 * percent-encoded ones, sysbench's --pgsql-password and PGPASSWORD. Checked on stdout, stderr, --out, the
 * history and --debug traces.
 */
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import { redactSecrets } from '../src/driver/redact.ts';
import { parseTarget, redactUrlText } from '../src/driver/url.ts';
import { UsageError } from '../src/errors.ts';
import { runCli, tmpDir } from './helpers/cli.ts';
import { MYSQL_URL, needServer, PG_URL } from './helpers/servers.ts';

/** Random-looking pieces, so that any one of them found in an output can only come from the password. */
const PASSWORD = 'Zq7x@Wv9k:Pm4t@Hr2j';

/** Every four-byte piece of the password: none may appear anywhere. */
function pieces(pw: string): string[] {
  const out: string[] = [];
  for (let i = 0; i + 4 <= pw.length; i++) out.push(pw.slice(i, i + 4));
  return out;
}

function assertNoPiece(text: string, where: string, pw = PASSWORD): void {
  for (const p of pieces(pw)) assert.ok(!text.includes(p), `${where} holds '${p}' of the password:\n${text}`);
}

function assertDirClean(dir: string, pw = PASSWORD): void {
  for (const f of readdirSync(dir, { recursive: true }) as string[]) {
    const file = path.join(dir, f);
    let text: string;
    try {
      text = readFileSync(file, 'latin1');
    } catch {
      continue; // a directory
    }
    assertNoPiece(text, file, pw);
  }
}

test('user information runs up to the last @; the first : splits user and password', () => {
  for (const scheme of ['mysql', 'mariadb', 'postgres', 'postgresql', 'pg']) {
    const t = parseTarget(`${scheme}://root:${PASSWORD}@127.0.0.1:3307/test`, {});
    assert.equal(t.user, 'root');
    assert.equal(t.password, PASSWORD);
    assert.equal(t.host, '127.0.0.1');
    assert.equal(t.port, 3307);
    assert.equal(t.database, 'test');
    assert.equal(t.redactedUrl, `${scheme}://root:***@127.0.0.1:3307/test`);
  }
  const enc = parseTarget(`mysql://root:${encodeURIComponent(PASSWORD)}@h/db`, {});
  assert.equal(enc.password, PASSWORD);
  assert.equal(enc.redactedUrl, 'mysql://root:***@h:3306/db');
  // a percent-encoded form encodeURIComponent would not produce is a secret too, as typed
  parseTarget('mysql://root:Gx8%21Lw3%7eQp@h/db', {});
  assert.equal(redactSecrets('typed Gx8%21Lw3%7eQp'), 'typed ***');
  assert.equal(redactSecrets('decoded Gx8!Lw3~Qp'), 'decoded ***');
});

test("a password with an unencoded '/', '?' or '#' is refused with a hint, and masked", () => {
  for (const pw of ['Jk5/Tn8@Yb3r', 'Jk5?Tn8@Yb3r', 'Jk5#Tn8@Yb3r', 'Jk5/Tn8']) {
    for (const url of [`mysql://root:${pw}@127.0.0.1/test`, `postgres://root:${pw}@127.0.0.1:5432/test`]) {
      try {
        parseTarget(url, {});
        assert.fail(`${url} was accepted`);
      } catch (e) {
        assert.ok(e instanceof UsageError, String(e));
        assertNoPiece(`${e.message}\n${e.hint}`, url, pw);
        assert.match(e.hint ?? '', /percent-encode/);
      }
    }
  }
  // a user and password with the host left out: no port is shown
  for (const url of ['mysql://root:Ty6Km2Wq', 'mysql://root:Ty6Km2Wq/test']) {
    assert.throws(
      () => parseTarget(url, {}),
      (e: unknown) => e instanceof UsageError && !e.message.includes('Ty6K') && !e.message.includes('Km2W'),
    );
  }
});

test('text about a URL is masked up to the last @', () => {
  assert.equal(
    redactUrlText(`mysql://root:${PASSWORD}@127.0.0.1:notaport/test`),
    'mysql://root:***@127.0.0.1:notaport/test',
  );
  assert.equal(redactUrlText('mysql://root:Jk5/Tn8@h/db'), 'mysql://root:***@h/db');
  assert.equal(redactUrlText('mysql://root@h/db'), 'mysql://root@h/db');
  assert.equal(redactSecrets('see mysql://u:Bq3@Lm7@Rt9@host/db, then'), 'see mysql://u:***@host/db, then');
});

test('a refused login with a password full of @ and : shows none of it, even with --debug', async (t) => {
  if (!(await needServer(t, 'mysql'))) return;
  const dir = tmpDir('dbsmack-pw-');
  // root has no password on the test server: any password is refused
  const url = MYSQL_URL.replace(/^mysql:\/\/root@/, `mysql://root:${PASSWORD}@`);
  assert.notEqual(url, MYSQL_URL, 'the test URL starts with mysql://root@');
  const r = await runCli(['run', 'select1', '--db', url, '--debug', '--out', path.join(dir, 'r.json')], {
    cwd: dir,
  });
  assert.equal(r.code, 3, r.stderr);
  assert.match(r.stderr, /cannot connect to mysql:\/\/root:\*\*\*@127\.0\.0\.1/);
  assertNoPiece(r.stdout + r.stderr, 'the output');
  assertDirClean(dir);
});

test('a run whose URL, PGPASSWORD or --pgsql-password holds the password: not in any output, file or the history', async (t) => {
  // The test server trusts local logins: the password is sent nowhere and the run completes.
  if (!(await needServer(t, 'postgres'))) return;
  const dir = tmpDir('dbsmack-pw-');
  const env = { DBSMACK_HISTORY: path.join(dir, 'history.sqlite') };
  const u = new URL(PG_URL.replace(/^postgres(ql)?:/, 'http:'));
  const withPw = PG_URL.replace(/^(postgres(?:ql)?:\/\/)([^@/]*)@/, `$1$2:${PASSWORD}@`);
  assert.notEqual(withPw, PG_URL, 'the test URL names a user');
  const common = ['--time', '0.3', '--debug', '--report-interval', '0.1'];
  const runs: { args: string[]; env?: NodeJS.ProcessEnv }[] = [
    { args: ['run', 'select1', '--db', withPw, '--format', 'json', ...common] },
    { args: ['run', 'select1', '--db', withPw, '--format', 'sysbench', ...common] },
    { args: ['run', 'select1', '--db', PG_URL, ...common], env: { PGPASSWORD: PASSWORD } },
    {
      args: [
        'run',
        'select1',
        '--pgsql-host',
        u.hostname,
        '--pgsql-port',
        u.port || '5432',
        '--pgsql-user',
        decodeURIComponent(u.username),
        '--pgsql-password',
        PASSWORD,
        '--pgsql-db',
        u.pathname.slice(1),
        ...common,
      ],
    },
  ];
  for (const [i, run] of runs.entries()) {
    const r = await runCli([...run.args, '--out', path.join(dir, `r${i}.json`)], {
      cwd: dir,
      env: { ...env, ...run.env },
    });
    assert.equal(r.code, 0, r.stderr);
    assertNoPiece(r.stdout + r.stderr, `the output of ${run.args.join(' ')}`);
  }
  const h = await runCli(['history', '--format', 'json'], { cwd: dir, env });
  assert.equal(h.code, 0, h.stderr);
  assert.equal((JSON.parse(h.stdout) as unknown[]).length, runs.length);
  assertDirClean(dir);
});
