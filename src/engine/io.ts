/**
 * The engine's side of the native I/O core (`driver/native-core.ts`), kept to this module: a worker thread
 * on the native path blocks inside the core's wait while its clients' statements are in flight, so every
 * timer a client sets (a workload's `ctx.sleep`, a rate-mode arrival) is announced to the core, which then
 * does not block past it. Statement times come from `Connection.timedUs` (read in `client.ts`). On the
 * JavaScript path this is a plain timer.
 */
import { noteWake } from '../driver/native-core.ts';

export function sleep(ms: number): Promise<void> {
  noteWake(Date.now() + ms);
  return new Promise((r) => setTimeout(r, ms));
}
