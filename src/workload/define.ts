import type { Workload } from './types.ts';

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
