/**
 * An example workload module: a key-value table read and updated with zipfian-distributed keys.
 *
 *   dbsmack prepare ./examples/kv-zipfian.ts --db postgres://root@127.0.0.1/test --keys 5000
 *   dbsmack run ./examples/kv-zipfian.ts --db postgres://root@127.0.0.1/test --keys 5000 --threads 4 --time 10
 *   dbsmack cleanup ./examples/kv-zipfian.ts --db postgres://root@127.0.0.1/test
 */
import { defineWorkload, distributionFromOptions, randOptions, randomString } from 'dbsmack';

export default defineWorkload({
  name: 'kv_zipfian',
  description: 'point reads and updates of a key-value table, hot keys first',
  options: {
    keys: { type: 'int', default: 1000, min: 1, description: 'number of keys' },
    reads: { type: 'int', default: 4, min: 0, description: 'reads per transaction' },
    ...randOptions,
    rand_type: { ...randOptions.rand_type, default: 'zipfian' },
  },
  async prepare({ conn, options, parallel, threads }) {
    const keys = options.keys as number;
    await conn.query('CREATE TABLE kv_example (k INTEGER PRIMARY KEY, v CHAR(23) NOT NULL)');
    // load in parallel, one slice of the keys per connection, 500 rows per INSERT
    await parallel(Math.min(threads, 4), async (c, i) => {
      const rows: string[] = [];
      for (let k = i + 1; k <= keys; k += Math.min(threads, 4)) {
        rows.push(`(${k}, '${'v'.repeat(23)}')`);
        if (rows.length === 500) await c.query(`INSERT INTO kv_example VALUES ${rows.splice(0).join(',')}`);
      }
      if (rows.length > 0) await c.query(`INSERT INTO kv_example VALUES ${rows.join(',')}`);
    });
  },
  async cleanup({ conn }) {
    await conn.query('DROP TABLE IF EXISTS kv_example');
  },
  client(ctx) {
    const keys = ctx.options.keys as number;
    const reads = ctx.options.reads as number;
    const key = distributionFromOptions(ctx.random, ctx.options);
    const get = ctx.statement('get', 'SELECT v FROM kv_example WHERE k = ?');
    const put = ctx.statement('put', 'UPDATE kv_example SET v = ? WHERE k = ?');
    return {
      async event() {
        await ctx.begin();
        for (let i = 0; i < reads; i++) await ctx.run(get, [key(1, keys)]);
        await ctx.run(put, [randomString(ctx.random, '@@@@@@@@@@@-###########'), key(1, keys)]);
        await ctx.commit();
      },
    };
  },
});
