/**
 * The dbsmack command line. One function per command lives in its own file; this one wires them into
 * commander, and turns every user error into one line on stderr and a documented exit code.
 */
import { Command, CommanderError, type CommandUnknownOpts, Option } from '@commander-js/extra-typings';
import { redactSecrets } from '../driver/redact.ts';
import { DEFAULT_URL } from '../driver/url.ts';
import { EXIT, UserError } from '../errors.ts';
import { VERSION } from '../version.ts';
import { builtinNames } from '../workload/registry.ts';
import { registerCapacity } from './capacity.ts';
import { registerCompare } from './compare.ts';
import { registerExperiment } from './experiment.ts';
import { registerGenData } from './gen-data.ts';
import { HISTORY_DEFAULT, helpConfig, helpDefault } from './help.ts';
import { registerHistory } from './history.ts';
import { addMetricsOptions } from './metrics-options.ts';
import { fsReason, isSystemError } from './output.ts';
import { nonNegativeInt, positiveInt, seconds } from './parse.ts';
import { registerPgbench } from './pgbench.ts';
import { addProfileOptions } from './profile-options.ts';
import { registerReport } from './report.ts';
import { adminCommand, type RunOptions, runCommand } from './run.ts';
import { addSloOptions, type SloCliOptions } from './slo-options.ts';
import { datadirOption, dbTypeOption, smackWorkloadArgs } from './smack-options.ts';
import { registerSweep } from './sweep.ts';
import {
  addSysbenchDbOptions,
  addSysbenchRunOptions,
  ratePlan,
  type SysbenchDbOptions,
  type SysbenchRunOptions,
  sysbenchDbUrl,
} from './sysbench-options.ts';
import { helpFlag, longOptions, workloadCommandHelp } from './workload-help.ts';

let debug = process.argv.includes('--debug');
let exitCode: number = EXIT.ok;

function dbOption(): Option<'--db <url>', undefined, string> {
  return new Option(
    '--db <url>',
    'database URL: sqlite:PATH, mysql://…, mariadb://…, postgres://…; ?connector=dbsmack|mysql2|mariadb|pg picks the client of the load connections (dbsmack when not given); ?io=native|js its socket I/O (the native core when built); ?batch=off runs one-statement events one by one on the native core (DBSMACK_BATCH=off)',
  )
    .default(DEFAULT_URL)
    .env('DBSMACK_DB');
}

/**
 * What `run WORKLOAD …` means: commander's options into RunOptions, and the workload's arguments. `sweep`
 * copies run's options and calls this too, so every option mapped here works the same in a sweep: map a
 * new option of `run` here, not in its action.
 */
export function runInvocation(
  o: Record<string, unknown>,
  cmd: CommandUnknownOpts,
): { rest: string[]; options: RunOptions } {
  const workload = cmd.args[0] ?? '';
  const so = o as unknown as SysbenchRunOptions;
  // sysbench-style --db-driver/--mysql-*/--pgsql-* options make the URL when --db is not given
  const sbUrl = cmd.getOptionValueSource('db') === 'default' ? sysbenchDbUrl(so) : undefined;
  const reportInterval = o.reportInterval as number;
  return {
    // smack files take -d/-D/--allow-shell as options of their own
    rest: [
      ...cmd.args.slice(1),
      ...smackWorkloadArgs(workload, o as Parameters<typeof smackWorkloadArgs>[1]),
    ],
    options: {
      ...(o as unknown as RunOptions),
      ...(sbUrl !== undefined ? { db: sbUrl } : {}),
      dbGiven: cmd.getOptionValueSource('db') !== 'default' || sbUrl !== undefined,
      clients: (o.clients ?? o.threads) as number | undefined,
      warmup: (o.warmupTime ?? o.warmup) as number,
      seed: o.randSeed as number | undefined,
      rate: ratePlan(so, (o as SloCliOptions).rateStages),
      ...(so.percentile !== undefined ? { percentile: so.percentile } : {}),
      reportInterval: reportInterval || 1,
      reportIntervalGiven: cmd.getOptionValueSource('reportInterval') === 'cli' && reportInterval > 0,
    },
  };
}

