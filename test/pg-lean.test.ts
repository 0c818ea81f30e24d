/**
 * dbsmack's own PostgreSQL client (connector `dbsmack`) against the real server: row counts, values, results
 * spanning many socket reads, errors and resynchronisation, real serialization failures, a terminated
 * backend, requests queued on one connection, the Unix socket, a socket its server closes (EPIPE), and the
 * SCRAM exchange against RFC 7677.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { type TestContext, test } from 'node:test';
import { loadIoOf, pgConnectorFor } from '../src/driver/connectors.ts';
import { DbError } from '../src/driver/errors.ts';
import { loadDriver } from '../src/driver/index.ts';
import { classifyPostgres } from '../src/driver/pg-errors.ts';
import { connectPgLean } from '../src/driver/pg-lean.ts';
import { md5Password, ScramClient, scramKeys } from '../src/driver/pg-lean-auth.ts';
import type { Connection, Target } from '../src/driver/types.ts';
import { parseTarget } from '../src/driver/url.ts';
import { expectError } from './helpers/db-errors.ts';
import { startPgCluster } from './helpers/pg-cluster.ts';
import { missing, needFile } from './helpers/preconditions.ts';
import { needServer } from './helpers/servers.ts';
import { waitFor } from './helpers/wait.ts';

const lean = (t: Target): Promise<Connection> => connectPgLean(t, { connectTimeoutMs: 5000 });

async function server(t: TestContext): Promise<Target | undefined> {
  return needServer(t, 'postgres');
}

test('SCRAM-SHA-256 reproduces the RFC 7677 exchange (injected nonce)', () => {
  const c = new ScramClient('pencil', 'user', 'rOprNGfwEbeRWgbNEkqO');
  assert.equal(c.clientFirst(), 'n,,n=user,r=rOprNGfwEbeRWgbNEkqO', 'client-first-message');
  const serverFirst =
    'r=rOprNGfwEbeRWgbNEkqO%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0,s=W22ZaJ0SNY7soEsUEjb6gQ==,i=4096';
  assert.equal(
    c.clientFinal(serverFirst),
    'c=biws,r=rOprNGfwEbeRWgbNEkqO%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0,p=dHzbZapWIk4jUhN+Ute9ytag9zjfMHgsqmmiz7AndVQ=',
    'client-final-message with the RFC proof',
  );
  assert.equal(
    c.verifyServerFinal('v=6rriTRBi23WpRR/wtup+mMhUZUn/dB5nLTJRsjl95G4='),
    true,
    'RFC server signature',
  );
  assert.equal(
    c.verifyServerFinal('v=7rriTRBi23WpRR/wtup+mMhUZUn/dB5nLTJRsjl95G4='),
    false,
    'a forged signature',
  );
  const other = new ScramClient('pencil', 'user', 'abc');
  assert.throws(() => other.clientFinal('r=xyz,s=W22ZaJ0SNY7soEsUEjb6gQ==,i=4096'), /nonce/, 'foreign nonce');
});

test('pg-lean: the MD5 answer agrees with the server’s own computation', async (t) => {
  const target = await server(t);
  if (!target) return;
  const c = await lean(target);
  try {
    const [md5] = await c.all("SELECT 'md5' || md5(md5('s3cret' || 'bob') || 'salt') AS m");
    assert.equal(md5Password('bob', 's3cret', Buffer.from('salt')), md5?.m, 'md5 password answer');
  } finally {
    await c.close();
  }
});

test('pg-lean: SCRAM keys agree with the verifier the server stores', async (t) => {
  const target = await server(t);
  if (!target) return;
  const c = await lean(target);
  const role = `dbsmack_scram_${process.pid}`;
  try {
    // The server's SCRAM verifier of a password: SCRAM-SHA-256$iter:salt$StoredKey:ServerKey.
    const su = await c.all('SELECT rolsuper FROM pg_roles WHERE rolname = current_user');
    if (su[0]?.rolsuper !== 't') {
      return missing(t, `${target.redactedUrl}: ${target.user} is not a superuser, and pg_authid needs one`);
    }
    await c.query("SET password_encryption = 'scram-sha-256'");
    await c.query(`CREATE ROLE ${role} PASSWORD 'p€ncil x'`);
    const [row] = await c.all('SELECT rolpassword FROM pg_authid WHERE rolname = ?', [role]);
    const m = /^SCRAM-SHA-256\$(\d+):([^$]+)\$([^:]+):(.+)$/.exec(String(row?.rolpassword));
    assert.ok(m, `a SCRAM verifier: ${String(row?.rolpassword).slice(0, 14)}`);
    const keys = scramKeys('p€ncil x', Buffer.from(m[2] as string, 'base64'), Number(m[1]));
    assert.equal(keys.storedKey.toString('base64'), m[3], 'StoredKey');
    assert.equal(keys.serverKey.toString('base64'), m[4], 'ServerKey');
  } finally {
    await c.query(`DROP ROLE IF EXISTS ${role}`).catch(() => {});
    await c.close();
  }
});

test('pg-lean: statements, row counts, NULLs and text values', async (t) => {
  const target = await server(t);
  if (!target) return;
  const c = await lean(target);
  const table = `dbsmack_lean_${process.pid}`;
  try {
    assert.match(c.serverVersion, /^PostgreSQL \d+/, 'server version from ParameterStatus');
    assert.ok(c.sessionId !== undefined && c.sessionId > 0, 'backend pid from BackendKeyData');
    const [pid] = await c.all('SELECT pg_backend_pid() AS pid');
    assert.equal(Number(pid?.pid), c.sessionId, 'sessionId is the backend pid');
    const [app] = await c.all('SHOW application_name');
    assert.equal(app?.application_name, 'dbsmack', 'application_name');

    assert.equal(await c.query('SELECT 1'), 1, 'simple SELECT');
    assert.equal(await c.query(''), 0, 'empty query');
    assert.equal(await c.query('SHOW server_version'), 1, 'SHOW counts its row');
    await c.query(`DROP TABLE IF EXISTS ${table}`);
    assert.equal(
      await c.query(`CREATE TABLE ${table} (id INTEGER PRIMARY KEY, v TEXT, n NUMERIC)`),
      0,
      'DDL',
    );
    assert.equal(
      await c.query(`INSERT INTO ${table} VALUES (?, ?, ?), (?, ?, ?), (?, ?, ?)`, [
        1,
        'a',
        1.5,
        2,
        null,
        2,
        3,
        "q'\\",
        null,
      ]),
      3,
      'INSERT tag',
    );
    assert.equal(
      await c.query(`INSERT INTO ${table} SELECT i, 'g', i FROM generate_series(10, 29) i`),
      20,
      'INSERT … SELECT',
    );
    const upd = await c.prepare(`UPDATE ${table} SET v = ? WHERE id >= ?`);
    assert.equal(await upd.run(['u', 20]), 10, 'UPDATE tag');
    assert.equal(await upd.run(['u', 1000]), 0, 'UPDATE of nothing');
    const sel = await c.prepare(`SELECT id, v FROM ${table} WHERE id <= ?`);
    assert.equal(await sel.run([3]), 3, 'prepared SELECT counts rows');
    assert.equal(await sel.run([0]), 0, 'no rows');
    assert.equal(await c.query(`DELETE FROM ${table} WHERE id >= ?`, [25]), 5, 'DELETE tag');
    assert.equal(await c.query(`SELECT * FROM ${table}`), 18, 'simple SELECT counts rows');

    const rows = await c.all(`SELECT id, v, n FROM ${table} WHERE id <= ? ORDER BY id`, [3]);
    assert.deepEqual(
      rows,
      [
        { id: '1', v: 'a', n: '1.5' },
        { id: '2', v: null, n: '2' },
        { id: '3', v: "q'\\", n: null },
      ],
      'all(): text values, NULL as null',
    );
    assert.deepEqual(await c.all(`SELECT v FROM ${table} WHERE id = 2`), [{ v: null }], 'simple all() NULL');
    await sel.close();
    await upd.close();
    await expectError(sel.run([1]), 'fatal', ['26000']);

    await c.begin();
    await c.query(`DELETE FROM ${table}`);
    await c.rollback();
    assert.equal(await c.query(`SELECT id FROM ${table}`), 18, 'rolled back');
    await c.begin();
    await c.query(`DELETE FROM ${table} WHERE id = 1`);
    await c.commit();
    assert.equal(await c.query(`SELECT id FROM ${table}`), 17, 'committed');
  } finally {
    await c.query(`DROP TABLE IF EXISTS ${table}`).catch(() => {});
    await c.close();
  }
});

test('pg-lean: parameters of every JavaScript type go as text the server reads back', async (t) => {
  const target = await server(t);
  if (!target) return;
  const c = await lean(target);
  try {
    const when = new Date('2024-02-29T12:34:56.789Z');
    const [r] = await c.all(
      'SELECT ?::int AS i, ?::float8 AS f, ?::bigint AS b, ?::bool AS t, ?::bool AS fa, ?::text AS s, ?::text AS nul, ' +
        '?::text AS undef, ?::bytea AS by, ?::timestamptz = ?::timestamptz AS d, ?::text[] AS arr, ?::int[] AS nested, ' +
        "?::jsonb ->> 'k' AS j, ?::float8 AS big, ?::int AS neg",
      [
        42,
        0.25,
        9007199254740993n,
        true,
        false,
        'żółw "x" \\ \u{1F600}',
        null,
        undefined,
        Buffer.from([0, 1, 0xfe, 0xff]),
        when,
        '2024-02-29 12:34:56.789+00',
        ['a', 'b,c', 'd"e', 'f\\g', null],
        [
          [1, 2],
          [3, 4],
        ],
        { k: 'v', n: [1] },
        1e300,
        -17,
      ],
    );
    assert.deepEqual(
      r,
      {
        i: '42',
        f: '0.25',
        b: '9007199254740993',
        t: 't',
        fa: 'f',
        s: 'żółw "x" \\ \u{1F600}',
        nul: null,
        undef: null,
        by: '\\x0001feff',
        d: 't',
        arr: '{a,"b,c","d\\"e","f\\\\g",NULL}',
        nested: '{{1,2},{3,4}}',
        j: 'v',
        big: '1e+300',
        neg: '-17',
      },
      'values as the server read them',
    );
  } finally {
    await c.close();
  }
});

test('pg-lean: results that span many socket reads', async (t) => {
  const target = await server(t);
  if (!target) return;
  const c = await lean(target);
  try {
    const sql = 'SELECT i, repeat(chr(97 + i % 26), 500) AS pad FROM generate_series(1, ?) i';
    const st = await c.prepare(sql);
    assert.equal(await st.run([20000]), 20000, 'counts 20,000 rows of 500 bytes (~10 MB)');
    const rows = await c.all(sql, [20000]);
    assert.equal(rows.length, 20000, 'all() returns every row');
    assert.equal(rows[19999]?.i, '20000', 'last row id');
    assert.ok(rows[19999]?.pad === chrPad(20000), 'last row value intact');
    assert.ok(
      rows.every((r, k) => r.pad === chrPad(k + 1)),
      'every row value intact',
    );
    // One message larger than the read buffer: gathered across reads.
    const [big] = await c.all("SELECT repeat('xyz', 1000000) AS v, 7 AS after");
    assert.equal(String(big?.v).length, 3000000, 'a 3 MB value');
    assert.ok(String(big?.v) === 'xyz'.repeat(1000000), 'the 3 MB value intact');
    assert.equal(big?.after, '7', 'the column after it');
    assert.equal(await st.run([3]), 3, 'usable afterwards');
  } finally {
    await c.close();
  }
});
const chrPad = (i: number): string => String.fromCharCode(97 + (i % 26)).repeat(500);

test('pg-lean: an error mid-session leaves the connection usable; a duplicate key is fatal 23505', async (t) => {
  const target = await server(t);
  if (!target) return;
  const c = await lean(target);
  const table = `dbsmack_lean_err_${process.pid}`;
  try {
    const div = await c.prepare('SELECT 10 / ?::int');
    assert.equal(await div.run([2]), 1, 'before');
    await expectError(div.run([0]), 'fatal', ['22012']);
    assert.equal(await div.run([5]), 1, 'the prepared statement survives the error');
    await expectError(c.query('SELEC 1'), 'fatal', ['42601']);
    await expectError(c.prepare('SELECT * FROM no_such_table_dbsmack'), 'fatal', ['42P01']);
    await expectError(c.all('SELECT ?::int', ['x']), 'fatal', ['22P02']);
    assert.equal(await c.query('SELECT 1'), 1, 'usable after errors');

    await c.query(`DROP TABLE IF EXISTS ${table}`);
    await c.query(`CREATE TABLE ${table} (id INTEGER PRIMARY KEY)`);
    await c.query(`INSERT INTO ${table} VALUES (1)`);
    const ins = await c.prepare(`INSERT INTO ${table} VALUES (?)`);
    const e = await expectError(ins.run([1]), 'fatal', ['23505']);
    assert.equal(e.sqlState, '23505', 'SQLSTATE kept');
    assert.match(e.message, /duplicate key/, 'the server message');
    // In a transaction: the error aborts it, ROLLBACK recovers.
    await c.begin();
    await expectError(ins.run([1]), 'fatal', ['23505']);
    await expectError(c.query('SELECT 1'), 'fatal', ['25P02']);
    await c.rollback();
    assert.equal(await ins.run([2]), 1, 'usable after the rollback');
    // Errors in a pipeline of concurrent requests land on their own request only.
    const results = await Promise.allSettled([
      ins.run([3]),
      ins.run([3]),
      c.query(`SELECT * FROM ${table}`),
      div.run([0]),
    ]);
    assert.equal(results[0]?.status, 'fulfilled', 'first insert');
    assert.equal(results[1]?.status, 'rejected', 'second insert is the duplicate');
    assert.deepEqual(results[2], { status: 'fulfilled', value: 3 }, 'the select between errors');
    assert.equal(results[3]?.status, 'rejected', 'division by zero');
  } finally {
    await c.query(`DROP TABLE IF EXISTS ${table}`).catch(() => {});
    await c.close();
  }
});

test('pg-lean: a real serialization failure is retryable 40001', async (t) => {
  const target = await server(t);
  if (!target) return;
  const a = await lean(target);
  const b = await lean(target);
  const table = `dbsmack_lean_ser_${process.pid}`;
  try {
    await a.query(`DROP TABLE IF EXISTS ${table}`);
    await a.query(`CREATE TABLE ${table} (id INTEGER PRIMARY KEY, v INTEGER)`);
    await a.query(`INSERT INTO ${table} VALUES (1, 0)`);
    await a.query('BEGIN ISOLATION LEVEL REPEATABLE READ');
    assert.equal(await a.query(`SELECT v FROM ${table} WHERE id = 1`), 1, 'snapshot taken');
    assert.equal(await b.query(`UPDATE ${table} SET v = v + 1 WHERE id = 1`), 1, 'concurrent update');
    const e = await expectError(a.query(`UPDATE ${table} SET v = v + 1 WHERE id = 1`), 'retryable', [
      '40001',
    ]);
    assert.equal(e.sqlState, '40001', 'SQLSTATE');
    await a.rollback();
    assert.equal(await a.query(`UPDATE ${table} SET v = v + 1 WHERE id = 1`), 1, 'the retry succeeds');
  } finally {
    await a.query(`DROP TABLE IF EXISTS ${table}`).catch(() => {});
    await Promise.all([a.close(), b.close()]);
  }
});

test('pg-lean: a terminated backend rejects pending and later requests with kind reconnect', async (t) => {
  const target = await server(t);
  if (!target) return;
  const victim = await lean(target);
  const idle = await lean(target);
  const admin = await lean(target);
  try {
    const sleeping = expectError(victim.query('SELECT pg_sleep(30)'), 'reconnect', ['57P01']);
    const queued = expectError(victim.query('SELECT 1'), 'reconnect', ['57P01', 'CONNECTION_LOST']);
    await waitFor('the victim backend to be in pg_sleep', async () => {
      const rows = await admin.all(
        "SELECT 1 FROM pg_stat_activity WHERE pid = ? AND state = 'active' AND query LIKE 'SELECT pg_sleep%'",
        [victim.sessionId],
      );
      return rows.length === 1;
    });
    assert.equal(await admin.query('SELECT pg_terminate_backend(?)', [victim.sessionId]), 1, 'terminated');
    await sleeping;
    await queued;
    await expectError(victim.query('SELECT 1'), 'reconnect', ['57P01', 'CONNECTION_LOST']);

    // Terminated while idle: the next request learns it.
    await admin.query('SELECT pg_terminate_backend(?)', [idle.sessionId]);
    await waitFor(
      'the terminated idle backend to be gone',
      async () =>
        (await admin.all('SELECT 1 FROM pg_stat_activity WHERE pid = ?', [idle.sessionId])).length === 0,
    );
    await expectError(idle.query('SELECT 1'), 'reconnect', [
      '57P01',
      'CONNECTION_LOST',
      'ECONNRESET',
      'EPIPE',
    ]);
    const st = await admin.prepare('SELECT 1');
    assert.equal(await st.run(), 1, 'other connections unaffected');
  } finally {
    await Promise.all([victim.close(), idle.close(), admin.close()]);
  }
});

test('pg-lean: concurrent calls on one connection are answered in order', async (t) => {
  const target = await server(t);
  if (!target) return;
  const c = await lean(target);
  try {
    const st = await c.prepare('SELECT generate_series(1, ?)');
    const calls: Promise<unknown>[] = [];
    const want: unknown[] = [];
    for (let i = 1; i <= 60; i++) {
      if (i % 3 === 0) {
        calls.push(st.run([i]));
        want.push(i);
      } else if (i % 3 === 1) {
        calls.push(c.all('SELECT ?::int AS k', [i]));
        want.push([{ k: String(i) }]);
      } else {
        calls.push(c.query(`SELECT generate_series(1, ${i})`));
        want.push(i);
      }
    }
    assert.deepEqual(await Promise.all(calls), want, 'every call got its own answer');
  } finally {
    await c.close();
  }
});

/** The directory of the server's Unix socket for `target`'s port (libpq's default), or undefined. */
const SOCKET_DIR = '/var/run/postgresql';

