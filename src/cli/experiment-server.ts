/**
 * What an experiment does to the server between arms: the plan's own `stop` and `start` commands (through
 * `sh -c`, only with --allow-shell, nothing else), a bounded wait until the server answers, and the check of
 * the server variables an arm names. A command's output goes to a temporary file, not a pipe: a server the
 * start command leaves in the background keeps writing to it, and a closed pipe would kill it (SIGPIPE).
 */
import { spawn } from 'node:child_process';
import { closeSync, openSync, readFileSync, unlinkSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { loadDriver } from '../driver/index.ts';
import { redactSecrets } from '../driver/redact.ts';
import type { Target } from '../driver/types.ts';
import { ConnectError, EXIT, UserError } from '../errors.ts';

/** A server command that failed, or a server that did not come back: the experiment stops (exit 4). */
export class ServerControlError extends UserError {
  override readonly name = 'ServerControlError';
  constructor(message: string, hint?: string, exitCode: number = EXIT.runFailed) {
    super(message, hint, exitCode);
  }
}

/**
 * A plan's command as dbsmack shows and stores it: the registered secrets and URL passwords masked, and the
 * password options of the MySQL and PostgreSQL clients (`-pSECRET`, `--password=SECRET`, `PGPASSWORD=…`).
 */
export function redactCommand(command: string): string {
  return redactSecrets(command)
    .replace(/(^|\s)(-p)(?!\s)\S+/g, '$1$2***')
    .replace(/(--password[= ])\S+/g, '$1***')
    .replace(/(\b(?:PGPASSWORD|MYSQL_PWD)=)\S+/g, '$1***');
}

/** Run one command of the plan; resolves when the shell exits 0 within `timeoutS`, else throws with its output's tail. */
export async function runServerCommand(
  command: string,
  what: string,
  timeoutS: number,
  shouldStop: () => boolean,
): Promise<void> {
  const logFile = path.join(os.tmpdir(), `dbsmack-server-${process.pid}-${Date.now()}.log`);
  const fd = openSync(logFile, 'w', 0o600);
  const tail = (): string => {
    try {
      const t = readFileSync(logFile, 'utf8').trim().split('\n').slice(-5).join(' | ');
      return t ? `: ${redactSecrets(t)}` : '';
    } catch {
      return '';
    }
  };
  try {
    const child = spawn('sh', ['-c', command], { stdio: ['ignore', fd, fd], detached: false });
    const outcome = await new Promise<{
      code: number | null;
      signal: string | null;
      timedOut: boolean;
      error?: Error;
    }>((resolve) => {
      let timedOut = false;
      const timer = setTimeout(() => {
        timedOut = true;
        child.kill('SIGTERM');
      }, timeoutS * 1000);
      const poll = setInterval(() => {
        if (shouldStop()) child.kill('SIGTERM');
      }, 200);
      child.on('error', (error) => {
        clearTimeout(timer);
        clearInterval(poll);
        resolve({ code: null, signal: null, timedOut, error });
      });
      child.on('exit', (code, signal) => {
        clearTimeout(timer);
        clearInterval(poll);
        resolve({ code, signal, timedOut });
      });
    });
    const shown = redactCommand(command);
    if (outcome.error)
      throw new ServerControlError(`${what}: cannot run '${shown}': ${outcome.error.message}`);
    if (outcome.timedOut)
      throw new ServerControlError(
        `${what}: '${shown}' did not finish within ${timeoutS} s${tail()}`,
        'a start command must return once the server is launched (start it in the background, e.g. start-stop-daemon --background)',
      );
    if (outcome.code !== 0)
      throw new ServerControlError(
        `${what}: '${shown}' failed (${outcome.signal ? `signal ${outcome.signal}` : `exit ${outcome.code}`})${tail()}`,
      );
  } finally {
    closeSync(fd);
    try {
      unlinkSync(logFile);
    } catch {
      // gone already
    }
  }
}

/**
 * Wait until the server takes a connection, for at most `waitS` seconds (each attempt bounded by the
 * connect timeout). Throws a ConnectError (exit 3) naming the redacted URL and the last error.
 */
export async function waitForServer(
  target: Target,
  waitS: number,
  connectTimeoutS: number,
  what: string,
  shouldStop: () => boolean,
): Promise<void> {
  const driver = await loadDriver(target.driver);
  const deadline = Date.now() + waitS * 1000;
  let last = '';
  for (;;) {
    if (shouldStop()) return;
    const left = deadline - Date.now();
    try {
      const conn = await driver.connect(target, {
        connectTimeoutMs: Math.max(500, Math.min(connectTimeoutS * 1000, left)),
      });
      await conn.close().catch(() => {});
      return;
    } catch (e) {
      last = (e as Error).message;
    }
    if (Date.now() + 250 >= deadline)
      throw new ConnectError(
        `${what}: the server at ${target.redactedUrl} did not answer within ${waitS} s after its start (last: ${redactSecrets(last)})`,
        'NO_SERVER',
        'the partial experiment is saved: fix the start command (or raise server wait:), then dbsmack experiment PLAN --resume',
      );
    await new Promise((r) => setTimeout(r, 250));
  }
}

/** Read server variables by name: MySQL/MariaDB global variables, PostgreSQL settings. Missing ones are absent. */
export async function readVariables(
  target: Target,
  names: readonly string[],
  connectTimeoutS: number,
): Promise<Record<string, string>> {
  const driver = await loadDriver(target.driver);
  const conn = await driver.connect(target, { connectTimeoutMs: connectTimeoutS * 1000 });
  const out: Record<string, string> = {};
  try {
    for (const n of names) {
      if (target.driver === 'mysql') {
        const rows = await conn.all('SHOW GLOBAL VARIABLES WHERE Variable_name = ?', [n]);
        const r = rows[0];
        if (r) out[n] = String(r.Value ?? r.value ?? '');
      } else if (target.driver === 'postgres') {
        const rows = await conn.all('SELECT current_setting($1, true) AS value', [n]);
        const v = rows[0]?.value;
        if (v !== undefined && v !== null) out[n] = String(v);
      } else {
        const rows = await conn.all(`PRAGMA ${n.replace(/[^A-Za-z0-9_]/g, '')}`);
        const r = rows[0];
        if (r) out[n] = String(Object.values(r)[0]);
      }
    }
  } finally {
    await conn.close().catch(() => {});
  }
  return out;
}
