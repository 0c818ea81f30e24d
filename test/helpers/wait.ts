/**
 * Bounded waits for an event a test depends on: a state of the server, a line of a child's output, a
 * process reaching a state in /proc. Each fails after its bound with what it was waiting for, instead of
 * hanging the suite or guessing with a sleep.
 */
import type { ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';

const pause = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/**
 * Poll `check` until it returns a value other than undefined/false, and return that value; fail after
 * `timeoutMs` naming `what`, and what `doing` says the check was last doing (which of its steps hung, when it
 * does not return). Polling the state itself (every `everyMs`) is the synchronisation: the wait ends as soon
 * as the state is there.
 */
export async function waitFor<T>(
  what: string,
  check: () => T | undefined | false | Promise<T | undefined | false>,
  {
    timeoutMs = 15_000,
    everyMs = 10,
    doing,
  }: { timeoutMs?: number; everyMs?: number; doing?: () => string } = {},
): Promise<T> {
  const lastStep = (): string => (doing === undefined ? '' : `; last step: ${doing()}`);
  const until = Date.now() + timeoutMs;
  let last: unknown;
  for (;;) {
    // The check itself is bounded too: a query that hangs must not turn the bounded wait into an endless one.
    let timer: NodeJS.Timeout | undefined;
    const hung = new Promise<never>((_, reject) => {
      timer = setTimeout(
        () => reject(new Error('the check itself did not return')),
        Math.max(until - Date.now(), 0) + 1000,
      );
    });
    try {
      const v = await Promise.race([Promise.resolve().then(check), hung]);
      if (v !== undefined && v !== false) return v;
      last = undefined;
    } catch (e) {
      last = e;
      if ((e as Error).message === 'the check itself did not return') {
        throw new Error(
          `gave up after ${timeoutMs / 1000} s waiting for ${what} (the check itself did not return)${lastStep()}`,
        );
      }
    } finally {
      clearTimeout(timer);
    }
    if (Date.now() >= until) {
      const why = last === undefined ? '' : ` (last attempt: ${(last as Error).message ?? String(last)})`;
      throw new Error(`gave up after ${timeoutMs / 1000} s waiting for ${what}${why}${lastStep()}`);
    }
    await pause(everyMs);
  }
}

/**
 * Wait until the child's `stream` output (everything so far, not one chunk) matches `re`; returns the match.
 * Fails naming `what` and quoting the output when the child exits first or `timeoutMs` passes.
 */
export function waitForOutput(
  child: ChildProcess,
  re: RegExp,
  what: string,
  { stream = 'stderr', timeoutMs = 30_000 }: { stream?: 'stdout' | 'stderr'; timeoutMs?: number } = {},
): Promise<RegExpMatchArray> {
  const src = child[stream];
  if (!src) return Promise.reject(new Error(`the child has no ${stream} pipe to wait on for ${what}`));
  return new Promise((resolve, reject) => {
    let seen = '';
    const finish = (err?: Error, m?: RegExpMatchArray): void => {
      clearTimeout(timer);
      src.off('data', onData);
      child.off('close', onClose);
      if (err) reject(err);
      else resolve(m as RegExpMatchArray);
    };
    const onData = (d: Buffer): void => {
      seen += d.toString();
      const m = re.exec(seen);
      if (m) finish(undefined, m);
    };
    const onClose = (code: number | null, signal: string | null): void =>
      finish(new Error(`the child exited (${signal ?? code}) before ${what}; its ${stream}:\n${seen}`));
    const timer = setTimeout(
      () =>
        finish(
          new Error(`gave up after ${timeoutMs / 1000} s waiting for ${what}; ${stream} so far:\n${seen}`),
        ),
      timeoutMs,
    );
    src.on('data', onData);
    child.once('close', onClose);
  });
}

/** The state letter and command name of a process from /proc/PID/stat, or undefined when it is gone. */
export function procState(pid: number): { state: string; comm: string } | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const open = stat.indexOf('(');
    const close = stat.lastIndexOf(')');
    return { comm: stat.slice(open + 1, close), state: stat.slice(close + 2, close + 3) };
  } catch {
    return undefined;
  }
}

/** Wait until a process spawned as `comm` has exec'd it and sleeps (state S): its counters then stay put. */
export function waitAsleep(pid: number, comm: string): Promise<void> {
  return waitFor(`process ${pid} to be ${comm} and asleep`, () => {
    const s = procState(pid);
    return s?.comm === comm && s.state === 'S';
  }).then(() => undefined);
}