test('pg-lean: over the Unix socket', async (t) => {
  const target = await server(t);
  if (!target) return;
  const file = path.join(SOCKET_DIR, `.s.PGSQL.${target.port}`);
  if (!needFile(t, file, 'the server’s Unix socket')) return;
  const sock = parseTarget(`postgres://${target.user}@/${target.database}?host=${SOCKET_DIR}`);
  sock.port = target.port;
  const c = await lean(sock);
  try {
    assert.equal(await c.query('SELECT 1'), 1, 'query over the Unix socket');
    const [r] = await c.all('SELECT inet_client_addr() AS a');
    assert.equal(r?.a, null, 'no client address: a Unix socket connection');
  } finally {
    await c.close();
  }
});

test('pg-lean: a socket that a server closes is a lost connection, EPIPE too (an errno name, not a SQLSTATE)', async () => {
  // A server on a Unix socket that closes every connection it accepts (as one shutting down may): a write
  // after the peer's close fails with EPIPE there, every time.
  const dir = mkdtempSync(path.join(os.tmpdir(), 'dbsmack-epipe-'));
  const where = path.join(dir, '.s.PGSQL.5432');
  const srv = net.createServer((s) => s.destroy());
  await new Promise<void>((r) => srv.listen(where, r));
  try {
    const sock = net.connect({ path: where });
    await new Promise<void>((r) => sock.once('end', r).resume());
    const epipe = await new Promise<Error>((r) => {
      sock.once('error', r);
      sock.write(Buffer.alloc(8));
    });
    assert.equal((epipe as { code?: string }).code, 'EPIPE');
    const e = classifyPostgres(epipe);
    assert.deepEqual([e.kind, e.code, e.sqlState], ['reconnect', 'EPIPE', undefined]);
    // a server's SQLSTATE of five capitals stays one
    const s = classifyPostgres(Object.assign(new Error('x'), { code: 'XX000' }));
    assert.deepEqual([s.kind, s.sqlState], ['fatal', 'XX000']);
    // the lean client's login on it: a lost connection (EPIPE or the close, whichever it meets first)
    for (let i = 0; i < 20; i++)
      await expectError(lean({ ...parseTarget('postgres://u@/db'), socket: dir }), 'reconnect', [
        'EPIPE',
        'ECONNRESET',
        'CONNECTION_LOST',
      ]);
  } finally {
    srv.close();
    rmSync(dir, { recursive: true, force: true });
  }
});

