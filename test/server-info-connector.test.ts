/**
 * The run's server info, and a built-in workload's check before a run (`Workload.textCheck`), go over
 * dbsmack's own client when the load clients use it (so that the main thread does not load mysql2 or pg
 * for a short connection); the info reads the same version and settings as the library client does, and
 * the check on it still tells a missing table from other errors.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { mysqlConnectorFor, pgConnectorFor } from '../src/driver/connectors.ts';
import { loadDriver } from '../src/driver/index.ts';
import type { Target } from '../src/driver/types.ts';
import { parseTarget } from '../src/driver/url.ts';
import { withAdminContext } from '../src/engine/admin.ts';
import { UsageError } from '../src/errors.ts';
import { readServerSettings } from '../src/probe/server-settings.ts';
import { builtinNames, loadWorkload } from '../src/workload/registry.ts';
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

test('the built-in workloads whose check reads only counts and tables say so', async () => {
  const checked: string[] = [];
  for (const { name } of builtinNames()) {
    const w = await loadWorkload({ ref: name, rawOptions: {}, args: [] });
    if (w.check === undefined) continue;
    checked.push(name);
    assert.equal(w.textCheck, true, `${name}: textCheck`);
  }
  assert.ok(checked.includes('oltp_point_select') && checked.includes('pgbench'), checked.join(' '));
});

for (const server of ['mysql', 'postgres'] as const) {
  test(`${server}: a text-only check connects with dbsmack's client and still finds a missing table`, async (t) => {
    const target = await needServer(t, server);
    if (!target) return;
    const ctorOf = (textOnly: boolean) =>
      withAdminContext(
        target,
        {},
        1,
        5000,
        () => {},
        async (ctx) => ctx.conn.constructor.name,
        false,
        textOnly,
      );
    const lean = await ctorOf(true);
    const library = await ctorOf(false);
    assert.notEqual(lean, library);
    assert.match(lean, /Lean/);
    const library2 = await withAdminContext(
      { ...target, params: { ...target.params, connector: server === 'mysql' ? 'mysql2' : 'pg' } },
      {},
      1,
      5000,
      () => {},
      async (ctx) => ctx.conn.constructor.name,
      false,
      true,
    );
    assert.equal(library2, library, 'a library load connector: the library client checks too');
    // oltp_point_select's check in this file's own database, which has no sbtest1: "prepare first"
    const w = await loadWorkload({ ref: 'oltp_point_select', rawOptions: {}, args: [] });
    const check = w.check?.bind(w);
    assert.ok(check);
    await assert.rejects(
      withAdminContext(target, { tables: 1, table_size: 10000 }, 1, 5000, () => {}, check, false, true),
      (e: unknown) => e instanceof UsageError && /table sbtest1 does not exist/.test(e.message),
    );
  });
}
