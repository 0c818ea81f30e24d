/**
 * dbsmack's own MySQL/MariaDB client (connector `dbsmack`, src/driver/mysql-lean.ts) against the real
 * server: row counts and matched-rows semantics, typed `all()` rows, results spanning many socket reads,
 * errors that leave the connection usable, deadlock and kill classification, FIFO queueing of concurrent
 * calls, password authentication, the Unix socket, and the text protocol's escaping.
 */
import assert from 'node:assert/strict';
import { constants, generateKeyPairSync, privateDecrypt, randomBytes } from 'node:crypto';
import { createRequire } from 'node:module';
import net from 'node:net';
import path from 'node:path';
import { type TestContext, test } from 'node:test';
import type { DbError } from '../src/driver/errors.ts';
import { connectMysqlLean } from '../src/driver/mysql-lean.ts';
import {
  authResponse,
  cachingSha2Password,
  nativePassword,
  rsaEncryptedPassword,
} from '../src/driver/mysql-lean-auth.ts';
import { interpolate } from '../src/driver/mysql-lean-text.ts';
import type { Connection, Target } from '../src/driver/types.ts';
import { expectError } from './helpers/db-errors.ts';
import { missing, needFile } from './helpers/preconditions.ts';
import { needServer, SERVER_STATE_LOCK, withServerLock } from './helpers/servers.ts';
import { waitFor } from './helpers/wait.ts';

function connect(target: Target, timeoutMs = 5000): Promise<Connection> {
  return connectMysqlLean(target, { connectTimeoutMs: timeoutMs, load: true });
}

async function server(t: TestContext): Promise<Target | undefined> {
  return needServer(t, 'mysql');
}

const table = (what: string): string => `dbsmack_lean_${what}_${process.pid}`;

test('lean mysql: statements, row counts, matched rows and binary parameters', async (t) => {
  const target = await server(t);
  if (!target) return;
  const c = await connect(target);
  const tb = table('rows');
  try {
    assert.match(c.serverVersion, /^(MariaDB|MySQL) \d+\.\d+/, c.serverVersion);
    assert.ok((c.sessionId ?? 0) > 0, 'the connection id is the session id');
    const [{ id }] = (await c.all('SELECT CONNECTION_ID() AS id')) as [{ id: number }];
    assert.equal(id, c.sessionId, 'sessionId is CONNECTION_ID()');
    await c.query(`DROP TABLE IF EXISTS ${tb}`);
    assert.equal(
      await c.query(
        `CREATE TABLE ${tb} (id INT PRIMARY KEY, k BIGINT, s VARCHAR(100), f DOUBLE, b TINYINT, bin VARBINARY(10), d DATETIME)`,
      ),
      0,
      'DDL affects no rows',
    );
    const ins = await c.prepare(`INSERT INTO ${tb} VALUES (?, ?, ?, ?, ?, ?, ?)`);
    const when = new Date(2024, 1, 29, 13, 14, 15);
    assert.equal(
      await ins.run([1, 9007199254740993n, 'héllo ✓', 1.25, true, Buffer.from([0, 255, 7]), when]),
      1,
    );
    assert.equal(await ins.run([2, -5, 'b', -0.5, false, null, null]), 1, 'types change between runs');
    assert.equal(await ins.run([3, null, null, null, null, null, null]), 1, 'all NULL');
    assert.equal(await ins.run([4, 2 ** 40, 'd', 3, true, Buffer.alloc(0), '2020-01-02 03:04:05']), 1);
    await ins.close();
    const rows = await c.all(`SELECT id, k, s, f, b, HEX(bin) AS hx, d FROM ${tb} ORDER BY id`);
    assert.deepEqual(
      rows,
      [
        { id: 1, k: '9007199254740993', s: 'héllo ✓', f: 1.25, b: 1, hx: '00FF07', d: '2024-02-29 13:14:15' },
        { id: 2, k: -5, s: 'b', f: -0.5, b: 0, hx: null, d: null },
        { id: 3, k: null, s: null, f: null, b: null, hx: null, d: null },
        { id: 4, k: 2 ** 40, s: 'd', f: 3, b: 1, hx: '', d: '2020-01-02 03:04:05' },
      ],
      'binary parameters round-trip; all() types integers and floats as numbers, the rest as strings',
    );

    const sel = await c.prepare(`SELECT s FROM ${tb} WHERE id <= ?`);
    assert.equal(await sel.run([2]), 2, 'rows of a prepared SELECT');
    assert.equal(await sel.run([0]), 0, 'an empty result');
    assert.equal(await c.query(`SELECT * FROM ${tb}`), 4, 'rows of a text SELECT');
    const upd = await c.prepare(`UPDATE ${tb} SET s = ? WHERE id <= ?`);
    assert.equal(await upd.run(['same', 2]), 2, 'changed rows');
    assert.equal(await upd.run(['same', 2]), 2, 'matched rows count even when unchanged (FOUND_ROWS)');
    assert.equal(await c.query(`UPDATE ${tb} SET s = 'same' WHERE id = ?`, [1]), 1, 'text UPDATE');
    assert.equal(await c.query(`DELETE FROM ${tb} WHERE id >= ?`, [3]), 2, 'deleted rows');
    const none = await c.prepare('SELECT 1 FROM DUAL');
    assert.equal(await none.run(), 1, 'a statement without parameters');
    await expectError(sel.run([1, 2]), 'fatal', ['PARAM_COUNT']);
    for (const s of [sel, upd, none]) await s.close();
    // A multi-result statement (a procedure's result sets and its final OK) is consumed whole.
    await c.query(`DROP PROCEDURE IF EXISTS ${tb}_p`);
    await c.query(`CREATE PROCEDURE ${tb}_p() BEGIN SELECT 1; SELECT 2 UNION ALL SELECT 3; END`);
    assert.equal(await c.query(`CALL ${tb}_p()`), 3, 'rows of every result set');
    assert.equal(await c.query('SELECT 1'), 1, 'the connection is in step after a multi-result');
    await c.query(`DROP PROCEDURE ${tb}_p`);
  } finally {
    await c.query(`DROP TABLE IF EXISTS ${tb}`).catch(() => {});
    await c.close();
  }
});

