/**
 * One clock for every thread: microseconds since the Unix epoch, from the thread's `performance` timer.
 * Differences within a thread are monotonic; phase boundaries shared between threads (start, warm-up end,
 * deadline) are compared against it too, so all workers switch phase at the same moment.
 */
const origin = performance.timeOrigin;

export function nowUs(): number {
  return (origin + performance.now()) * 1000;
}
