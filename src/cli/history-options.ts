/**
 * `--history PATH` / `--no-history` for the commands that record (run, sweep), and recording a single run.
 * Recording never turns a good run into a failure: a history that cannot be written gets a warning.
 */
import type { Command } from '@commander-js/extra-typings';
import { Option } from '@commander-js/extra-typings';
import type { Target } from '../driver/types.ts';
import type { RunResult } from '../metrics/run-result.ts';
import { readServerInfo } from '../probe/server-settings.ts';
import { History, HistoryError } from '../store/history.ts';
import { historyPathFrom } from '../store/history-path.ts';
import { InputError } from './errors.ts';
import { HISTORY_DEFAULT, helpDefault } from './help.ts';
import { say } from './output.ts';

/** Add `--history PATH` and `--no-history` to a command (its value: path, false, or undefined). */
export function addHistoryOptions<C extends Command<unknown[], Record<string, unknown>>>(cmd: C): C {
  cmd.addOption(
    helpDefault(new Option('--history <path>', 'history database to record into'), HISTORY_DEFAULT),
  );
  cmd.addOption(new Option('--no-history', 'do not record in the history'));
  return cmd;
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

/** Attach the server's version and settings to a result (read over a fresh connection). */
export async function attachServerInfo(
  result: RunResult,
  target: Target,
  connectTimeoutS: number,
): Promise<void> {
  const info = await readServerInfo(target, connectTimeoutS * 1000);
  if (info) result.server = info;
}

/** Store a finished `run` unless `--no-history`; says where on stderr unless quiet. */
export function recordRun(result: RunResult, o: { history?: string | boolean; quiet?: boolean }): void {
  const file = historyPathFrom(o.history);
  if (file === undefined) return;
  try {
    const h = History.open(file, { create: true });
    try {
      const id = h.addRun(result);
      if (!o.quiet) say(`dbsmack: recorded as run ${id} in ${file}`);
    } finally {
      h.close();
    }
  } catch (e) {
    say(`dbsmack: warning: the run was not recorded in the history: ${(e as Error).message}`);
  }
}
