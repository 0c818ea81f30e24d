/**
 * sysbench's bulk_insert: one table per thread (`sbtest1..N` of `(id, k)`); each event appends one row to
 * a multi-row INSERT that is sent when it reaches 512 KiB, and at the end. Prepare and run need the same
 * `--threads`.
 */
import { defineWorkload, UsageError } from '../../index.ts';
import { BUILTIN_DESCRIPTIONS } from '../catalog.ts';

const BULK_BYTES = 512 * 1024;

export const bulkInsert = defineWorkload({
  name: 'bulk_insert',
  description: BUILTIN_DESCRIPTIONS.bulk_insert,
  async prepare(ctx) {
    for (let i = 1; i <= ctx.threads; i++) {
      ctx.log(`Creating table 'sbtest${i}'...`);
      await ctx.conn.query(`CREATE TABLE IF NOT EXISTS sbtest${i} (
  id INTEGER NOT NULL,
  k INTEGER DEFAULT '0' NOT NULL,
  PRIMARY KEY (id))`);
    }
  },
  async cleanup(ctx) {
    for (let i = 1; i <= ctx.threads; i++) {
      ctx.log(`Dropping table 'sbtest${i}'...`);
      await ctx.conn.query(`DROP TABLE IF EXISTS sbtest${i}`);
    }
  },
  async check(ctx) {
    try {
      await ctx.conn.all(`SELECT id FROM sbtest${ctx.threads} LIMIT 1`);
    } catch {
      throw new UsageError(
        `table sbtest${ctx.threads} does not exist in ${ctx.target.redactedUrl}: bulk_insert needs one table per thread`,
        `run \`dbsmack prepare bulk_insert --db ${ctx.target.redactedUrl} --threads ${ctx.threads}\` first`,
      );
    }
  },
  textCheck: true,
  client(ctx) {
    const head = `INSERT INTO sbtest${ctx.clientId + 1} VALUES`;
    let rows: string[] = [];
    let size = head.length;
    let n = 0;
    const flush = async (): Promise<void> => {
      if (rows.length === 0) return;
      const sql = head + rows.join(',');
      rows = [];
      size = head.length;
      await ctx.query('bulk_insert', sql);
    };
    return {
      event: async () => {
        n++;
        const row = `(${n},${n})`;
        if (size + row.length + 1 > BULK_BYTES) await flush();
        rows.push(row);
        size += row.length + 1;
      },
      close: flush,
    };
  },
});