export function buildProgram(): Command {
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

  const run = program
    .command('run')
    .description(
      'run a workload: a built-in name (see `dbsmack list`), a .smack file, a .sql pgbench script, or a .ts/.js workload module',
    )
    .usage('[options] <workload> [args...]')
    .helpOption(false)
    .argument('[workload]', 'built-in workload name or workload file')
    .argument('[args...]', 'workload options (--name value), positional arguments, or help')
    .addOption(dbOption())
    .addOption(
      helpDefault(
        new Option('-c, --clients <n>', 'concurrent clients, each with its own connection').argParser(
          positiveInt('--clients'),
        ),
        "1, or a smack file's create_threads",
      ),
    )
    .option('--threads <n>', 'alias of --clients (sysbench)', positiveInt('--threads'))
    .addOption(
      helpDefault(
        new Option('--rounds <r>', 'stop after R events per client').argParser(positiveInt('--rounds')),
        "a smack file's set_num_rounds, else no limit",
      ),
    )
    .addOption(
      helpDefault(
        new Option(
          '--events <e>',
          'stop after E events in total; 0 means no limit, as in sysbench',
        ).argParser(nonNegativeInt('--events')),
        'no limit',
      ),
    )
    .addOption(
      helpDefault(
        new Option('-t, --time <s>', 'stop after S seconds; 0 means no time limit, as in sysbench').argParser(
          seconds('--time'),
        ),
        '10 when no other limit is given',
      ),
    )
    .option('--warmup <s>', 'run S seconds before measuring; not counted', seconds('--warmup'), 0)
    .option('--warmup-time <s>', 'alias of --warmup (sysbench)', seconds('--warmup-time'))
    .option(
      '--report-interval <s>',
      'seconds per timeline interval; when given, --format sysbench prints its interval lines (0: intervals of 1 s, no lines)',
      seconds('--report-interval'),
      1,
    )
    .option(
      '--max-tries <n>',
      'tries per event on deadlock or serialization failure',
      positiveInt('--max-tries'),
      10,
    )
    .option('--ignore-errors <codes>', "count these errors and go on: 'all' or codes like 1062,23505")
    .option(
      '--connect-timeout <s>',
      'give up connecting after S seconds',
      seconds('--connect-timeout', false),
      10,
    )
    .option(
      '--reconnect-timeout <s>',
      'keep trying to re-establish a lost connection for S seconds',
      seconds('--reconnect-timeout'),
      30,
    )
    .addOption(
      helpDefault(
        new Option(
          '--workers <n>',
          'load worker threads (more than half the memory holds, at 16 MiB each, are refused)',
        ).argParser(positiveInt('--workers')),
        'one per SQLite client up to 8 per core, the clients beyond sharing them; else one per two cores',
      ),
    )
    .option(
      '--format <fmt>',
      'what to print on stdout: text, json, sysbench (its final report and --report-interval lines) or pgbench (its final report)',
      'text',
    )
    .option('-o, --out <file>', 'also write the RunResult JSON to FILE')
    .option('--label <name>', 'label stored with the result')
    .addOption(
      helpDefault(
        new Option('--rand-seed <n>', 'seed of the per-client random generators').argParser(
          nonNegativeInt('--rand-seed'),
        ),
        'drawn from the clock',
      ),
    )
    .option('--progress', 'print a line per interval on stderr even when it is not a terminal')
    .option('-q, --quiet', 'no progress lines; with --out, nothing on stdout')
    // history (sweep feature): every run is recorded unless --no-history
    .addOption(
      helpDefault(new Option('--history <path>', 'history database to record into'), HISTORY_DEFAULT),
    )
    .option('--no-history', 'do not record this run in the history')
    .option('--debug', 'print stack traces of errors')
    .addOption(helpFlag())
    // --- super-smack options ---
    .addOption(dbTypeOption())
    .addOption(datadirOption())
    .option('--allow-shell', 'smack files: let gen_data_file run shell commands other than gen-data')
    .option('--classic', 'smack files: print only the original Query Barrel Report')
    // --- end of super-smack options ---
    .allowUnknownOption();
  // --- sysbench options --- (--rate, --rate-shape, --percentile, --db-driver/--mysql-*/--pgsql-*, --format sysbench)
  const runCmd = addSysbenchDbOptions(addSysbenchRunOptions(run));
  runCmd.action(async (workload, args, o, cmd) => {
    void args;
    if (await workloadCommandHelp(cmd, workload, (o as { help?: boolean }).help)) return;
    const { rest, options } = runInvocation(o, cmd);
    exitCode = await runCommand(workload as string, rest, options, {
      name: 'run',
      options: longOptions(cmd),
    });
  });
  // --- end of sysbench options ---

  // --- live metrics --- (--metrics-listen, --metrics-linger)
  addMetricsOptions(runCmd);

  // --- profile options --- (--profile, --profile-rate, --server-pid, --server-nice/-policy/-priority/-cpus)
  addProfileOptions(runCmd);
  // --- load shapes and service levels --- (--stages, --rate-stages, --threshold, --threshold-abort)
  addSloOptions(runCmd);

  for (const what of ['prepare', 'cleanup'] as const) {
    const admin = program
      .command(what)
      .description(what === 'prepare' ? "create and load a workload's tables" : "drop a workload's tables")
      .usage('[options] <workload> [args...]')
      .helpOption(false)
      .argument('[workload]', 'built-in workload name or workload file')
      .argument('[args...]', 'workload options (--name value), or help')
      .addOption(dbOption())
      .addOption(
        helpDefault(
          new Option('--threads <n>', 'parallel connections for loading').argParser(positiveInt('--threads')),
          '1',
        ),
      )
      .option(
        '--connect-timeout <s>',
        'give up connecting after S seconds',
        seconds('--connect-timeout', false),
        10,
      )
      .option('--debug', 'print stack traces of errors')
      .addOption(helpFlag())
      .addOption(dbTypeOption())
      .addOption(datadirOption())
      .option('--allow-shell', 'smack files: let gen_data_file run shell commands other than gen-data')
      .allowUnknownOption();
    // --- sysbench options --- (--db-driver/--mysql-*/--pgsql-*)
    addSysbenchDbOptions(admin).action(async (workload, _args, o, cmd) => {
      if (await workloadCommandHelp(cmd, workload, (o as { help?: boolean }).help)) return;
      const sbUrl =
        cmd.getOptionValueSource('db') === 'default' ? sysbenchDbUrl(o as SysbenchDbOptions) : undefined;
      exitCode = await adminCommand(
        what,
        workload as string,
        [...cmd.args.slice(1), ...smackWorkloadArgs(workload as string, o)],
        {
          ...o,
          ...(sbUrl !== undefined ? { db: sbUrl } : {}),
          dbGiven: cmd.getOptionValueSource('db') !== 'default' || sbUrl !== undefined,
        },
        { name: what, options: longOptions(cmd), argsOptional: true },
      );
    });
  }

  registerGenData(program);
  // sweeps, history and comparisons; sweep copies run's options, so it comes after run and its option blocks
  const setExit = (code: number): void => {
    exitCode = code;
  };
  registerSweep(program, setExit, runInvocation);
  registerExperiment(program, setExit, runInvocation); // experiment plans (issue 15)
  registerCapacity(program, setExit, runInvocation); // the highest rate that holds an SLO (issue 19)
  registerHistory(program, setExit);
  registerCompare(program, setExit);
  registerReport(program); // report: HTML/Markdown/SVG/PNG reports (issue 8)
  registerPgbench(program, setExit); // pgbench's command line (issue 16)

  program
    .command('list')
    .description('list the built-in workloads')
    .action(() => {
      for (const w of builtinNames()) process.stdout.write(`${w.name.padEnd(24)} ${w.description}\n`);
    });

  return program;
}

function fail(e: unknown): number {
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

export async function main(argv: string[]): Promise<number> {
  debug = argv.includes('--debug');
  try {
    await buildProgram().parseAsync(argv, { from: 'user' });
    return exitCode;
  } catch (e) {
    return fail(e);
  }
}
