import { BUILTIN_DESCRIPTIONS } from '../catalog.ts';
import { defineWorkload } from '../define.ts';

/** `SELECT 1` once per event: the smallest unit of client overhead, used to measure dbsmack itself. */
export default defineWorkload({
  name: 'select1',
  description: BUILTIN_DESCRIPTIONS.select1,
  options: {
    prepared: {
      type: 'bool',
      default: true,
      description: 'prepare the statement on the server (off: text protocol)',
    },
  },
  readOnly: () => true,
  client(ctx) {
    const stmt = ctx.statement('select1', 'SELECT 1', { prepare: ctx.options.prepared as boolean });
    // The statement's own promise is the event's: no async frame of its own (this is the overhead probe).
    // `single` lets the engine batch the events on the native I/O core (ClientHandler.single).
    const one = { statement: stmt };
    return { event: () => ctx.run(stmt), single: () => one };
  },
});
