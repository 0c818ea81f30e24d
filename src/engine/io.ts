/**
 * The engine's side of the native I/O core (`driver/native-core.ts`), kept to this module: a worker thread
 * on the native path blocks inside the core's wait while its clients' statements are in flight, so every
 * timer a client sets (a workload's `ctx.sleep`, a rate-mode arrival) is announced to the core, which then
 * does not block past it. Statement times come from `Connection.timedUs` (read in `client.ts`). On the
 * JavaScript path this is a plain timer. And the core hands its completions over in batches, so a worker's
 * interval flush waits until every client has reacted to the batch (`batchedFlush`), and first takes in
 * what the clients' statement batches in flight have completed (`beforeFlush`).
 */
import { noteWake, setBatchHooks } from '../driver/native-core.ts';

/**
 * Called before every interval flush: a client whose statement batch is in flight on the native core
 * (client.ts) records the statements of it that completed before the boundary, so that they count in the
 * interval they ended in rather than in the next (each statement's end time decides its interval).
 */
const harvesters: (() => void)[] = [];

export function beforeFlush(harvest: () => void): void {
  harvesters.push(harvest);
}

export function sleep(ms: number): Promise<void> {
  noteWake(Date.now() + ms);
  return new Promise((r) => setTimeout(r, ms));
}

/**
 * `flush` as the clients call it when an interval boundary is crossed, made to wait, while the native core
 * hands over a batch of completions, until every client has reacted to it: a statement and the end of its
 * event then always fall in the same interval (on the JavaScript path each completion's reactions run
 * before the next, so the flush can be at once). A batch handed over after a boundary (`crossed`) flushes
 * first: its statements, their events and what the workload counts on seeing them (`ctx.count`, which
 * may tell of the world after the boundary: a later stage's connections) fall in the interval after it,
 * not the one before.
 */
export function batchedFlush(
  flush: (now: number) => void,
  now: () => number,
  crossed: (now: number) => boolean,
): (now: number) => void {
  let inBatch = false;
  let due = false;
  harvesters.length = 0; // a new run's worker state: its clients register again
  const flushNow = (t: number): void => {
    for (const h of harvesters) h();
    flush(t);
  };
  setBatchHooks({
    begin: () => {
      const t = now();
      if (crossed(t)) flushNow(t);
      inBatch = true;
    },
    end: () => {
      inBatch = false;
      if (due) {
        due = false;
        flushNow(now());
      }
    },
  });
  return (t: number) => {
    if (inBatch) due = true;
    else flushNow(t);
  };
}
