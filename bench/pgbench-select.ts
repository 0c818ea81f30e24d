/**
 * pgbench's built-in "select-only" script (`pgbench -S`) as a dbsmack workload module: one
 * `SELECT abalance FROM pgbench_accounts WHERE aid = ?` per event, aid uniform over the table, prepared on
 * the server (as `-M prepared`). The table comes from `pgbench -i`; bench/peers.ts runs this against it.
 *
 *   pgbench -i -s 1 DB && dbsmack run ./bench/pgbench-select.ts --db postgres://…/DB --scale 1 --threads 8
 */
import { defineWorkload, oneStatement } from 'dbsmack';

export default defineWorkload({
  name: 'pgbench_select',
  description: 'pgbench -S: one primary-key SELECT on pgbench_accounts per event',
  options: {
    scale: { type: 'int', default: 1, min: 1, description: 'pgbench scale factor (100,000 accounts each)' },
  },
  async check({ conn }) {
    await conn.all('SELECT 1 FROM pgbench_accounts LIMIT 1');
  },
  // the check reads nothing typed: dbsmack's own client may run it (no pg loaded in the main thread)
  textCheck: true,
  // its one statement only reads: on PostgreSQL up to 8 clients get a load thread each, 4 on an AMD CPU
  // (Workload.readOnly)
  readOnly: () => true,
  client(ctx) {
    const accounts = 100_000 * (ctx.options.scale as number);
    const random = ctx.random;
    const select = ctx.statement('select', 'SELECT abalance FROM pgbench_accounts WHERE aid = ?');
    // One statement per event: the engine may batch them on the native I/O core (`oneStatement`).
    return oneStatement(ctx, () => ({
      statement: select,
      params: [1 + Math.floor(random.next() * accounts)],
    }));
  },
});
