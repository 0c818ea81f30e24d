/**
 * `dbsmack run WORKLOAD`: the main job. Maps the options in (the workload's words resolved here), hands the
 * run to the run layer, which plans and finishes it (run/run.ts `runWorkload`), shows it while it runs,
 * prints and saves the RunResult, and maps the outcome to an exit code. `registerRun` defines the command
 * and its options; `runInvocation` maps them, for `run` and for the commands that copy run's options
 * (sweep, capacity, experiment). `resolveWorkload` and the helpers after the run (`emitResult`,
 * `exitCodeFor`, `installSignals`) serve prepare, cleanup, sweep and pgbench too.
 */

import { type Command, type CommandUnknownOpts, Option } from '@commander-js/extra-typings';
import { thresholdsHold } from '../analysis/thresholds.ts';
import { redactSecrets } from '../driver/redact.ts';
import { RunController } from '../engine/run-once.ts';
import { EXIT, UsageError } from '../errors.ts';
import type { IntervalPoint, RunResult } from '../metrics/run-result.ts';
import { formatNames, getFormat, type RenderOptions, type RunRenderer } from '../report/formats.ts';
import { createProgress, fitIntervalLine } from '../report/progress.ts';
import { sysbenchHeadLines, sysbenchIntervalLines } from '../report/sysbench.ts';
import { renderIntervalLine } from '../report/text.ts';
import type { PlannedRun, PlannedWorkload, PlanOptions } from '../run/plan.ts';
import type { ProbeOptions } from '../run/probes.ts';
import { type FrontHooks, type RunFront, runWorkload } from '../run/run.ts';
import { normalizeOptionName, parseWorkloadOptions, unknownOptionError } from '../workload/options.ts';
import { loadWorkload, resolveWorkloadArg } from '../workload/registry.ts';
import type { Workload, WorkloadRef } from '../workload/types.ts';
import { dbOption, type ExitSink } from './command.ts';
import { HISTORY_DEFAULT, helpDefault, workloadHelp } from './help.ts';
import { checkHistoryPath, recordRun } from './history-options.ts';
import {
  addMetricsOptions,
  type MetricsCliOptions,
  type MetricsSession,
  openMetrics,
} from './metrics-options.ts';
import { checkOutputFile, OutputError, say, writeResultFile } from './output.ts';
import { nonNegativeInt, positiveInt, seconds, splitWorkloadArgs } from './parse.ts';
import { addProfileOptions } from './profile-options.ts';
import { addSloOptions, type SloCliOptions } from './slo-options.ts';
import { datadirOption, dbTypeOption, smackWorkloadArgs } from './smack-options.ts';
import {
  addSysbenchDbOptions,
  addSysbenchRunOptions,
  ratePlan,
  type SysbenchRunOptions,
  sysbenchDbUrl,
} from './sysbench-options.ts';
import { helpFlag, longOptions, workloadCommandHelp } from './workload-help.ts';

export interface TargetOptions {
  db: string;
  /** Whether --db was given (rather than defaulted): it then overrides a smack file's client settings. */
  dbGiven?: boolean;
  connectTimeout: number;
}

/** `run`'s options: the plan's (run/plan.ts), the probes' (run/probes.ts), stages and thresholds, and its own. */
export interface RunOptions
  extends TargetOptions,
    PlanOptions,
    Omit<ProbeOptions, 'connectTimeout'>,
    SloCliOptions {
  workers?: number;
  format: string;
  out?: string;
  label?: string;
  progress?: boolean;
  quiet?: boolean;
  /** Smack files: only the original Query Barrel Report, without dbsmack's extended table. */
  classic?: boolean;
  /** History database path, false for --no-history, undefined for the default. */
  history?: string | boolean;
  /** `--metrics-listen`, `--metrics-linger` (cli/metrics-options.ts). */
  metricsListen?: MetricsCliOptions['metricsListen'];
  metricsLinger?: MetricsCliOptions['metricsLinger'];
}

export interface ResolvedWorkload extends PlannedWorkload {
  /** `WORKLOAD help` (sysbench's form): print the workload's help instead of running anything. */
  help?: boolean;
}

