/**
 * The run's server info goes over dbsmack's own client when the load clients use it (so that the main
 * thread does not load mysql2 or pg for one short connection), and reads the same version and settings
 * as the library client does.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { mysqlConnectorFor, pgConnectorFor } from '../src/driver/connectors.ts';
import { loadDriver } from '../src/driver/index.ts';
import type { Target } from '../src/driver/types.ts';
import { parseTarget } from '../src/driver/url.ts';
import { readServerSettings } from '../src/probe/server-settings.ts';
import { needServer } from './helpers/servers.ts';

const INFO = { connectTimeoutMs: 1, info: true } as const;

test('server info connections take dbsmack exactly when the load clients do', () => {
  assert.equal(mysqlConnectorFor(parseTarget('mysql://u@127.0.0.1/db'), INFO), 'dbsmack', 'default');
  assert.equal(mysqlConnectorFor(parseTarget('mysql://u@127.0.0.1/db?connector=mysql2'), INFO), 'mysql2');
  assert.equal(mysqlConnectorFor(parseTarget('mysql://u@127.0.0.1/db?connector=mariadb'), INFO), 'mariadb');
  assert.equal(mysqlConnectorFor(parseTarget('mysql://u@127.0.0.1/db'), { connectTimeoutMs: 1 }), 'mysql2');
  assert.equal(pgConnectorFor(parseTarget('postgres://u@127.0.0.1/db'), INFO), 'dbsmack', 'default');
  assert.equal(pgConnectorFor(parseTarget('postgres://u@127.0.0.1/db?connector=pg'), INFO), 'pg');
  // TLS: pg, and never the load clients' error for connector=dbsmack
  assert.equal(pgConnectorFor(parseTarget('postgres://u@127.0.0.1/db?sslmode=require'), INFO), 'pg');
  assert.equal(
    pgConnectorFor(parseTarget('postgres://u@127.0.0.1/db?sslmode=require&connector=dbsmack'), INFO),
    'pg',
  );
  assert.equal(pgConnectorFor(parseTarget('postgres://u@127.0.0.1/db'), { connectTimeoutMs: 1 }), 'pg');
});

for (const server of ['mysql', 'postgres'] as const) {
  test(`${server}: the info connection reads the version and settings the library client reads`, async (t) => {
    const target = await needServer(t, server);
    if (!target) return;
    const driver = await loadDriver(server);
    const read = async (tg: Target, info: boolean) => {
      const c = await driver.connect(tg, { connectTimeoutMs: 5000, info });
      try {
        return { version: c.serverVersion, settings: await readServerSettings(c), ctor: c.constructor.name };
      } finally {
        await c.close();
      }
    };
    const lean = await read(target, true);
    const library = await read(target, false);
    assert.notEqual(lean.ctor, library.ctor, 'two different clients');
    assert.ok(Object.keys(library.settings).length > 5);
    assert.deepEqual(
      { version: lean.version, settings: lean.settings },
      { version: library.version, settings: library.settings },
    );
  });
}
