/**
 * The engine's side of the native I/O core (`driver/native-core.ts`), kept to this module: a worker thread
 * on the native path blocks inside the core's wait while its clients' statements are in flight, so every
 * timer a client sets (a workload's `ctx.sleep`, a rate-mode arrival) is announced to the core, which then
 * does not block past it. Statement times come from `Connection.timedUs` (read in `client.ts`). On the
 * JavaScript path this is a plain timer. And the core hands its completions over in batches, so a worker's
 * interval flush waits until every client has reacted to the batch (`batchedFlush`).
 */
import { noteWake, setBatchHooks } from '../driver/native-core.ts';

export function sleep(ms: number): Promise<void> {
  noteWake(Date.now() + ms);
  return new Promise((r) => setTimeout(r, ms));
}

/**
 * `flush` as the clients call it when an interval boundary is crossed, made to wait, while the native core
 * hands over a batch of completions, until every client has reacted to it: a statement and the end of its
 * event then always fall in the same interval (on the JavaScript path each completion's reactions run
 * before the next, so the flush can be at once).
 */
export function batchedFlush(flush: (now: number) => void, now: () => number): (now: number) => void {
  let inBatch = false;
  let due = false;
  setBatchHooks({
    begin: () => {
      inBatch = true;
    },
    end: () => {
      inBatch = false;
      if (due) {
        due = false;
        flush(now());
      }
    },
  });
  return (t: number) => {
    if (inBatch) due = true;
    else flush(t);
  };
}