/** The command a workload is resolved for: its name and own options, for errors and help. */
export interface WorkloadCommand {
  /** `run`, `prepare`, `cleanup`, `sweep`. */
  name: string;
  /** Its long options (`--clients` …): an unknown option may be a typo of one of them. */
  options: readonly string[];
  /** prepare and cleanup: a smack file needs no `$1 $2` (only its `main` reads them). */
  argsOptional?: boolean;
}

const RUN_COMMAND: WorkloadCommand = { name: 'run', options: [] };

/**
 * Load the workload in the main thread too: its option specs drive argument parsing and validation.
 * Words after the workload are its options (unknown ones are refused with the nearest known option of the
 * workload or the command) and its positional arguments; a workload that takes none (everything but a
 * smack file) refuses stray words, except a lone `help`, which asks for the workload's help.
 */
export async function resolveWorkload(
  arg: string,
  rest: readonly string[],
  command: WorkloadCommand = RUN_COMMAND,
): Promise<ResolvedWorkload> {
  const refName = resolveWorkloadArg(arg);
  // The option specs first (a smack file compiles without its $1 $2 … for that), then the words.
  const probe = await loadWorkload({ ref: refName, rawOptions: {}, args: [], argsOptional: true });
  const specs = probe.options ?? {};
  const ctx = { command: command.name, workloadArg: arg, commandOptions: command.options };
  const takesArgs = probe.positionals !== undefined;
  const { options: raw, args } = splitWorkloadArgs(
    rest,
    (n) => {
      const spec = specs[normalizeOptionName(n)];
      return spec === undefined ? 'unknown' : spec.type === 'bool' ? 'bool' : 'value';
    },
    {
      positionals: takesArgs,
      unknown: (n) => {
        throw unknownOptionError(n, probe.name, specs, ctx);
      },
      help: `see dbsmack ${command.name} --help`,
    },
  );
  if (args.length === 1 && args[0] === 'help') {
    return { workload: probe, ref: { ref: refName, rawOptions: raw, args: [] }, options: {}, help: true };
  }
  if (args.length > 0 && !takesArgs) {
    throw new UsageError(
      `${probe.name} takes no arguments, got ${args.map((a) => `'${a}'`).join(' ')}`,
      `its options go as --name value: dbsmack ${command.name} ${arg} --help`,
    );
  }
  const options = parseWorkloadOptions(probe.name, probe.options, raw, ctx);
  const ref: WorkloadRef = {
    ref: refName,
    rawOptions: raw,
    args,
    ...(command.argsOptional ? { argsOptional: true } : {}),
  };
  // A smack file compiles its main with the arguments and options now; built-ins and modules are the same
  // object either way.
  const final = takesArgs || Object.keys(raw).length > 0 ? await loadWorkload(ref) : probe;
  return { workload: final, ref, options };
}

/**
 * Exit code for a finished run: interrupted 130; a threshold that failed 8 (also when `--threshold-abort`
 * stopped the run); stopped by errors 4.
 */
export function exitCodeFor(r: RunResult, interrupted: boolean): number {
  if (interrupted) return EXIT.interrupted;
  const thresholdStop = r.status_reason?.startsWith('stopped by --threshold-abort') === true;
  if (r.status !== 'complete' && !thresholdStop) return EXIT.runFailed;
  if (!thresholdsHold(r.thresholds)) return EXIT.threshold;
  return r.status === 'complete' ? EXIT.ok : EXIT.runFailed;
}

/** Install the two-stage Ctrl-C: the first stops gracefully, the second exits at once. */
export function installSignals(onFirst: () => void): () => void {
  let count = 0;
  const handler = (sig: NodeJS.Signals): void => {
    count++;
    if (count === 1) {
      say(`dbsmack: ${sig}: stopping, keeping what was measured (send it again to quit at once)`);
      onFirst();
    } else {
      say(`dbsmack: ${sig} again: quitting without a result`);
      process.exit(EXIT.interrupted);
    }
  };
  process.on('SIGINT', handler);
  process.on('SIGTERM', handler);
  return () => {
    process.off('SIGINT', handler);
    process.off('SIGTERM', handler);
  };
}

