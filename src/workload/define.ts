import { PARAM_TYPE_OIDS } from '../driver/pg-wire-encode.ts';
import { UsageError } from '../errors.ts';
import type { ClientContext, ClientHandler, ParamType, SingleStatement, Workload } from './types.ts';

/**
 * Define a workload. The built-in workloads use this very function; a user's module does the same and
 * runs with `dbsmack run ./my-workload.ts`:
 *
 * ```ts
 * import { defineWorkload } from 'dbsmack';
 * export default defineWorkload({
 *   name: 'kv_get',
 *   options: { keys: { type: 'int', default: 1000, description: 'key space' } },
 *   client(ctx) {
 *     const get = ctx.statement('get', 'SELECT v FROM kv WHERE k = ?');
 *     return { event: () => ctx.run(get, [ctx.random.int(1, ctx.options.keys as number)]) };
 *   },
 * });
 * ```
 */
export function defineWorkload(w: Workload): Workload {
  return w;
}

/**
 * The client handler of an event that is one statement: `draw()` picks the event's statement and
 * parameters, and the event runs it (as a text query when the draw has `sql`). The engine may then run many
 * such events in one call into the native I/O core (see `ClientHandler.single`); either way every event
 * draws the same and counts the same.
 *
 * ```ts
 * client(ctx) {
 *   const get = ctx.statement('get', 'SELECT v FROM kv WHERE k = ?');
 *   return oneStatement(ctx, () => ({ statement: get, params: [ctx.random.int(1, 1000)] }));
 * }
 * ```
 */
export function oneStatement(ctx: ClientContext, draw: () => SingleStatement): ClientHandler {
  return {
    event: () => {
      const e = draw();
      return e.sql === undefined ? ctx.run(e.statement, e.params) : ctx.query(e.statement.type, e.sql);
    },
    single: draw,
  };
}

/**
 * The client handler of an event that is always `length` statements run one after the other, nothing
 * between them (the statements of a transaction whose parameters do not depend on each other's results):
 * `draw()` picks the event's statements and parameters, and the event runs them with `ctx.runSequence` (as
 * text queries when the draws are: `sql` set on every one). The engine may then run many such events in one
 * call into the native I/O core (`ClientHandler.sequence`); either way every event draws the same and counts
 * the same. `transaction: true` says each event is one transaction, its
 * first statement BEGIN and its last COMMIT: after a statement past the first failed, the engine rolls it
 * back before the error policy (`ClientHandler.sequenceTransaction`).
 *
 * ```ts
 * client(ctx) {
 *   const begin = ctx.statement('begin', 'BEGIN', { kind: 'other' });
 *   const get = ctx.statement('get', 'SELECT v FROM kv WHERE k = ?');
 *   const put = ctx.statement('put', 'UPDATE kv SET v = v + 1 WHERE k = ?');
 *   const commit = ctx.statement('commit', 'COMMIT', { kind: 'other' });
 *   return statementSequence(ctx, 4, () => [
 *     { statement: begin },
 *     { statement: get, params: [ctx.random.int(1, 1000)] },
 *     { statement: put, params: [ctx.random.int(1, 1000)] },
 *     { statement: commit },
 *   ], { transaction: true });
 * }
 * ```
 */
export function statementSequence(
  ctx: ClientContext,
  length: number,
  draw: () => readonly SingleStatement[],
  options: { readonly transaction?: boolean } = {},
): ClientHandler {
  if (!Number.isInteger(length) || length < 1)
    throw new UsageError(
      `statementSequence: length must be a whole number of statements, at least 1 (got ${length})`,
    );
  return {
    event: () => {
      const items = draw();
      checkLength(items, length);
      return ctx.runSequence(items);
    },
    sequence: draw,
    sequenceLength: length,
    sequenceTransaction: options.transaction === true,
  };
}

/** A sequence's draw of another length than it declared: the module's mistake, said as one. */
export function checkLength(items: readonly SingleStatement[], length: number): void {
  if (items.length !== length)
    throw new UsageError(
      `the workload's sequence drew ${items.length} statements where its length says ${length} (statementSequence, or ClientHandler.sequence and sequenceLength)`,
    );
}

/** Every type name a statement may declare (`StatementOptions.paramTypes`): the driver's list of them. */
export const PARAM_TYPES = Object.keys(PARAM_TYPE_OIDS) as readonly ParamType[];

const KNOWN_PARAM_TYPES: ReadonlySet<string> = new Set(PARAM_TYPES);

/** A statement's declared parameter types (`StatementOptions.paramTypes`), checked when it is declared. */
export function checkParamTypes(type: string, types: readonly string[]): void {
  if (!Array.isArray(types))
    throw new UsageError(`statement ${type}: paramTypes must be a list of type names`);
  for (const t of types)
    if (!KNOWN_PARAM_TYPES.has(t))
      throw new UsageError(
        `statement ${type}: unknown parameter type ${JSON.stringify(t)} (one of ${PARAM_TYPES.join(', ')})`,
      );
}
