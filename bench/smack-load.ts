/**
 * How fast a smack table loads from the client side: select-key's http_auth, 90,000 rows from the shipped
 * gen-data format, into SQLite, MariaDB and PostgreSQL (those reachable). Prints rows per second.
 *
 *   node --import tsx bench/smack-load.ts [ROWS]
 *
 * Servers: DBSMACK_BENCH_MYSQL_URL and DBSMACK_BENCH_PG_URL (default the test servers' `test` database);
 * the table `bench_http_auth` is dropped afterwards.
 */
import { rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { loadDriver } from '../src/driver/index.ts';
import { parseTarget } from '../src/driver/url.ts';
import { writeGenData } from '../src/workload/smack/gen-data.ts';
import { loadDataFile } from '../src/workload/smack/loader.ts';

const rows = Number(process.argv[2] ?? 90000);
const dir = path.join(os.tmpdir(), `dbsmack-bench-load-${process.pid}`);
const file = path.join(dir, 'words.dat');
const { mkdirSync } = await import('node:fs');
mkdirSync(dir, { recursive: true });
let t0 = performance.now();
await writeGenData(rows, '%12-12s%n,%25-25s,%n,%d', file);
console.log(`gen-data: ${rows} rows in ${((performance.now() - t0) / 1000).toFixed(2)} s`);

const urls = [
  `sqlite:${path.join(dir, 'bench.sqlite')}`,
  process.env.DBSMACK_BENCH_MYSQL_URL ?? 'mysql://root@127.0.0.1:3306/test',
  process.env.DBSMACK_BENCH_PG_URL ?? 'postgres://root@127.0.0.1:5432/test',
];
const CREATE =
  'create table bench_http_auth (username char(25) not null primary key, pass char(25), uid integer not null, gid integer not null)';
for (const url of urls) {
  const target = parseTarget(url);
  const driver = await loadDriver(target.driver);
  let conn: Awaited<ReturnType<typeof driver.connect>>;
  try {
    conn = await driver.connect(target, { connectTimeoutMs: 3000 });
  } catch (e) {
    console.log(`${target.redactedUrl}: skipped (${(e as Error).message})`);
    continue;
  }
  await conn.query('drop table if exists bench_http_auth');
  await conn.query(CREATE);
  t0 = performance.now();
  const n = await loadDataFile(conn, 'bench_http_auth', file, () =>
    driver.connect(target, { connectTimeoutMs: 3000 }),
  );
  const s = (performance.now() - t0) / 1000;
  console.log(`${target.driver.padEnd(8)} ${n} rows in ${s.toFixed(2)} s = ${Math.round(n / s)} rows/s`);
  await conn.query('drop table bench_http_auth');
  await conn.close();
}
rmSync(dir, { recursive: true, force: true });