export async function runCommand(
  arg: string,
  rest: readonly string[],
  o: RunOptions,
  command: WorkloadCommand = RUN_COMMAND,
): Promise<number> {
  const render = getFormat(o.format);
  if (render === undefined) {
    throw new UsageError(`unknown format '${o.format}'`, `formats: ${formatNames().join(', ')}`);
  }
  const resolved = await resolveWorkload(arg, rest, command);
  if (resolved.help) {
    process.stdout.write(workloadHelp(command.name, arg, resolved.workload));
    return EXIT.ok;
  }
  // The run plans and finishes itself (run/run.ts); the screen checks what it writes and shows it.
  const controller = new RunController();
  const screen = new RunScreen(o, resolved.workload, controller);
  const result = await runWorkload(o, resolved, screen, 'run');
  if (result === undefined) {
    say('dbsmack: interrupted before the run started; nothing was measured');
    return EXIT.interrupted;
  }
  const written = emitResult(result, o, render, {
    workload: resolved.workload,
    classic: o.classic === true,
    liveIntervals: screen.liveOnStdout,
  });
  const recorded = recordRun(result, o);
  await screen.metrics?.finish(controller.interrupted);
  if (!written || !recorded) return controller.interrupted ? EXIT.interrupted : EXIT.output;
  return exitCodeFor(result, controller.interrupted);
}

/**
 * What `run` writes and shows around its run: the output paths checked once the run is planned, then the
 * live metrics, the progress (or sysbench's interval lines live on stdout) and the two-stage Ctrl-C.
 */
class RunScreen implements RunFront {
  metrics: MetricsSession | undefined;
  /** sysbench's interval lines went live to stdout (and are left out of the final report). */
  liveOnStdout = false;

  constructor(
    private readonly o: RunOptions,
    private readonly workload: Workload,
    private readonly controller: RunController,
  ) {}

  planned(): void {
    const o = this.o;
    // Every file the run will write is checked before it starts: a bad path must not cost the run.
    if (o.out) checkOutputFile(o.out, '--out');
    checkHistoryPath(o.history);
  }

  async open({ target, plan }: PlannedRun): Promise<FrontHooks> {
    const { o, workload, controller } = this;
    // --metrics-listen binds before anything connects: a port in use must not cost the run.
    const metrics = await openMetrics(o, { workload: workload.name, target, label: o.label }, say);
    this.metrics = metrics;
    const tty = process.stderr.isTTY === true;
    const sysbench = o.format === 'sysbench';
    // sysbench prints its --report-interval lines live on stdout. So does dbsmack when stdout is a terminal,
    // and leaves them out of the final report; in a pipe they come in the final report, one whole document.
    const liveOnStdout =
      sysbench && plan.reportIntervalGiven === true && process.stdout.isTTY === true && !(o.quiet && o.out);
    this.liveOnStdout = liveOnStdout;
    const progress = await createProgress({
      totalRuns: 1,
      ...(plan.timeS !== undefined ? { runSeconds: plan.timeS + plan.warmupS } : {}),
      // A terminal gets the redrawn status (with the interval lines kept above it); elsewhere --progress
      // asks for plain lines. With sysbench's lines live on the terminal, they are the progress: a status
      // redrawn on the same screen would tear them apart.
      mode: o.progress || (tty && !o.quiet) ? (tty ? (liveOnStdout ? 'off' : 'status') : 'lines') : 'off',
      keepLines: true,
      title: `dbsmack ${workload.name} on ${target.redactedUrl}`,
    });
    if (liveOnStdout) {
      const head = sysbenchHeadLines({
        workload: workload.name,
        url: target.redactedUrl,
        threads: plan.clients,
        rate: plan.rate?.perSec,
        reportInterval: plan.reportIntervalS,
      });
      process.stdout.write(`${head.join('\n')}\n`);
    }
    const uninstall = installSignals(() => controller.stop());
    progress.runStarted(plan.clients);
    return {
      ...(metrics ? { probes: [metrics.probe], onSnapshot: metrics.onSnapshot } : {}),
      ...(o.label !== undefined ? { label: o.label } : {}),
      onInterval: (p: IntervalPoint) => {
        if (!sysbench) {
          // under --stages the line shows the clients of the interval's stage
          const stageClients = p.stage !== undefined ? plan.stages?.[p.stage - 1]?.clients : undefined;
          if (stageClients !== undefined) progress.interval(p, renderIntervalLine(p, stageClients));
          else progress.interval(p);
          return;
        }
        // sysbench prints whole intervals only, in its own layout
        const line =
          p.dur >= plan.reportIntervalS - 1e-6
            ? sysbenchIntervalLines(p, plan.clients, plan.percentile ?? 95).join('\n')
            : null;
        // cut to the terminal's width by whole fields, as progress lines are (the JSON keeps every figure)
        if (liveOnStdout && line !== null) {
          const cols = process.stdout.columns || 80;
          process.stdout.write(
            `${line
              .split('\n')
              .map((l) => fitIntervalLine(l, cols))
              .join('\n')}\n`,
          );
        }
        progress.interval(p, line);
      },
      log: (m: string) => progress.log(redactSecrets(m)),
      controller,
      closed: async (result) => {
        progress.runFinished(
          result && {
            qps: result.totals.qps,
            p95_ms: result.events.latency_ms.p95,
            errors: result.totals.errors,
          },
        );
        progress.done();
        uninstall();
        if (result === undefined) await metrics?.finish(true);
      },
    };
  }
}

