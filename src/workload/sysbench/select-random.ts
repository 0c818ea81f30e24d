/**
 * sysbench's select_random_points and select_random_ranges: one SELECT per event on the `k` index, each
 * client drawing from its own slice of the key space so that clients do not overlap. One table only.
 */
import {
  type AdminContext,
  type ClientContext,
  type ClientHandler,
  defineWorkload,
  distributionFromOptions,
  type OptionSpec,
  oneStatement,
  type SingleStatement,
  UsageError,
} from '../../index.ts';
import { BUILTIN_DESCRIPTIONS } from '../catalog.ts';
import { sysbenchOnError } from './errors.ts';
import { withValues } from './oltp-client.ts';
import { asOltp, type OltpOptions, oltpOptions } from './options.ts';
import { checkTables, dropTables, prepareTables } from './schema.ts';

function oneTable(ctx: AdminContext, name: string): void {
  if (asOltp(ctx.options).tables !== 1) {
    throw new UsageError(`${name} does not support --tables > 1`, 'use --tables 1');
  }
}

/** This client's slice of [0, table_size]: sysbench's `rlen * thread_id .. + rlen` (float in Lua). */
function slice(tableSize: number, clientId: number, clients: number): [number, number] {
  const rlen = tableSize / clients;
  const rmin = rlen * clientId;
  return [Math.floor(rmin), Math.floor(rmin + rlen)];
}

export const selectRandomPoints = defineWorkload({
  name: 'select_random_points',
  description: BUILTIN_DESCRIPTIONS.select_random_points,
  options: {
    ...oltpOptions,
    random_points: {
      type: 'int',
      default: 10,
      min: 1,
      description: 'number of random points in the IN() clause in generated SELECTs',
    } as OptionSpec,
  },
  async prepare(ctx) {
    oneTable(ctx, 'select_random_points');
    await prepareTables(ctx, asOltp(ctx.options).table_size);
  },
  cleanup: (ctx) => dropTables(ctx, 1),
  async check(ctx) {
    oneTable(ctx, 'select_random_points');
    await checkTables(ctx, 'select_random_points', [1]);
  },
  textCheck: true,
  readOnly: () => true,
  client(ctx) {
    const n = ctx.options.random_points as number;
    const o = asOltp(ctx.options);
    const marks = Array.from({ length: n }, () => '?').join(', ');
    const sql = `SELECT id, k, c, pad FROM sbtest1 WHERE k IN (${marks})`;
    const pick = distributionFromOptions(ctx.random, ctx.options);
    const [lo, hi] = slice(o.table_size, ctx.clientId, ctx.clients);
    return oneDrawn(ctx, o, 'random_points', sql, () => {
      const params = new Array<number>(n);
      for (let i = 0; i < n; i++) params[i] = pick(lo, hi);
      return params;
    });
  },
});

export const selectRandomRanges = defineWorkload({
  name: 'select_random_ranges',
  description: BUILTIN_DESCRIPTIONS.select_random_ranges,
  options: {
    ...oltpOptions,
    number_of_ranges: {
      type: 'int',
      default: 10,
      min: 1,
      description: 'number of random BETWEEN ranges per SELECT',
    } as OptionSpec,
    delta: { type: 'int', default: 5, min: 0, description: 'size of BETWEEN ranges' } as OptionSpec,
  },
  async prepare(ctx) {
    oneTable(ctx, 'select_random_ranges');
    await prepareTables(ctx, asOltp(ctx.options).table_size);
  },
  cleanup: (ctx) => dropTables(ctx, 1),
  async check(ctx) {
    oneTable(ctx, 'select_random_ranges');
    await checkTables(ctx, 'select_random_ranges', [1]);
  },
  textCheck: true,
  readOnly: () => true,
  client(ctx) {
    const n = ctx.options.number_of_ranges as number;
    const delta = ctx.options.delta as number;
    const o = asOltp(ctx.options);
    const terms = Array.from({ length: n }, () => 'k BETWEEN ? AND ?').join(' OR ');
    const sql = `SELECT count(k) FROM sbtest1 WHERE ${terms}`;
    const pick = distributionFromOptions(ctx.random, ctx.options);
    const [lo, hi] = slice(o.table_size, ctx.clientId, ctx.clients);
    return oneDrawn(ctx, o, 'random_ranges', sql, () => {
      const params = new Array<number>(n * 2);
      for (let i = 0; i < n * 2; i += 2) {
        const v = pick(lo, hi);
        params[i] = v;
        params[i + 1] = v + delta;
      }
      return params;
    });
  },
});

/**
 * The handler of events of one statement, `sql` with the parameters `draw` gives (a new array each: a
 * batch keeps the events it drew until it runs them): prepared, or under `--db-ps-mode=disable` a text
 * query with the values put in, as sysbench sends it then; with `single`, so that the engine may batch them.
 */
function oneDrawn(
  ctx: ClientContext,
  o: OltpOptions,
  type: string,
  sql: string,
  draw: () => number[],
): ClientHandler {
  const text = o.db_ps_mode === 'disable';
  // integers declared int8, as sysbench's PostgreSQL driver declares them (OltpClient's TYPES)
  const parts = sql.split('?');
  const statement = ctx.statement(type, sql, {
    prepare: !text,
    paramTypes: parts.slice(1).map(() => 'int8' as const),
  });
  const onError = sysbenchOnError(ctx.driver, ctx.options);
  const handler = oneStatement(ctx, (): SingleStatement => {
    const params = draw();
    return text ? { statement, params, sql: withValues(parts, params) } : { statement, params };
  });
  return onError ? { ...handler, onError } : handler;
}
