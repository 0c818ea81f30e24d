import assert from 'node:assert/strict';
import path from 'node:path';
import { test } from 'node:test';
import { redactSecrets } from '../src/driver/redact.ts';
import { parseTarget } from '../src/driver/url.ts';
import { UsageError } from '../src/errors.ts';

test('sqlite URLs resolve to absolute paths', () => {
  const t = parseTarget('sqlite:./x.sqlite', {});
  assert.equal(t.driver, 'sqlite');
  assert.equal(t.path, path.resolve('x.sqlite'));
  assert.equal(t.redactedUrl, 'sqlite:./x.sqlite');
  assert.equal(parseTarget('sqlite:///tmp/a.db', {}).path, '/tmp/a.db');
  assert.equal(parseTarget('sqlite::memory:', {}).path, ':memory:');
  assert.equal(parseTarget('sqlite:a.db?busy_timeout=100', {}).params.busy_timeout, '100');
  // ?io= and ?batch= mean nothing to SQLite's in-process driver, but a value they do not take is refused
  assert.equal(parseTarget('sqlite:a.db?io=js&batch=off', {}).driver, 'sqlite');
  assert.throws(() => parseTarget('sqlite:a.db?io=JS', {}), /unknown I\/O path 'JS'/);
  assert.throws(() => parseTarget('sqlite::memory:?batch=yes', {}), /unknown batch setting 'yes'/);
});

test('mysql and mariadb URLs, with socket and connector', () => {
  const t = parseTarget('mysql://bob:pw%40x@db.example:3307/bench', {});
  assert.deepEqual(
    {
      driver: t.driver,
      user: t.user,
      password: t.password,
      host: t.host,
      port: t.port,
      database: t.database,
    },
    { driver: 'mysql', user: 'bob', password: 'pw@x', host: 'db.example', port: 3307, database: 'bench' },
  );
  assert.equal(t.redactedUrl, 'mysql://bob:***@db.example:3307/bench');
  const s = parseTarget('mariadb://root@localhost/test?socket=/run/mysqld/mysqld.sock&connector=mariadb', {});
  assert.equal(s.socket, '/run/mysqld/mysqld.sock');
  assert.equal(s.host, undefined);
  assert.equal(s.params.connector, 'mariadb');
  assert.match(
    s.redactedUrl,
    /^mariadb:\/\/root@\/test\?connector=mariadb&socket=\/run\/mysqld\/mysqld.sock$/,
  );
  assert.throws(() => parseTarget('mysql://root@h/db?connector=odbc', {}), UsageError);
});

test('mysql falls back to MYSQL_PWD, MYSQL_HOST, MYSQL_TCP_PORT and USER', () => {
  const t = parseTarget('mysql:///test', {
    MYSQL_PWD: 'envpw',
    MYSQL_HOST: 'h1',
    MYSQL_TCP_PORT: '3400',
    USER: 'me',
  });
  assert.equal(t.password, 'envpw');
  assert.equal(t.host, 'h1');
  assert.equal(t.port, 3400);
  assert.equal(t.user, 'me');
  assert.equal(t.redactedUrl, 'mysql://me:***@h1:3400/test');
  const u = parseTarget('mysql://', { MYSQL_UNIX_PORT: '/tmp/my.sock', USER: 'me' });
  assert.equal(u.socket, '/tmp/my.sock');
});

test('postgres URLs and the PG* environment', () => {
  const t = parseTarget('postgresql://alice:secret@10.0.0.1:6543/app', {});
  assert.equal(t.driver, 'postgres');
  assert.equal(t.port, 6543);
  assert.equal(t.redactedUrl, 'postgresql://alice:***@10.0.0.1:6543/app');
  const e = parseTarget('postgres://', {
    PGHOST: 'pghost',
    PGPORT: '5499',
    PGUSER: 'u',
    PGPASSWORD: 'pw',
    PGDATABASE: 'd',
  });
  assert.deepEqual([e.host, e.port, e.user, e.password, e.database], ['pghost', 5499, 'u', 'pw', 'd']);
  const s = parseTarget('postgres://u@/db?host=/var/run/postgresql', {});
  assert.equal(s.socket, '/var/run/postgresql');
  assert.equal(s.host, undefined);
  const d = parseTarget('postgres://', { USER: 'osuser' });
  assert.equal(d.user, 'osuser');
  assert.equal(d.database, 'osuser');
  assert.equal(d.host, 'localhost');
  const envSock = parseTarget('postgres://u@', { PGHOST: '/tmp' });
  assert.equal(envSock.socket, '/tmp');
});

test('bad URLs are usage errors that never show the password', () => {
  for (const url of ['mysql://root:topsecret@host:notaport/db', 'oracle://a:topsecret@b/c', 'sqlite:']) {
    try {
      parseTarget(url, {});
      assert.fail(`expected ${url} to be rejected`);
    } catch (e) {
      assert.ok(e instanceof UsageError, String(e));
      assert.ok(!e.message.includes('topsecret'), e.message);
      assert.ok(!(e.hint ?? '').includes('topsecret'));
    }
  }
});

test('registered passwords are masked wherever they appear', () => {
  parseTarget('mysql://u:Wh4tEver!@h/db', {});
  assert.equal(redactSecrets('Access denied, password Wh4tEver! used'), 'Access denied, password *** used');
  assert.equal(redactSecrets('see postgres://a:b@c/d'), 'see postgres://a:***@c/d');
});