test('lean mysql: results spanning many socket reads and large values', async (t) => {
  const target = await server(t);
  if (!target) return;
  const c = await connect(target);
  const tb = table('big');
  try {
    await c.query(`DROP TABLE IF EXISTS ${tb}`);
    await c.query(`CREATE TABLE ${tb} (id INT PRIMARY KEY, pad VARCHAR(600))`);
    const digits =
      '(SELECT 0 n UNION ALL SELECT 1 UNION ALL SELECT 2 UNION ALL SELECT 3 UNION ALL SELECT 4 UNION ALL SELECT 5 UNION ALL SELECT 6 UNION ALL SELECT 7 UNION ALL SELECT 8 UNION ALL SELECT 9)';
    const n = 20000;
    assert.equal(
      await c.query(
        `INSERT INTO ${tb} SELECT a.n + 10 * b.n + 100 * c.n + 1000 * d.n + 10000 * e.n + 1 AS id, REPEAT(CHAR(65 + (a.n + b.n) % 26), 500) FROM ${digits} a, ${digits} b, ${digits} c, ${digits} d, ${digits} e WHERE a.n + 10 * b.n + 100 * c.n + 1000 * d.n + 10000 * e.n < ${n}`,
      ),
      n,
    );
    assert.equal(await c.query(`SELECT id, pad FROM ${tb}`), n, 'text rows counted across reads');
    const ps = await c.prepare(`SELECT id, pad FROM ${tb} WHERE id > ?`);
    assert.equal(await ps.run([0]), n, 'binary rows counted across reads');
    assert.equal(await ps.run([n - 3]), 3, 'the connection is in step afterwards');
    const rows = await c.all(`SELECT id, pad FROM ${tb} ORDER BY id`);
    assert.equal(rows.length, n, 'all() decodes every row');
    assert.equal(rows[12345]?.id, 12346, 'row order and values');
    assert.equal(rows[12345]?.pad, 'J'.repeat(500), 'a 500-byte value (letter (5 + 4) % 26)');
    // One value of 8 MB: a single packet spread over more than a hundred reads.
    const [big] = (await c.all('SELECT REPEAT(?, 4000000) AS v, 7 AS after', ['ab'])) as [
      { v: string; after: number },
    ];
    assert.equal(big.v.length, 8_000_000, 'the whole value');
    assert.ok(big.v.startsWith('abab') && big.v.endsWith('abab'), 'its content');
    assert.equal(big.after, 7, 'the column after it');
    // A 1 MB parameter in one COM_STMT_EXECUTE.
    const upd = await c.prepare(`UPDATE ${tb} SET pad = LEFT(?, 600) WHERE id = ?`);
    assert.equal(await upd.run(['z'.repeat(1 << 20), 1]), 1);
    await ps.close();
    await upd.close();
  } finally {
    await c.query(`DROP TABLE IF EXISTS ${tb}`).catch(() => {});
    await c.close();
  }
});

