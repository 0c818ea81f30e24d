/**
 * What every command file shares with main.ts. A command file (`cli/<command>.ts`) exports a `register…`
 * that defines its command on the program, and an action that returns the command's exit code (a value of
 * `EXIT`); the one line of commander's action hands that code to the `ExitSink` main gave, and main returns
 * it from `main()` (entry.ts sets `process.exitCode` from it). Nothing here, or in any command file, keeps
 * state between two calls of `main()`.
 */
import { Option } from '@commander-js/extra-typings';
import { DEFAULT_URL } from '../driver/url.ts';

/**
 * Where a command's action hands its exit code: main keeps the code of the one action commander ran. A
 * command that ends without calling it (help printed by commander, `--version`) exits 0.
 */
export type ExitSink = (code: number) => void;

/** `--db URL` (also `$DBSMACK_DB`) of the commands that connect to a workload's database: run, prepare, cleanup. */
export function dbOption(): Option<'--db <url>', undefined, string> {
  return new Option(
    '--db <url>',
    'database URL: sqlite:PATH, mysql://…, mariadb://…, postgres://…; ?connector=dbsmack|mysql2|mariadb|pg picks the client of the load connections (dbsmack when not given); ?io=native|js its socket I/O (the native core when built); ?batch=off runs one-statement events one by one on the native core (DBSMACK_BATCH=off)',
  )
    .default(DEFAULT_URL)
    .env('DBSMACK_DB');
}