/**
 * Write `--out` (always JSON) and print the result in the chosen format. A file that cannot be written
 * costs nothing else: the result is printed anyway (under `--quiet` too, as it is then the only copy) and
 * the error names the file. Returns whether `--out` was written.
 */
export function emitResult(
  result: RunResult,
  o: { out?: string; quiet?: boolean },
  render: RunRenderer,
  ro: RenderOptions,
): boolean {
  let failed: OutputError | undefined;
  if (o.out) {
    try {
      writeResultFile(o.out, `${JSON.stringify(result, null, 2)}\n`);
    } catch (e) {
      if (!(e instanceof OutputError)) throw e;
      failed = e;
    }
  }
  if (!(o.quiet && o.out) || failed) process.stdout.write(redactSecrets(render(result, ro)));
  if (failed) say(`dbsmack: ${failed.message} (--out); the result is on stdout`);
  return failed === undefined;
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

/** `run`'s action: the workload's help, or the run; its exit code. */
export async function runAction(
  workload: string | undefined,
  o: Record<string, unknown>,
  cmd: CommandUnknownOpts,
): Promise<number> {
  if (await workloadCommandHelp(cmd, workload, (o as { help?: boolean }).help)) return EXIT.ok;
  const { rest, options } = runInvocation(o, cmd);
  return runCommand(workload as string, rest, options, { name: 'run', options: longOptions(cmd) });
}

/**
 * `run` and its own options, in the order its help lists them: the target, the clients and limits, errors
 * and reconnection, workers, output and history, then the super-smack options.
 */
function defineRun(program: Command) {
  return (
    program
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
          new Option(
            '-t, --time <s>',
            'stop after S seconds; 0 means no time limit, as in sysbench',
          ).argParser(seconds('--time')),
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
            'load threads, the first of them the main thread where its clients cannot hold it (more than half the memory holds, at 16 MiB each, are refused)',
          ).argParser(positiveInt('--workers')),
          'one per SQLite client up to 8 per core, the clients beyond sharing them; one per PostgreSQL client up to 4 on the native I/O core (up to 8 where the workload only reads, but not on an AMD CPU); else one per two cores, at least two (on 2 to 5 cores one, with a native I/O thread, for more PostgreSQL clients)',
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
      .allowUnknownOption()
  );
}

/**
 * Define `run` on the program with all its options: the first command, as sweep, capacity and experiment
 * copy its options from the program. Its action hands its exit code to `exit`.
 */
export function registerRun(program: Command, exit: ExitSink): void {
  const run = defineRun(program);
  // --- sysbench options --- (--rate, --rate-shape, --percentile, --db-driver/--mysql-*/--pgsql-*, --format sysbench)
  const runCmd = addSysbenchDbOptions(addSysbenchRunOptions(run));
  runCmd.action(async (workload, _args, o, cmd) => exit(await runAction(workload, o, cmd)));
  // --- end of sysbench options ---

  // --- live metrics --- (--metrics-listen, --metrics-linger)
  addMetricsOptions(runCmd);

  // --- profile options --- (--profile, --profile-rate, --server-pid, --server-nice/-policy/-priority/-cpus)
  addProfileOptions(runCmd);
  // --- load shapes and service levels --- (--stages, --rate-stages, --threshold, --threshold-abort)
  addSloOptions(runCmd);
}
