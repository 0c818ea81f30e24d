/**
 * The dbsmack command line: this file puts the commands together into commander's program, and turns every
 * user error into one line on stderr and a documented exit code.
 *
 * One file per command, named after it: `run.ts`, `prepare.ts` (prepare and cleanup), `gen-data.ts`,
 * `sweep.ts`, `experiment.ts`, `capacity.ts`, `history.ts`, `show.ts`, `compare.ts`, `report.ts`,
 * `pgbench.ts`, `list.ts`. They stand beside the option groups and helpers they share (`*-options.ts`,
 * `parse.ts`, `output.ts`, `help.ts`) rather than in a folder of their own, because those names are what
 * the tests, the other commands and the documents already import and cite. Each exports `registerX` (the
 * command and its options) and an action that returns its exit code; see command.ts for how that code
 * reaches `main`. Nothing in cli/ is module-level state: what the commands share is passed to them.
 */
import { Command, CommanderError } from '@commander-js/extra-typings';
import { redactSecrets } from '../driver/redact.ts';
import { EXIT, UserError } from '../errors.ts';
import { VERSION } from '../version.ts';
import { registerCapacity } from './capacity.ts';
import type { ExitSink } from './command.ts';
import { registerCompare } from './compare.ts';
import { registerExperiment } from './experiment.ts';
import { registerGenData } from './gen-data.ts';
import { helpConfig } from './help.ts';
import { registerHistory } from './history.ts';
import { registerList } from './list.ts';
import { fsReason, isSystemError } from './output.ts';
import { registerPgbench } from './pgbench.ts';
import { registerPrepare } from './prepare.ts';
import { registerReport } from './report.ts';
import { registerRun, runInvocation } from './run.ts';
import { registerShow } from './show.ts';
import { registerSweep } from './sweep.ts';

/** run's option mapper lives in run.ts; it is handed from here to the commands that copy run's options. */
export { runInvocation };

/**
 * The program with every command. The action that commander runs hands its exit code to `exit` (none:
 * the code is dropped, as a test that only looks at the commands wants).
 */
export function buildProgram(exit: ExitSink = () => {}): Command {
  const program = new Command()
    .name('dbsmack')
    .description(
      'Database load benchmarking for MySQL/MariaDB, PostgreSQL and SQLite: super-smack files, sysbench OLTP workloads, sweeps and comparisons.',
    )
    .version(VERSION, '-V, --version')
    // before the commands: they inherit it
    .configureHelp(helpConfig)
    .option('--debug', 'print stack traces of errors')
    .showHelpAfterError('(see dbsmack --help)')
    .exitOverride()
    .configureOutput({
      // One line, as the workload options' errors read: "unknown option '--metirc' (did you mean --metric?)"
      outputError: (str, write) =>
        write(
          `dbsmack: ${str
            .replace(/^error: /, '')
            .replace(/\n\(Did you mean (.*)\?\)/, ' (did you mean $1?)')
            .trimEnd()}\n`,
        ),
    });

  registerRun(program, exit);
  registerPrepare(program, exit); // prepare and cleanup
  registerGenData(program, exit);
  // sweeps, history and comparisons; these copy run's options, so they come after run
  registerSweep(program, exit, runInvocation);
  registerExperiment(program, exit, runInvocation); // experiment plans (issue 15)
  registerCapacity(program, exit, runInvocation); // the highest rate that holds an SLO (issue 19)
  registerHistory(program, exit);
  registerShow(program, exit);
  registerCompare(program, exit);
  registerReport(program, exit); // report: HTML/Markdown/SVG/PNG reports (issue 8)
  registerPgbench(program, exit); // pgbench's command line (issue 16)
  registerList(program, exit);
  return program;
}

/** What main reports of an error: one line (and a hint) on stderr, the stack with --debug; the exit code. */
function fail(e: unknown, debug: boolean): number {
  if (e instanceof CommanderError) {
    if (
      e.code === 'commander.helpDisplayed' ||
      e.code === 'commander.help' ||
      e.code === 'commander.version' ||
      e.exitCode === 0
    ) {
      return EXIT.ok;
    }
    // commander has printed its one-line message already
    return EXIT.usage;
  }
  if (e instanceof UserError) {
    process.stderr.write(`dbsmack: ${redactSecrets(e.message)}\n`);
    if (e.hint) process.stderr.write(`hint: ${redactSecrets(e.hint)}\n`);
    if (debug && e.stack) process.stderr.write(`${redactSecrets(e.stack)}\n`);
    return e.exitCode;
  }
  if (isSystemError(e)) {
    // A file or directory the user named (or its disk) failed us: a user error, never an internal one.
    const where = e.path !== undefined ? ` ${e.path}` : '';
    process.stderr.write(`dbsmack: cannot ${e.syscall}${where}: ${redactSecrets(fsReason(e))}\n`);
    if (debug && e.stack) process.stderr.write(`${redactSecrets(e.stack)}\n`);
    return ['ENOSPC', 'EDQUOT', 'EFBIG', 'EIO'].includes(e.code ?? '') ? EXIT.output : EXIT.input;
  }
  const err = e as Error;
  process.stderr.write(`dbsmack: internal error: ${redactSecrets(err?.message ?? String(e))}\n`);
  if (debug && err?.stack) process.stderr.write(`${redactSecrets(err.stack)}\n`);
  else process.stderr.write('hint: run again with --debug for a stack trace, and report it\n');
  return EXIT.internal;
}

/**
 * Run the command line `argv` (without node and the script) and return its exit code: the one the action
 * of the command handed over, or the one its error maps to. entry.ts sets `process.exitCode` from it.
 */
export async function main(argv: string[]): Promise<number> {
  const debug = argv.includes('--debug');
  let code: number = EXIT.ok;
  try {
    await buildProgram((c) => {
      code = c;
    }).parseAsync(argv, { from: 'user' });
    return code;
  } catch (e) {
    return fail(e, debug);
  }
}
