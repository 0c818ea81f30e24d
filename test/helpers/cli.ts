/** Run the built CLI (`bin/dbsmack.js`) as a user would, capturing its output. */
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';

export const ROOT = path.resolve(import.meta.dirname, '..', '..');
export const BIN = path.join(ROOT, 'bin', 'dbsmack.js');

export interface CliResult {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

/** Temporary directories of this test process, removed when it exits. */
const made: string[] = [];
process.on('exit', () => {
  for (const d of made) rmSync(d, { recursive: true, force: true });
});

export function tmpDir(prefix = 'dbsmack-test-'): string {
  const d = mkdtempSync(path.join(os.tmpdir(), prefix));
  made.push(d);
  return d;
}

export interface CliOptions {
  cwd?: string;
  env?: NodeJS.ProcessEnv;
  input?: string;
  /** A command that runs the CLI (`['setpriv', '--bounding-set', '-sys_nice']`): node and BIN follow it. */
  prefix?: string[];
}

export function startCli(
  args: string[],
  opts: CliOptions = {},
): { child: ChildProcess; done: Promise<CliResult> } {
  const argv = [...(opts.prefix ?? []), process.execPath, BIN, ...args];
  const child = spawn(argv[0] as string, argv.slice(1), {
    cwd: opts.cwd ?? tmpDir(),
    // Runs are recorded in a history: keep the tests' out of the user's data directory.
    env: {
      DBSMACK_HISTORY: path.join(tmpDir('dbsmack-history-'), 'history.sqlite'),
      ...process.env,
      ...opts.env,
    },
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout?.on('data', (d: Buffer) => {
    stdout += d.toString();
  });
  child.stderr?.on('data', (d: Buffer) => {
    stderr += d.toString();
  });
  if (opts.input !== undefined) child.stdin?.end(opts.input);
  else child.stdin?.end();
  const done = new Promise<CliResult>((resolve) => {
    child.on('close', (code, signal) => resolve({ code, signal, stdout, stderr }));
    // A command that cannot be started never closes: end with its error instead.
    child.on('error', (e) =>
      resolve({ code: null, signal: null, stdout, stderr: `${stderr}${e.message}\n` }),
    );
  });
  return { child, done };
}

export function runCli(args: string[], opts: CliOptions = {}): Promise<CliResult> {
  return startCli(args, opts).done;
}
