import { readdirSync, readFileSync } from 'node:fs';
import { waitFor } from './wait.ts';

/**
 * The /proc folders of the threads named `comm` of process `pid` (this one by default; a thread that ends
 * while they are read is left out).
 */
function threadDirsNamed(comm: string, pid: number | 'self' = 'self'): string[] {
  const dirs: string[] = [];
  for (const tid of readdirSync(`/proc/${pid}/task`)) {
    const dir = `/proc/${pid}/task/${tid}`;
    try {
      if (readFileSync(`${dir}/comm`, 'utf8').trim() === comm) dirs.push(dir);
    } catch {
      // (a thread that ended while the folder was read)
    }
  }
  return dirs;
}

/**
 * The CPU time, in nanoseconds, this process's native I/O thread (the core's shared thread, design 4, named
 * `dbsmack-io`) has run (the kernel's schedstat), or -1 when there is none: a count that rose says the thread
 * ran statements, one that stayed says it slept. (Not its context switches: before a sleep it yields the CPU
 * and looks again, for PostgreSQL's connections, so under load it may run a whole run without blocking once.)
 */
export function sharedThreadRunNs(): number {
  const [dir] = threadDirsNamed('dbsmack-io');
  if (dir === undefined) return -1;
  const ns = Number(readFileSync(`${dir}/schedstat`, 'utf8').split(' ')[0]);
  if (!Number.isFinite(ns)) throw new Error(`${dir}/schedstat holds no run time`);
  return ns;
}

/**
 * How many threads of process `pid` (this one by default) have the name `comm`: `dbsmack-conn` are the core's
 * threads of connections whose batches run on a thread of their own (design D), one a connection, made at
 * its first batch and kept until it closes.
 */
export function threadsNamed(comm: string, pid: number | 'self' = 'self'): number {
  return threadDirsNamed(comm, pid).length;
}

/** sharedThreadRunNs once two readings 20 ms apart agree (the thread asleep); fails after 2 s. */
export function settledRunNs(): Promise<number> {
  let last: number | undefined;
  return waitFor(
    'the shared I/O thread to settle',
    () => {
      const now = sharedThreadRunNs();
      const same = now === last;
      last = now;
      return same ? now : undefined;
    },
    { timeoutMs: 2000, everyMs: 20 },
  );
}
