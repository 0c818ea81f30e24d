/**
 * One clock for every thread: microseconds since the Unix epoch, from the thread's `performance` timer.
 * Differences within a thread are monotonic; phase boundaries shared between threads (start, warm-up end,
 * deadline) are compared against it too, so all workers switch phase at the same moment.
 */
import { performance } from 'node:perf_hooks';

const origin = performance.timeOrigin;
// The global `performance` is a lazy getter in Node 20; reading it on every call showed in worker profiles.
const now = performance.now.bind(performance);

export function nowUs(): number {
  return (origin + now()) * 1000;
}
