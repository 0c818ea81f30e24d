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

export function startCli(
  args: string[],
  opts: { cwd?: string; env?: NodeJS.ProcessEnv; input?: string } = {},
): { child: ChildProcess; done: Promise<CliResult> } {
  const child = spawn(process.execPath, [BIN, ...args], {
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
  });
  return { child, done };
}

export function runCli(
  args: string[],
  opts: { cwd?: string; env?: NodeJS.ProcessEnv; input?: string } = {},
): Promise<CliResult> {
  return startCli(args, opts).done;
}
