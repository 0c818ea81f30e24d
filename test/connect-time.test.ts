/**
 * The connect line times each connection's own connect and handshake, as super-smack's did: every driver
 * measures it from its socket's connect call to the handshake's end (`Connection.connectMs`), which leaves
 * out loading the connector and the wait for the other connections of the batch the call was part of.
 */
import assert from 'node:assert/strict';
import path from 'node:path';
import { type TestContext, test } from 'node:test';
import { loadDriver } from '../src/driver/index.ts';
import type { Target } from '../src/driver/types.ts';
import { parseTarget } from '../src/driver/url.ts';
import { runCli, tmpDir } from './helpers/cli.ts';
import { MYSQL_URL, needServer, PG_URL } from './helpers/servers.ts';

const withConnector = (t: Target | undefined, c: string): Target | undefined =>
  t ? { ...t, params: { ...t.params, connector: c } } : undefined;

const cases: { name: string; target: (t: TestContext) => Promise<Target | undefined> }[] = [
  { name: 'sqlite', target: async () => parseTarget(`sqlite:${path.join(tmpDir(), 'c.sqlite')}`) },
  { name: 'mysql (dbsmack)', target: async (t) => withConnector(await needServer(t, 'mysql'), 'dbsmack') },
  { name: 'mysql (mysql2)', target: async (t) => withConnector(await needServer(t, 'mysql'), 'mysql2') },
  { name: 'mysql (mariadb)', target: async (t) => withConnector(await needServer(t, 'mysql'), 'mariadb') },
  {
    name: 'postgres (dbsmack)',
    target: async (t) => withConnector(await needServer(t, 'postgres'), 'dbsmack'),
  },
  { name: 'postgres (pg)', target: async (t) => withConnector(await needServer(t, 'postgres'), 'pg') },
];

for (const c of cases) {
  test(`${c.name}: the connection times its own connect and handshake, within its connect call`, async (t) => {
    const target = await c.target(t);
    if (!target) return;
    const driver = await loadDriver(target.driver);
    for (let i = 0; i < 3; i++) {
      const t0 = performance.now();
      const conn = await driver.connect(target, { connectTimeoutMs: 5000, load: true });
      const call = performance.now() - t0;
      try {
        assert.equal(typeof conn.connectMs, 'number', 'the driver measures the handshake');
        assert.ok((conn.connectMs as number) > 0, `${conn.connectMs} ms`);
        assert.ok((conn.connectMs as number) <= call, `${conn.connectMs} ms within the call's ${call} ms`);
      } finally {
        await conn.close();
      }
    }
  });
}

for (const [server, url] of [
  ['mysql', MYSQL_URL],
  ['postgres', PG_URL],
] as const) {
  test(`${server}: a run reports each client's connect time, min and max over them`, async (t) => {
    if (!(await needServer(t, server))) return;
    const r = await runCli([
      'run',
      'select1',
      '--db',
      url,
      '--clients',
      '10',
      '--events',
      '100',
      '--format',
      'json',
    ]);
    assert.equal(r.code, 0, r.stderr);
    const res = JSON.parse(r.stdout) as {
      connect_ms: { min: number; mean: number; max: number };
      client_stats: { connect_ms: number }[];
    };
    const each = res.client_stats.map((s) => s.connect_ms);
    assert.equal(each.length, 10);
    for (const ms of each) assert.ok(ms > 0, `${ms} ms`);
    assert.equal(res.connect_ms.min, Math.min(...each));
    assert.equal(res.connect_ms.max, Math.max(...each));
  });
}