test('pg-lean: a refused endpoint and an unknown database name no password', async (t) => {
  const refused = await expectError(
    lean(parseTarget('postgres://root:Sup3rSecret@127.0.0.1:1/x')),
    'reconnect',
    ['ECONNREFUSED'],
  );
  assert.ok(!refused.message.includes('Sup3rSecret'), 'no password in the refusal');
  const target = await server(t);
  if (!target) return;
  const e = await expectError(
    lean({ ...target, password: 'Sup3rSecret', database: `no_such_db_${process.pid}` }),
    'fatal',
    ['3D000'],
  );
  assert.ok(!e.message.includes('Sup3rSecret'), 'no password in messages');
});

test('connectors: load clients take ?connector=dbsmack, TLS URLs go to pg or fail clearly', async (t) => {
  const plain = parseTarget('postgres://u@127.0.0.1/db?connector=dbsmack');
  assert.equal(pgConnectorFor(plain, { connectTimeoutMs: 1, load: true }), 'dbsmack', 'load client');
  assert.equal(pgConnectorFor(plain, { connectTimeoutMs: 1 }), 'pg', 'set-up/admin client');
  const tls = parseTarget('postgres://u@127.0.0.1/db?sslmode=require');
  assert.equal(
    pgConnectorFor(tls, { connectTimeoutMs: 1, load: true }),
    'pg',
    'TLS without a named connector',
  );
  const tlsLean = parseTarget('postgres://u@127.0.0.1/db?sslmode=verify-full&connector=dbsmack');
  assert.throws(
    () => pgConnectorFor(tlsLean, { connectTimeoutMs: 1, load: true }),
    (e: unknown) => e instanceof DbError && e.kind === 'fatal' && /connector=pg/.test(e.message),
    'connector=dbsmack with TLS is a clear fatal error',
  );
  const target = await server(t);
  if (!target) return;
  const d = await loadDriver('postgres');
  const c = await d.connect(
    { ...target, params: { ...target.params, connector: 'dbsmack' } },
    {
      connectTimeoutMs: 5000,
      load: true,
    },
  );
  try {
    assert.equal(
      c.constructor.name,
      loadIoOf(target) === 'native' ? 'NativePgConnection' : 'LeanPgConnection',
      'the postgres driver hands load clients the lean client (on the native I/O core when it is built)',
    );
    assert.equal(await c.query('SELECT 1'), 1, 'and it works');
  } finally {
    await c.close();
  }
});

