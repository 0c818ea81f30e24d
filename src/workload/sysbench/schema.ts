/**
 * sysbench's `sbtest` tables: the same DDL and data as sysbench 1.0.20 on MySQL/MariaDB and PostgreSQL (so
 * tables prepared by either tool run under the other), and a faithful translation for SQLite. Loading runs
 * in parallel over `--threads` connections with multi-row INSERTs of up to 512 KiB, as sysbench batches them.
 */
import {
  type AdminContext,
  C_TEMPLATE,
  type Connection,
  DbError,
  type DriverName,
  distributionFromOptions,
  PAD_TEMPLATE,
  randomString,
  seededRandom,
  UsageError,
} from '../../index.ts';
import { asOltp, type OltpOptions } from './options.ts';

/** sysbench's BULK_PACKET_SIZE: a multi-row INSERT is sent when it would grow past this. */
const BULK_BYTES = 512 * 1024;

export function createTableSql(driver: DriverName, n: number, o: OltpOptions): string {
  let idDef: string;
  let indexDef: string;
  let tail = '';
  if (driver === 'mysql') {
    idDef = o.auto_inc ? 'INTEGER NOT NULL AUTO_INCREMENT' : 'INTEGER NOT NULL';
    indexDef = o.secondary ? 'KEY xid' : 'PRIMARY KEY';
    tail = `/*! ENGINE = ${o.mysql_storage_engine} */`;
  } else if (driver === 'postgres') {
    idDef = o.auto_inc ? 'SERIAL' : 'INTEGER NOT NULL';
    // sysbench emits MySQL's `KEY xid (id)` here, which PostgreSQL rejects; a unique constraint is the nearest.
    indexDef = o.secondary ? `CONSTRAINT xid_${n} UNIQUE` : 'PRIMARY KEY';
  } else {
    // SQLite: an INTEGER PRIMARY KEY is the rowid, assigned on insert like AUTO_INCREMENT/SERIAL.
    idDef = 'INTEGER NOT NULL';
    indexDef = o.secondary ? `CONSTRAINT xid_${n} UNIQUE` : 'PRIMARY KEY';
  }
  return `CREATE TABLE sbtest${n}(
  id ${idDef},
  k INTEGER DEFAULT '0' NOT NULL,
  c CHAR(120) DEFAULT '' NOT NULL,
  pad CHAR(60) DEFAULT '' NOT NULL,
  ${indexDef} (id)
) ${tail}`;
}

/** Insert rows [from, to] of table n in multi-row INSERTs; k follows `--rand-type`, as in sysbench. */
async function loadRows(
  conn: Connection,
  n: number,
  from: number,
  to: number,
  o: OltpOptions,
  options: Readonly<Record<string, unknown>>,
  seed: number,
): Promise<void> {
  const random = seededRandom(seed);
  const pick = distributionFromOptions(random, options);
  const head = o.auto_inc
    ? `INSERT INTO sbtest${n}(k, c, pad) VALUES`
    : `INSERT INTO sbtest${n}(id, k, c, pad) VALUES`;
  let parts: string[] = [];
  let size = head.length;
  const sqlite = conn.driver === 'sqlite';
  if (sqlite) await conn.begin();
  for (let i = from; i <= to; i++) {
    const c = randomString(random, C_TEMPLATE);
    const pad = randomString(random, PAD_TEMPLATE);
    const k = pick(1, o.table_size);
    const row = o.auto_inc ? `(${k}, '${c}', '${pad}')` : `(${i}, ${k}, '${c}', '${pad}')`;
    if (parts.length > 0 && size + row.length + 1 > BULK_BYTES) {
      await conn.query(head + parts.join(','));
      parts = [];
      size = head.length;
    }
    parts.push(row);
    size += row.length + 1;
  }
  if (parts.length > 0) await conn.query(head + parts.join(','));
  if (sqlite) await conn.commit();
}

/**
 * Create and load `--tables` tables of `rows` rows each. Tables are spread over the connections as sysbench
 * does; when there are more threads than tables, each table's rows are split among them too.
 */
export async function prepareTables(ctx: AdminContext, rows: number): Promise<void> {
  const o = asOltp(ctx.options);
  // SQLite has one writer at a time: more connections would only wait on each other.
  const threads = ctx.driver === 'sqlite' ? 1 : Math.max(1, ctx.threads);
  const tables = Array.from({ length: o.tables }, (_, i) => i + 1);
  const perTable = Math.max(1, Math.floor(threads / o.tables));
  const seed = Date.now() & 0x7fffffff;
  const jobs: { table: number; from: number; to: number }[] = [];
  for (const t of tables) {
    // Every row is drawn independently, so with auto_inc the server's numbering of interleaved loaders
    // still gives ids 1..N (simple INSERTs reserve exact id counts; sequences have no gaps without rollbacks).
    const chunks = rows === 0 ? 1 : Math.min(perTable, rows);
    for (let c = 0; c < chunks; c++) {
      jobs.push({
        table: t,
        from: Math.floor((rows * c) / chunks) + 1,
        to: Math.floor((rows * (c + 1)) / chunks),
      });
    }
  }
  const n = Math.min(threads, jobs.length);
  const queue = [...jobs];
  const created = new Map<number, Promise<void>>();
  await ctx.parallel(n, async (conn, index) => {
    for (let job = queue.shift(); job !== undefined; job = queue.shift()) {
      const t = job.table;
      let ready = created.get(t);
      if (ready === undefined) {
        ctx.log(`Creating table 'sbtest${t}'...`);
        ready = conn.query(createTableSql(ctx.driver, t, o)).then(() => {});
        created.set(t, ready);
      }
      await ready;
      if (job.from === 1) ctx.log(`Inserting ${rows} records into 'sbtest${t}'`);
      await loadRows(conn, t, job.from, job.to, o, ctx.options, (seed + index * 7919 + job.from) >>> 0);
    }
  });
  if (o.create_secondary) {
    const idx = [...tables];
    await ctx.parallel(Math.min(threads, idx.length), async (conn) => {
      for (let t = idx.shift(); t !== undefined; t = idx.shift()) {
        ctx.log(`Creating a secondary index on 'sbtest${t}'...`);
        await conn.query(`CREATE INDEX k_${t} ON sbtest${t}(k)`);
      }
    });
  }
}

export async function dropTables(ctx: AdminContext, count: number): Promise<void> {
  for (let t = 1; t <= count; t++) {
    ctx.log(`Dropping table 'sbtest${t}'...`);
    await ctx.conn.query(`DROP TABLE IF EXISTS sbtest${t}`);
  }
}

const MISSING_TABLE = new Set(['1146', '42P01']);

/** Refuse to run before `prepare`, naming the command that makes the tables. */
export async function checkTables(ctx: AdminContext, workload: string, tables: number[]): Promise<void> {
  for (const t of tables) {
    try {
      await ctx.conn.all(`SELECT id FROM sbtest${t} LIMIT 1`);
    } catch (e) {
      const missing =
        e instanceof DbError &&
        (MISSING_TABLE.has(e.code) || e.sqlState === '42S02' || /no such table/i.test(e.message));
      if (!missing) throw e;
      const o = asOltp(ctx.options);
      const extra = [
        o.tables !== 1 ? ` --tables ${o.tables}` : '',
        o.table_size !== 10000 ? ` --table-size ${o.table_size}` : '',
      ].join('');
      throw new UsageError(
        `table sbtest${t} does not exist in ${ctx.target.redactedUrl}: the ${workload} tables are not prepared`,
        `run \`dbsmack prepare ${workload} --db ${ctx.target.redactedUrl}${extra}\` first`,
      );
    }
  }
}