test('lean mysql: a row of more than 16 MiB arrives in several wire packets and is joined', async (t) => {
  const target = await server(t);
  if (!target) return;
  const admin = await connect(target);
  // The session limit is copied from the global one at connect time: raise it just for one new session,
  // under the lock of server-wide changes, so that two test runs cannot restore each other's raised value.
  let c: Connection | undefined;
  try {
    await withServerLock(SERVER_STATE_LOCK, async () => {
      const [{ old }] = (await admin.all('SELECT @@GLOBAL.max_allowed_packet AS old')) as [{ old: number }];
      try {
        await admin.query('SET GLOBAL max_allowed_packet = ?', [64 << 20]);
      } catch (e) {
        return missing(t, `cannot raise max_allowed_packet (SET GLOBAL): ${(e as Error).message}`);
      }
      try {
        c = await connect(target);
      } finally {
        await admin.query('SET GLOBAL max_allowed_packet = ?', [old]);
      }
    });
  } finally {
    await admin.close();
  }
  if (c === undefined) return;
  try {
    const size = (16 << 20) + 1000;
    const [row] = (await c.all('SELECT REPEAT(?, ?) AS v, 42 AS after', ['q', size])) as [
      { v: string | null; after: number },
    ];
    assert.equal(row.v?.length, size, 'the whole 16 MiB+ value');
    assert.equal(row.after, 42, 'the column after it');
    const ps = await c.prepare('SELECT REPEAT(?, ?) AS v UNION ALL SELECT ?');
    assert.equal(await ps.run(['q', size, 'x']), 2, 'a 16 MiB+ binary row counts once');
    assert.equal(await c.query('SELECT 1'), 1, 'in step afterwards');
  } finally {
    await c.close();
  }
});

test('lean mysql: statement errors leave the connection usable; duplicate key is fatal', async (t) => {
  const target = await server(t);
  if (!target) return;
  const c = await connect(target);
  const tb = table('err');
  try {
    await c.query(`DROP TABLE IF EXISTS ${tb}`);
    await c.query(`CREATE TABLE ${tb} (id INT PRIMARY KEY)`);
    await c.query(`INSERT INTO ${tb} VALUES (1)`);
    const e = await expectError(c.query(`INSERT INTO ${tb} VALUES (1)`), 'fatal', ['1062']);
    assert.equal(e.sqlState, '23000', 'the SQLSTATE is kept');
    assert.match(e.message, /Duplicate entry/, e.message);
    const ins = await c.prepare(`INSERT INTO ${tb} VALUES (?)`);
    await expectError(ins.run([1]), 'fatal', ['1062']);
    assert.equal(await ins.run([2]), 1, 'the statement still works');
    await expectError(c.query('SELEC 1'), 'fatal', ['1064']);
    await expectError(c.prepare('SELECT * FROM no_such_table_here'), 'fatal', ['1146']);
    await expectError(c.all('SELECT no_such_column FROM DUAL'), 'fatal', ['1054']);
    // An error after the column definitions were sent: the ERR packet ends the result.
    await expectError(c.query(`SELECT id, (SELECT id FROM ${tb}) FROM ${tb}`), 'fatal', ['1242']);
    await expectError(c.all(`SELECT id, (SELECT id FROM ${tb}) FROM ${tb}`), 'fatal', ['1242']);
    assert.equal(await c.query(`SELECT id FROM ${tb}`), 2, 'usable after errors');
    assert.deepEqual(await c.all('SELECT 1 AS one'), [{ one: 1 }]);
  } finally {
    await c.query(`DROP TABLE IF EXISTS ${tb}`).catch(() => {});
    await c.close();
  }
});

