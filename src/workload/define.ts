import type { ClientContext, ClientHandler, SingleStatement, Workload } from './types.ts';

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
 * parameters, and the event runs it. The engine may then run many such events in one call into the native
 * I/O core (see `ClientHandler.single`); either way every event draws the same and counts the same.
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
      return ctx.run(e.statement, e.params);
    },
    single: draw,
  };
}
