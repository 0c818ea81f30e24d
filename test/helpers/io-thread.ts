import { readdirSync, readFileSync } from 'node:fs';

/**
 * The voluntary context switches of this process's native I/O thread (the core's shared thread, design 4,
 * named `dbsmack-io`), or -1 when there is none: each is a wait for a reply, so a count that rose says the
 * thread ran statements.
 */
export function sharedThreadSwitches(): number {
  for (const tid of readdirSync('/proc/self/task')) {
    const dir = `/proc/self/task/${tid}`;
    if (readFileSync(`${dir}/comm`, 'utf8').trim() !== 'dbsmack-io') continue;
    const m = /voluntary_ctxt_switches:\s+(\d+)/.exec(readFileSync(`${dir}/status`, 'utf8'));
    return Number(m?.[1] ?? -1);
  }
  return -1;
}
