/**
 * sysbench 1.0.20's OLTP scripts as dbsmack workloads, written with the public workload API
 * (`defineWorkload`, distributions, random strings) that users write their own with.
 */
import {
  type AdminContext,
  C_TEMPLATE,
  defineWorkload,
  distributionFromOptions,
  PAD_TEMPLATE,
  randomString,
  type SingleStatement,
  uniqueSequence,
  type Workload,
} from '../../index.ts';
import { BUILTIN_DESCRIPTIONS, type BuiltinName } from '../catalog.ts';
import { sysbenchOnError } from './errors.ts';
import { OltpClient, type STATEMENT_TYPES, type TxGroups } from './oltp-client.ts';
import { asOltp, oltpOptions } from './options.ts';
import { checkTables, dropTables, prepareTables } from './schema.ts';

function oltp(
  name: BuiltinName,
  keys: readonly (typeof STATEMENT_TYPES)[number][],
  event: (c: OltpClient) => Promise<void>,
  extra: Partial<Workload> = {},
  single?: (c: OltpClient) => (() => SingleStatement) | undefined,
  sequence?: (c: OltpClient) => ReturnType<OltpClient['transaction']>,
): Workload {
  return defineWorkload({
    name,
    description: BUILTIN_DESCRIPTIONS[name],
    options: oltpOptions,
    prepare: (ctx) => prepareTables(ctx, asOltp(ctx.options).table_size),
    cleanup: (ctx) => dropTables(ctx, asOltp(ctx.options).tables),
    check: (ctx) => checkAll(ctx, name),
    textCheck: true,
    client(ctx) {
      const onError = sysbenchOnError(ctx.driver, ctx.options);
      const c = new OltpClient(ctx, keys);
      const one = single?.(c);
      const tx = sequence?.(c);
      return {
        event: () => event(c),
        ...(onError ? { onError } : {}),
        ...(one ? { single: one } : {}),
        ...(tx ?? {}),
      };
    },
    ...extra,
  });
}

function checkAll(ctx: AdminContext, name: string): Promise<void> {
  const n = asOltp(ctx.options).tables;
  return checkTables(ctx, name, n > 1 ? [1, n] : [1]);
}

const READS = ['point_selects', 'simple_ranges', 'sum_ranges', 'order_ranges', 'distinct_ranges'] as const;
const WRITES = ['index_updates', 'non_index_updates', 'deletes', 'inserts'] as const;

/**
 * A transaction workload: BEGIN, the body of `groups`, COMMIT (skipped with --skip-trx). The body is one
 * sequence (ClientContext.runSequence): drawn whole in sysbench's order, run one statement at a time, under
 * BEGIN and COMMIT of their own, as sysbench sends them. Where statements are prepared, the whole
 * transaction is also a `sequence` (OltpClient.transaction): on the native I/O core the engine runs
 * transactions in batches, each statement still one round trip of its own.
 */
function transactions(
  name: BuiltinName,
  keys: readonly (typeof STATEMENT_TYPES)[number][],
  groups: TxGroups,
): Workload {
  return oltp(
    name,
    keys,
    async (c) => {
      await c.begin();
      await c.run((out) => c.drawBody(out, groups));
      await c.commit();
    },
    // reads alone: no write, no row lock (run/plan.ts readsOnly)
    groups.writes ? {} : { readOnly: () => true },
    undefined,
    (c) => c.transaction(groups),
  );
}

export const oltpReadOnly = transactions('oltp_read_only', READS, { reads: true, writes: false });

export const oltpReadWrite = transactions('oltp_read_write', [...READS, ...WRITES], {
  reads: true,
  writes: true,
});

export const oltpWriteOnly = transactions('oltp_write_only', WRITES, { reads: false, writes: true });

export const oltpPointSelect = oltp(
  'oltp_point_select',
  ['point_selects'],
  // sysbench forces one query per event here, whatever --point-selects says
  (c) => c.pointSelects(1),
  { readOnly: () => true },
  (c) => () => c.point('point_selects'),
);

export const oltpUpdateIndex = oltp(
  'oltp_update_index',
  ['index_updates'],
  (c) => c.indexUpdates(),
  {},
  // one statement per event when --index-updates is 1 (the default)
  (c) => (c.o.index_updates === 1 ? () => c.point('index_updates') : undefined),
);

export const oltpUpdateNonIndex = oltp(
  'oltp_update_non_index',
  ['non_index_updates'],
  (c) => c.nonIndexUpdates(),
  {},
  (c) => (c.o.non_index_updates === 1 ? () => c.nonIndexUpdate() : undefined),
);

export const oltpDelete = oltp(
  'oltp_delete',
  ['deletes'],
  (c) => c.deleteOne(),
  {},
  (c) => () => c.point('deletes'),
);

/**
 * sysbench's oltp_insert: one text INSERT per event. With --auto-inc off, prepare creates empty tables and
 * ids come from a unique sequence, so they never collide.
 */
export const oltpInsert = defineWorkload({
  name: 'oltp_insert',
  description: BUILTIN_DESCRIPTIONS.oltp_insert,
  options: oltpOptions,
  prepare: (ctx) => prepareTables(ctx, asOltp(ctx.options).auto_inc ? asOltp(ctx.options).table_size : 0),
  cleanup: (ctx) => dropTables(ctx, asOltp(ctx.options).tables),
  check: (ctx) => checkAll(ctx, 'oltp_insert'),
  textCheck: true,
  client(ctx) {
    const o = asOltp(ctx.options);
    const pick = distributionFromOptions(ctx.random, ctx.options);
    // every client uses the run's seed, so that they share one permutation and their strides never meet
    const unique = uniqueSequence(ctx.clientId, ctx.clients, ctx.seed);
    const withoutId = o.auto_inc && ctx.driver !== 'mysql';
    const onError = sysbenchOnError(ctx.driver, ctx.options);
    /** One event's INSERT, drawn: the table, then k, c and pad, then the id (sysbench's order). */
    const draw = (): string => {
      const table = `sbtest${1 + Math.floor(ctx.random.next() * o.tables)}`;
      const k = pick(1, o.table_size);
      const c = randomString(ctx.random, C_TEMPLATE);
      const pad = randomString(ctx.random, PAD_TEMPLATE);
      if (withoutId) return `INSERT INTO ${table} (k, c, pad) VALUES (${k}, '${c}', '${pad}')`;
      const id = o.auto_inc ? 0 : unique() - 2147483648;
      return `INSERT INTO ${table} (id, k, c, pad) VALUES (${id}, ${k}, '${c}', '${pad}')`;
    };
    // declared for its type only: events of one text query each, which the engine may batch (single)
    const inserts = ctx.statement('inserts', 'INSERT INTO sbtest1 (k) VALUES (?)', { prepare: false });
    return {
      ...(onError ? { onError } : {}),
      event: () => ctx.query('inserts', draw()),
      single: () => ({ statement: inserts, sql: draw() }),
    };
  },
});
