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
 * main.ts imports the command files lazily (`COMMANDS`): a command line that names its command loads only
 * that file (and run.ts for the commands that copy run's options); `--help`, `help` and the rest load all.
 */
import { Command, CommanderError } from '@commander-js/extra-typings';
import { DbError } from '../driver/errors.ts';
import { redactSecrets } from '../driver/redact.ts';
import { EXIT, UserError } from '../errors.ts';
import { VERSION } from '../version.ts';
import type { ExitSink } from './command.ts';
import { helpConfig } from './help.ts';
import { fsReason, isSystemError } from './output.ts';

/** What a command file exports to define its command(s) on the program. */
type Register = (program: Command, exit: ExitSink) => void;

/** Load run.ts's option mapper for the commands that copy run's options. */
const runInvocation = async () => (await import('./run.ts')).runInvocation;

/** A command of the program: the names it answers to (a file may define two) and a loader of its file. */
export interface CommandEntry {
  readonly names: readonly string[];
  readonly load: () => Promise<Register>;
  /** It copies run's options from the program's `run` command, which must be defined before it. */
  readonly copiesRun?: true;
}

const RUN: CommandEntry = { names: ['run'], load: async () => (await import('./run.ts')).registerRun };

/**
 * Every command, in the order `--help` lists them. The files are imported only when wanted, so that
 * `dbsmack run` does not compile the modules of sweep, report, experiment… before its first query (about
 * 50 ms of CPU).
 */
export const COMMANDS: readonly CommandEntry[] = [
  RUN,
  { names: ['prepare', 'cleanup'], load: async () => (await import('./prepare.ts')).registerPrepare },
  { names: ['gen-data'], load: async () => (await import('./gen-data.ts')).registerGenData },
  // sweeps, history and comparisons; these copy run's options
  {
    names: ['sweep'],
    load: async () => {
      const [{ registerSweep }, inv] = await Promise.all([import('./sweep.ts'), runInvocation()]);
      return (program, exit) => registerSweep(program, exit, inv);
    },
    copiesRun: true,
  },
  {
    names: ['experiment'], // experiment plans (issue 15)
    load: async () => {
      const [{ registerExperiment }, inv] = await Promise.all([import('./experiment.ts'), runInvocation()]);
      return (program, exit) => registerExperiment(program, exit, inv);
    },
    copiesRun: true,
  },
  {
    names: ['capacity'], // the highest rate that holds an SLO (issue 19)
    load: async () => {
      const [{ registerCapacity }, inv] = await Promise.all([import('./capacity.ts'), runInvocation()]);
      return (program, exit) => registerCapacity(program, exit, inv);
    },
    copiesRun: true,
  },
  { names: ['history'], load: async () => (await import('./history.ts')).registerHistory },
  { names: ['show'], load: async () => (await import('./show.ts')).registerShow },
  { names: ['compare'], load: async () => (await import('./compare.ts')).registerCompare },
  { names: ['report'], load: async () => (await import('./report.ts')).registerReport }, // reports (issue 8)
  { names: ['pgbench'], load: async () => (await import('./pgbench.ts')).registerPgbench }, // issue 16
  { names: ['list'], load: async () => (await import('./list.ts')).registerList },
];

/** What a command line that only asks for the version (`--version`, `-V`) needs of the commands: none. */
export const VERSION_ONLY: CommandEntry = { names: [], load: async () => () => {} };

/**
 * The command a command line runs when it names one outright (only `--debug` before it), VERSION_ONLY for
 * a lone `--version` or `-V` (0.1 s of CPU less: the experiment command alone loads the yaml package),
 * else undefined (no command, `help`, a misspelt one, `--help`): then the program needs every command.
 */
export function commandOf(argv: readonly string[]): CommandEntry | undefined {
  const words = argv.filter((a) => a !== '--debug');
  if (words.length === 1 && (words[0] === '--version' || words[0] === '-V')) return VERSION_ONLY;
  const word = words[0];
  return word === undefined ? undefined : COMMANDS.find((c) => c.names.includes(word));
}

/**
 * The program with every command, or with only `only` (and run before it when it copies run's options):
 * what `main` builds for a command line that names its command, whose help, options and errors read the
 * same either way. The action that
 * commander runs hands its exit code to `exit` (none: the code is dropped, as a test that only looks at
 * the commands wants).
 */
export async function buildProgram(exit: ExitSink = () => {}, only?: CommandEntry): Promise<Command> {
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
  const wanted = only === undefined ? COMMANDS : only.copiesRun ? [RUN, only] : [only];
  const registers = await Promise.all(wanted.map((c) => c.load()));
  for (const register of registers) register(program, exit);
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
  // The stacks it prints then name the TypeScript sources' lines (dbsmack's and a compiled workload module's
  // own source maps); off otherwise, since Node.js then reads the map of every module loaded after.
  if (debug) {
    process.setSourceMapsEnabled(true);
    DbError.stacks = true;
  }
  let code: number = EXIT.ok;
  try {
    const program = await buildProgram((c) => {
      code = c;
    }, commandOf(argv));
    await program.parseAsync(argv, { from: 'user' });
    return code;
  } catch (e) {
    return fail(e, debug);
  }
}
