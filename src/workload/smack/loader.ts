/**
 * Client-side loading of a comma-separated data file into a table, so that it works against a remote
 * server without FILE privilege or superuser rights (the original used server-side LOAD DATA INFILE and
 * COPY). SQLite: one prepared INSERT per row in one transaction. MySQL and PostgreSQL: multi-row INSERTs
 * of escaped literals, many rows per statement, in one transaction.
 */
import { readFileSync } from 'node:fs';
import type { Connection } from '../../driver/types.ts';
import { escapeWord } from './escape.ts';

/** Rows per INSERT for the servers: big enough to amortise a round trip, small enough for max_allowed_packet. */
const BATCH = 1000;

/** Parameters per SQLite statement (its limit is 32766 since 3.32). */
const SQLITE_PARAMS = 4000;

export class DataFileError extends Error {}

/** Connections that load a file side by side on a server (measured: about twice as fast as one on 2 cores). */
export const LOAD_CONNECTIONS = 4;

/**
 * Load `file` into `table`; resolves to the number of rows loaded. On a server the rows are split over
 * `open()`ed extra connections, each loading its part in its own transaction.
 */
export async function loadDataFile(
  conn: Connection,
  table: string,
  file: string,
  open?: () => Promise<Connection>,
): Promise<number> {
  const text = readFileSync(file, 'latin1');
  const lines = text.split('\n');
  if (lines.length > 0 && lines[lines.length - 1] === '') lines.pop();
  let cols = -1;
  const rows: string[][] = [];
  for (let i = 0; i < lines.length; i++) {
    let l = lines[i] as string;
    if (l.endsWith('\r')) l = l.slice(0, -1);
    const f = l.split(',');
    if (cols < 0) cols = f.length;
    else if (f.length !== cols) {
      throw new DataFileError(`${file}:${i + 1}: ${f.length} fields where line 1 has ${cols}`);
    }
    rows.push(f);
  }
  if (rows.length === 0) return 0;
  if (conn.driver === 'sqlite' || open === undefined || rows.length < BATCH * 2) {
    await loadRows(conn, table, rows, cols);
    return rows.length;
  }
  const extra: Connection[] = [];
  try {
    for (let k = 1; k < LOAD_CONNECTIONS; k++) extra.push(await open());
    const all = [conn, ...extra];
    const per = Math.ceil(rows.length / all.length);
    await Promise.all(all.map((c, k) => loadRows(c, table, rows.slice(k * per, (k + 1) * per), cols)));
  } finally {
    await Promise.all(extra.map((c) => c.close().catch(() => {})));
  }
  return rows.length;
}

async function loadRows(conn: Connection, table: string, rows: string[][], cols: number): Promise<void> {
  if (rows.length === 0) return;
  await conn.begin();
  try {
    if (conn.driver === 'sqlite') {
      // Parameters, many rows per statement: one await per batch instead of one per row.
      const per = Math.max(1, Math.floor(SQLITE_PARAMS / cols));
      const tuple = `(${Array(cols).fill('?').join(',')})`;
      const full = await conn.prepare(`insert into ${table} values ${Array(per).fill(tuple).join(',')}`);
      let i = 0;
      for (; i + per <= rows.length; i += per) await full.run(rows.slice(i, i + per).flat());
      await full.close();
      if (i < rows.length) {
        const rest = rows.slice(i);
        await conn.query(`insert into ${table} values ${rest.map(() => tuple).join(',')}`, rest.flat());
      }
    } else {
      const driver = conn.driver;
      for (let i = 0; i < rows.length; i += BATCH) {
        const chunk = rows.slice(i, i + BATCH);
        const values = chunk
          .map((r) => `(${r.map((v) => `'${escapeWord(v, "'", driver)}'`).join(',')})`)
          .join(',');
        await conn.query(`insert into ${table} values ${values}`);
      }
    }
    await conn.commit();
  } catch (e) {
    await conn.rollback().catch(() => {});
    throw e;
  }
}
