/**
 * Entry point of a load worker thread: serves its share of a run's clients (load-thread.ts) on the thread's
 * port to the engine. An error no client caught ends the thread, which the engine sees as the worker's
 * `error` event.
 */
import { parentPort } from 'node:worker_threads';
import { serveLoad } from './load-thread.ts';

const port = parentPort;
if (port === null) throw new Error('worker-main.ts must run in a worker thread');

serveLoad(port, {
  inThread: false,
  fatal: (e) => {
    throw e;
  },
});
