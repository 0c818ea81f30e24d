/**
 * `--history PATH` / `--no-history` for the commands that record (run, sweep), and recording a single run;
 * `--history PATH` of the commands that read it (history, show, compare).
 * The history is checked before the run starts; one that still cannot be written afterwards costs the run
 * nothing (it was printed) but is reported, with exit code 5.
 */

import { accessSync, constants, existsSync, type Stats, statSync } from 'node:fs';
import path from 'node:path';
import type { Command } from '@commander-js/extra-typings';
import { Option } from '@commander-js/extra-typings';
import { InputError, UsageError } from '../errors.ts';
import type { RunResult } from '../metrics/run-result.ts';
import { History, HistoryError } from '../store/history.ts';
import { historyPathFrom } from '../store/history-path.ts';
import { HISTORY_DEFAULT, helpDefault } from './help.ts';
import { checkOutputFile, fsReason, isSystemError, say } from './output.ts';

/** Add `--history PATH` and `--no-history` to a command (its value: path, false, or undefined). */
export function addHistoryOptions<C extends Command<unknown[], Record<string, unknown>>>(cmd: C): C {
  cmd.addOption(
    helpDefault(new Option('--history <path>', 'history database to record into'), HISTORY_DEFAULT),
  );
  cmd.addOption(new Option('--no-history', 'do not record in the history'));
  return cmd;
}

/** `--history PATH` of a command that reads the history (history, show, compare). */
export function readHistoryOption(): Option<'--history <path>'> {
  return helpDefault(new Option('--history <path>', 'history database'), HISTORY_DEFAULT);
}

/** `--format` of history and show: text or json. */
export function checkTextOrJson(format: string): void {
  if (format !== 'text' && format !== 'json')
    throw new UsageError(`unknown format '${format}'`, 'formats: text, json');
}

/** Open the history for writing, or undefined when `--no-history`. History problems become input errors. */
export function openHistoryForWrite(history: string | boolean | undefined): History | undefined {
  const file = historyPathFrom(history);
  if (file === undefined) return undefined;
  try {
    return History.open(file, { create: true });
  } catch (e) {
    if (e instanceof HistoryError) throw new InputError(e.message, e.hint);
    throw e;
  }
}

/**
 * Check, before any work, that the history can be recorded into: an existing file must be a dbsmack history
 * this version can write; a new one needs a writable directory. `--history PATH` and `$DBSMACK_HISTORY`
 * name a file whose directory must exist; the default's directories are created when needed.
 */
/** The warning a sweep or an experiment gives when its history cannot be written any more: it goes on without. */
export function historyWriteWarning(history: History, e: unknown): string {
  return `dbsmack: warning: the history ${history.path} cannot be written, going on without it: ${(e as Error).message}`;
}

export function checkHistoryPath(history: string | boolean | undefined): void {
  const file = historyPathFrom(history);
  if (file === undefined) return;
  const hint = 'give --history PATH, or --no-history to run without recording';
  let st: Stats | undefined;
  try {
    st = statSync(file);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== 'ENOENT')
      throw new UsageError(`cannot use the history ${file}: ${fsReason(e)}`, hint);
  }
  if (st !== undefined) {
    if (!st.isFile()) throw new UsageError(`cannot use the history ${file}: it is not a file`, hint);
    try {
      accessSync(file, constants.R_OK | constants.W_OK);
    } catch (e) {
      throw new UsageError(`cannot write the history ${file}: ${fsReason(e)}`, hint);
    }
    // newer schema, or not a history: refused now rather than after the run
    try {
      History.open(file, { create: false }).close();
    } catch (e) {
      if (e instanceof HistoryError) throw new UsageError(e.message, e.hint ?? hint);
      throw e;
    }
    checkOutputFile(file, 'the history');
    return;
  }
  const explicit = typeof history === 'string' || Boolean(process.env.DBSMACK_HISTORY);
  if (explicit) {
    checkOutputFile(file, 'the history');
    return;
  }
  // the default lives in the user's data directory, made on first use: its nearest existing ancestor
  let dir = path.dirname(path.resolve(file));
  while (!existsSync(dir) && path.dirname(dir) !== dir) dir = path.dirname(dir);
  try {
    accessSync(dir, constants.W_OK);
    if (!statSync(dir).isDirectory()) throw Object.assign(new Error('not a directory'), { code: 'ENOTDIR' });
  } catch (e) {
    throw new UsageError(`cannot create the history ${file}: ${fsReason(e)} (${dir})`, hint);
  }
}

/**
 * Store a finished `run` unless `--no-history`; says where on stderr unless quiet. A history that cannot be
 * written after the run (a full disk) is reported with its path; returns false then (the caller exits 5:
 * the result itself was printed).
 */
export function recordRun(result: RunResult, o: { history?: string | boolean; quiet?: boolean }): boolean {
  const file = historyPathFrom(o.history);
  if (file === undefined) return true;
  try {
    const h = History.open(file, { create: true });
    try {
      const id = h.addRun(result);
      if (!o.quiet) say(`dbsmack: recorded as run ${id} in ${file}`);
    } finally {
      h.close();
    }
    return true;
  } catch (e) {
    say(
      `dbsmack: cannot record the run in the history ${file}: ${isSystemError(e) || isSqliteError(e) ? fsReason(e) : (e as Error).message}`,
    );
    return false;
  }
}

/** better-sqlite3's errors carry SQLITE_FULL, SQLITE_IOERR…: their message says what happened. */
function isSqliteError(e: unknown): boolean {
  return (
    typeof (e as { code?: unknown })?.code === 'string' && (e as { code: string }).code.startsWith('SQLITE_')
  );
}
