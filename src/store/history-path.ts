/**
 * Where the history lives: `--history PATH`, else `$DBSMACK_HISTORY`, else the user's data directory
 * (`$XDG_DATA_HOME/dbsmack/history.sqlite`, `~/.local/share/dbsmack/history.sqlite`; the platform's
 * equivalent on macOS and Windows).
 */
import os from 'node:os';
import path from 'node:path';

export function defaultHistoryPath(env: NodeJS.ProcessEnv = process.env): string {
  if (env.DBSMACK_HISTORY) return env.DBSMACK_HISTORY;
  let dir: string;
  if (env.XDG_DATA_HOME) dir = env.XDG_DATA_HOME;
  else if (process.platform === 'darwin') dir = path.join(os.homedir(), 'Library', 'Application Support');
  else if (process.platform === 'win32')
    dir = env.LOCALAPPDATA ?? path.join(os.homedir(), 'AppData', 'Local');
  else dir = path.join(os.homedir(), '.local', 'share');
  return path.join(dir, 'dbsmack', 'history.sqlite');
}

/**
 * The history path for a command's options: commander gives `history` as a path (`--history PATH`),
 * `false` (`--no-history`) or undefined. Undefined result means: do not record.
 */
export function historyPathFrom(history: string | boolean | undefined): string | undefined {
  if (history === false) return undefined;
  if (typeof history === 'string') return history;
  return defaultHistoryPath();
}