test('pg-lean: SCRAM-SHA-256, MD5 and cleartext logins on a private server that asks for them', async (t) => {
  // The shared server trusts every local login; a throw-away cluster with its own pg_hba.conf asks for passwords.
  const cluster = await startPgCluster(t, [
    'local all u_scram scram-sha-256',
    'local all u_md5 md5',
    'local all u_clear password',
    'local all postgres trust',
  ]);
  if (cluster === undefined) return;
  try {
    const url = (user: string, pw?: string): Target => parseTarget(cluster.url(user, pw), {});
    const admin = await lean(url('postgres'));
    await admin.query("SET password_encryption = 'scram-sha-256'");
    await admin.query("CREATE ROLE u_scram LOGIN PASSWORD 'sc pw€'");
    await admin.query("SET password_encryption = 'md5'");
    await admin.query("CREATE ROLE u_md5 LOGIN PASSWORD 'md5 pw'");
    await admin.query("CREATE ROLE u_clear LOGIN PASSWORD 'clear pw'");
    await admin.close();
    for (const [user, pw] of [
      ['u_scram', 'sc pw€'],
      ['u_md5', 'md5 pw'],
      ['u_clear', 'clear pw'],
    ] as const) {
      const c = await lean(url(user, pw));
      const [r] = await c.all('SELECT current_user AS u');
      assert.equal(r?.u, user, `${user} logged in`);
      await c.close();
      const e = await expectError(lean(url(user, 'Wr0ngSecret')), 'fatal', ['28P01']);
      assert.ok(!e.message.includes('Wr0ngSecret'), 'no password in the message');
    }
    await expectError(lean(url('u_scram')), 'fatal', ['NO_PASSWORD']);
  } finally {
    cluster.stop();
  }
});