// The deadlock itself is test/drivers.test.ts's case for the dbsmack connector.
test('lean mysql: KILL rejects in-flight and queued requests as reconnect, and an idle killed session too', async (t) => {
  const target = await server(t);
  if (!target) return;
  const a = await connect(target);
  const b = await connect(target);
  const admin = await connect(target);
  try {
    // A statement in flight and one queued behind it, then the session is killed from outside.
    const lost = ['1927', '2013', 'PROTOCOL_CONNECTION_LOST', 'ECONNRESET', 'EPIPE'];
    const sleeping = expectError(a.query('SELECT SLEEP(10)'), 'reconnect', lost);
    const queued = expectError(a.query('SELECT 1'), 'reconnect', lost);
    await waitFor(
      'the session to be in SLEEP(10)',
      async () =>
        (
          await admin.all(
            "SELECT 1 FROM information_schema.processlist WHERE id = ? AND info = 'SELECT SLEEP(10)'",
            [a.sessionId],
          )
        ).length === 1,
    );
    await admin.query(`KILL ${Number(a.sessionId)}`);
    await sleeping;
    await queued;
    await expectError(a.query('SELECT 1'), 'reconnect', [...lost, 'ER_CONNECTION_ALREADY_CLOSED']);
    // An idle session killed.
    await admin.query(`KILL ${Number(b.sessionId)}`);
    await waitFor(
      'the killed idle session to be gone',
      async () =>
        (await admin.all('SELECT 1 FROM information_schema.processlist WHERE id = ?', [b.sessionId]))
          .length === 0,
    );
    await expectError(b.query('SELECT 1'), 'reconnect', lost);
  } finally {
    await Promise.all([a.close(), b.close(), admin.close()]);
  }
});

test('lean mysql: concurrent calls on one connection are queued in order', async (t) => {
  const target = await server(t);
  if (!target) return;
  const c = await connect(target);
  const tb = table('q');
  try {
    await c.query(`DROP TABLE IF EXISTS ${tb}`);
    await c.query(`CREATE TABLE ${tb} (id INT PRIMARY KEY)`);
    await c.query(`INSERT INTO ${tb} VALUES ${Array.from({ length: 50 }, (_, i) => `(${i + 1})`).join(',')}`);
    const ps = await c.prepare(`SELECT id FROM ${tb} WHERE id <= ?`);
    const calls: Promise<unknown>[] = [];
    const expected: unknown[] = [];
    for (let i = 0; i < 300; i++) {
      const k = (i % 50) + 1;
      if (i % 3 === 0) {
        calls.push(ps.run([k]));
        expected.push(k);
      } else if (i % 3 === 1) {
        calls.push(c.query(`SELECT id FROM ${tb} WHERE id <= ?`, [k]));
        expected.push(k);
      } else {
        calls.push(c.all('SELECT ? AS v', [k]));
        expected.push([{ v: k }]);
      }
    }
    // A failing statement in the middle does not disturb the ones around it.
    calls.push(c.query('SELEC 1').catch((e: DbError) => e.code));
    expected.push('1064');
    calls.push(ps.run([7]));
    expected.push(7);
    assert.deepEqual(await Promise.all(calls), expected, 'every call gets its own result');
    await ps.close();
  } finally {
    await c.query(`DROP TABLE IF EXISTS ${tb}`).catch(() => {});
    await c.close();
  }
});

