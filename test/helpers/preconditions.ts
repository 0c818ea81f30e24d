/**
 * Preconditions of a test that the repository cannot provide: a server, a tool, a file outside the
 * repository, a permission or a capability of the machine. When one is missing the test is skipped with the
 * reason printed (a developer's machine may lack it); under CI=true it fails instead, so that nothing CI was
 * meant to check passes by being skipped. Every test that depends on its surroundings goes through here.
 *
 * Usage: `if (!needFile(t, file, 'the shipped smack files')) return;`
 */
import { spawnSync } from 'node:child_process';
import { accessSync, constants } from 'node:fs';
import type { TestContext } from 'node:test';

/** True when a missing precondition fails the test instead of skipping it. */
export const STRICT = process.env.CI === 'true';

/**
 * A precondition of `t` is missing: throw under CI=true, otherwise skip `t` with the reason printed.
 * The test then returns: `if (…) return missing(t, why);`.
 */
export function missing(t: TestContext, why: string): void {
  if (STRICT) throw new Error(`CI=true and a precondition is missing: ${why}`);
  t.skip(why);
  process.stderr.write(`# skipped '${t.name}': ${why}\n`);
}

/** True when `why` is undefined (the precondition holds); otherwise as `missing`, and false. */
export function need(t: TestContext, why: string | undefined): boolean {
  if (why === undefined) return true;
  missing(t, why);
  return false;
}

/** A readable file (or directory) outside the repository; `what` says what it is for. */
export function needFile(t: TestContext, file: string, what: string): boolean {
  try {
    accessSync(file, constants.R_OK);
    return true;
  } catch (e) {
    return need(t, `${what}: ${file} is not readable (${(e as NodeJS.ErrnoException).code})`);
  }
}

/** The standard output of `cmd args` (a harmless invocation such as `--version`) when it exits 0. */
export function commandWorks(cmd: string, args: string[] = ['--version']): string | undefined {
  const r = spawnSync(cmd, args, { encoding: 'utf8', timeout: 30_000 });
  return r.status === 0 ? r.stdout : undefined;
}

/** A command that runs; `install` says how to get it. */
export function needCommand(t: TestContext, cmd: string, args: string[], install: string): boolean {
  return need(t, commandWorks(cmd, args) === undefined ? `${cmd} does not run here (${install})` : undefined);
}

/** Root, for what only root may do (changing another user's scheduling, running as another user). */
export function needRoot(t: TestContext, forWhat: string): boolean {
  return need(t, process.getuid?.() === 0 ? undefined : `needs root: ${forWhat}`);
}