/** A user with a password, for the tests that log in as one; dropped afterwards. */
async function withPasswordUser(
  t: TestContext,
  target: Target,
  fn: (user: string, password: string) => Promise<void>,
): Promise<void> {
  const admin = await connect(target);
  const user = `dbsmack_pw_${process.pid}`;
  const password = "S3cret'pw\\x";
  const hosts = ['127.0.0.1', 'localhost'];
  try {
    try {
      for (const h of hosts) {
        await admin.query(`DROP USER IF EXISTS '${user}'@'${h}'`);
        await admin.query(`CREATE USER '${user}'@'${h}' IDENTIFIED BY ?`, [password]);
        await admin.query(`GRANT SELECT ON \`${target.database}\`.* TO '${user}'@'${h}'`);
      }
    } catch (e) {
      // 1227: the privilege (CREATE USER, GRANT OPTION) is missing
      if ((e as DbError).code !== '1227') throw e;
      return missing(t, `${target.redactedUrl} may not create a user to log in as: ${(e as Error).message}`);
    }
    await fn(user, password);
  } finally {
    for (const h of hosts) await admin.query(`DROP USER IF EXISTS '${user}'@'${h}'`).catch(() => {});
    await admin.close();
  }
}

test('lean mysql: password authentication and a wrong password', async (t) => {
  const target = await server(t);
  if (!target) return;
  await withPasswordUser(t, target, async (user, password) => {
    const tcp = { ...target, user, password };
    const c = await connect(tcp);
    const [row] = await c.all('SELECT CURRENT_USER() AS u, DATABASE() AS d');
    assert.equal(row?.u, `${user}@127.0.0.1`, 'authenticated as the new user');
    assert.equal(row?.d, target.database, 'connected to the database of the URL');
    await c.close();
    const w = await expectError(connect({ ...tcp, password: 'Wr0ngSecret' }), 'fatal', ['1045']);
    assert.ok(!w.message.includes('Wr0ngSecret'), 'no password in the message');
  });
});

test('lean mysql: password authentication over the Unix socket', async (t) => {
  const target = await server(t);
  if (!target) return;
  const admin = await connect(target);
  const [{ socket }] = (await admin.all('SELECT @@socket AS socket')) as [{ socket: string }];
  await admin.close();
  if (!needFile(t, socket, 'the server’s Unix socket (@@socket)')) return;
  await withPasswordUser(t, target, async (user, password) => {
    const s = await connect({ ...target, user, password, host: undefined, port: undefined, socket });
    const [r] = await s.all('SELECT CURRENT_USER() AS u');
    assert.equal(r?.u, `${user}@localhost`, 'over the Unix socket');
    const ps = await s.prepare('SELECT ? AS x');
    assert.equal(await ps.run([1]), 1, 'statements over the Unix socket');
    await s.close();
  });
});

test('lean mysql: refused and silent endpoints fail as reconnect errors', async () => {
  await expectError(
    connect({ driver: 'mysql', redactedUrl: 'mysql://x', host: '127.0.0.1', port: 1, params: {} }),
    'reconnect',
    ['ECONNREFUSED'],
  );
  // A listener that accepts and never speaks: the connect timeout applies to the handshake too.
  const silent = net.createServer(() => {});
  await new Promise<void>((r) => silent.listen(0, '127.0.0.1', () => r()));
  const port = (silent.address() as net.AddressInfo).port;
  try {
    await expectError(
      connect({ driver: 'mysql', redactedUrl: 'mysql://x', host: '127.0.0.1', port, params: {} }, 200),
      'reconnect',
      ['ETIMEDOUT'],
    );
  } finally {
    silent.close();
  }
});

const NASTY = [
  "it's",
  'say "hi"',
  'back\\slash\\',
  '\\',
  "\\'",
  'nul\0byte',
  'new\nline\r\n',
  'ctrl-z\x1a',
  'tab\tbs\b',
  "'; DROP TABLE x; --",
  'question? marks ?',
  '漢字 and emoji 🦭',
  '',
];

test('lean mysql: text protocol escaping round-trips nasty strings', async (t) => {
  const target = await server(t);
  if (!target) return;
  const c = await connect(target);
  const tb = table('esc');
  try {
    await c.query(`DROP TABLE IF EXISTS ${tb}`);
    await c.query(`CREATE TABLE ${tb} (id INT PRIMARY KEY, s TEXT, b BLOB) DEFAULT CHARSET utf8mb4`);
    for (const [i, s] of NASTY.entries())
      assert.equal(await c.query(`INSERT INTO ${tb} VALUES (?, ?, ?)`, [i, s, Buffer.from(s)]), 1, s);
    const rows = await c.all(`SELECT id, s, HEX(b) AS hx FROM ${tb} ORDER BY id`);
    assert.deepEqual(
      rows.map((r) => r.s),
      NASTY,
      'every string comes back as written',
    );
    assert.deepEqual(
      rows.map((r) => r.hx),
      NASTY.map((s) => Buffer.from(s).toString('hex').toUpperCase()),
      'Buffers go as X literals',
    );
    for (const [i, s] of NASTY.entries())
      assert.equal(await c.query(`SELECT id FROM ${tb} WHERE s = ? AND id = ?`, [s, i]), 1, s);
    // Placeholders inside literals, identifiers and comments stay as they are.
    const [r] = await c.all("SELECT '?' AS `q?`, ? AS v /* ? */, ? AS n, ? AS t, ? AS f -- ?\n", [
      'x',
      null,
      true,
      false,
    ]);
    assert.deepEqual(r, { 'q?': '?', v: 'x', n: null, t: 1, f: 0 }, 'only real placeholders are bound');
  } finally {
    await c.query(`DROP TABLE IF EXISTS ${tb}`).catch(() => {});
    await c.close();
  }
});

test('lean mysql: interpolate binds literals like the library client', () => {
  assert.equal(interpolate('SELECT ?, ?, ?', [1.5, -2n, null]), 'SELECT 1.5, -2, NULL');
  assert.equal(interpolate('SELECT ?', [[1, 'a']]), "SELECT 1, 'a'", 'arrays become lists');
  assert.equal(interpolate("SELECT 'a\\'?', ?", [2]), "SELECT 'a\\'?', 2", 'escaped quote inside a literal');
  assert.equal(interpolate('SELECT ? -- ?\n, ?', [1, 2]), 'SELECT 1 -- ?\n, 2', 'line comment');
  assert.equal(interpolate('SELECT 5--?', [1]), 'SELECT 5--1', '-- without a space is minus minus');
  assert.equal(interpolate('SELECT ?', ["a'b\\c"]), "SELECT 'a\\'b\\\\c'");
});

test('lean mysql: password scrambles agree with the mysql2 library; RSA full auth decrypts to the password', () => {
  const require = createRequire(import.meta.url);
  // Internal modules of the library, by path (its package exports do not list them).
  const lib = path.join(path.dirname(require.resolve('mysql2')), 'lib');
  const auth41 = require(path.join(lib, 'auth_41.js')) as {
    calculateToken(password: string, scramble1: Buffer, scramble2: Buffer): Buffer;
  };
  const sha2 = require(path.join(lib, 'auth_plugins', 'caching_sha2_password.js')) as {
    calculateToken(password: string, scramble: Buffer): Buffer;
  };
  const scramble = randomBytes(20);
  for (const pw of ['p', "S3cret'pw\\x", 'ünïcødé']) {
    assert.deepEqual(
      nativePassword(pw, scramble),
      auth41.calculateToken(pw, scramble.subarray(0, 8), scramble.subarray(8)),
      `native ${pw}`,
    );
    assert.deepEqual(cachingSha2Password(pw, scramble), sha2.calculateToken(pw, scramble), `sha2 ${pw}`);
  }
  assert.equal(nativePassword('', scramble).length, 0, 'an empty password sends nothing');
  const { publicKey, privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
  const pem = publicKey.export({ type: 'spki', format: 'pem' }).toString();
  const sealed = rsaEncryptedPassword('pw', scramble, pem);
  const clear = privateDecrypt({ key: privateKey, padding: constants.RSA_PKCS1_OAEP_PADDING }, sealed);
  const unmasked = Buffer.from(clear.map((x, i) => x ^ (scramble[i % scramble.length] as number)));
  assert.equal(unmasked.toString('latin1'), 'pw\0', 'the password, NUL-terminated, XOR the scramble');
  assert.throws(
    () => authResponse('client_ed25519', 'pw', scramble),
    /connector=mysql2/,
    'unsupported plugin',
  );
});
