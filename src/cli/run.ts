/**
 * `dbsmack run WORKLOAD`: the main job. Resolves the target and the workload, runs the engine, prints and
 * saves the RunResult, and maps the outcome to an exit code. Also `prepare` and `cleanup`.
 */

import { annotateRateStalls } from '../analysis/rate-stalls.ts';
import { evaluateThresholds, ThresholdWatch, thresholdsHold } from '../analysis/thresholds.ts';
import { DbError } from '../driver/errors.ts';
import { redactSecrets } from '../driver/redact.ts';
import type { Target } from '../driver/types.ts';
import { parseTarget } from '../driver/url.ts';
import { AdminConnectError, withAdminContext } from '../engine/admin.ts';
import { capacityProblem, defaultWorkers, StartError } from '../engine/engine.ts';
import type { RunPlan } from '../engine/protocol.ts';
import { RunController, type RunInput, runOnce } from '../engine/run-once.ts';
import { maxStageClients, stagesLength } from '../engine/stages.ts';
import type { RatePlan } from '../metrics/outcome.ts';
import type { IntervalPoint, RunResult } from '../metrics/run-result.ts';
import { formatNames, getFormat, type RenderOptions, type RunRenderer } from '../report/formats.ts';
import { createProgress, fitIntervalLine } from '../report/progress.ts';
import { sysbenchHeadLines, sysbenchIntervalLines } from '../report/sysbench.ts';
import { renderIntervalLine } from '../report/text.ts';
import { normalizeOptionName, parseWorkloadOptions, unknownOptionError } from '../workload/options.ts';
import { loadWorkload, resolveWorkloadArg } from '../workload/registry.ts';
import type { Workload, WorkloadRef } from '../workload/types.ts';
import { ConnectError, EXIT, InputError, UsageError, UserError } from './errors.ts';
import { workloadHelp } from './help.ts';
import { attachServerInfo, checkHistoryPath, recordRun } from './history-options.ts';
import { type MetricsCliOptions, openMetrics } from './metrics-options.ts';
import { checkOutputFile, OutputError, say, writeResultFile } from './output.ts';
import { splitWorkloadArgs } from './parse.ts';
import { type ProfileCliOptions, profileProbesFrom } from './profile-options.ts';
import { checkThresholdStages, checkThresholdTypes, type SloCliOptions } from './slo-options.ts';
import { checkStageIntervals } from './stages-parse.ts';

export interface TargetOptions {
  db: string;
  /** Whether --db was given (rather than defaulted): it then overrides a smack file's client settings. */
  dbGiven?: boolean;
  connectTimeout: number;
}

export interface RunOptions extends TargetOptions, Omit<ProfileCliOptions, 'connectTimeout'>, SloCliOptions {
  clients?: number;
  rounds?: number;
  events?: number;
  time?: number;
  warmup: number;
  reportInterval: number;
  maxTries: number;
  ignoreErrors?: string;
  reconnectTimeout: number;
  workers?: number;
  format: string;
  out?: string;
  label?: string;
  seed?: number;
  progress?: boolean;
  quiet?: boolean;
  /** Smack files: only the original Query Barrel Report, without dbsmack's extended table. */
  classic?: boolean;
  /** Open loop (`--rate`). */
  rate?: RatePlan | undefined;
  percentile?: number;
  reportIntervalGiven?: boolean;
  /** History database path, false for --no-history, undefined for the default. */
  history?: string | boolean;
  /** `--metrics-listen`, `--metrics-linger` (cli/metrics-options.ts). */
  metricsListen?: MetricsCliOptions['metricsListen'];
  metricsLinger?: MetricsCliOptions['metricsLinger'];
}

export interface ResolvedWorkload {
  workload: Workload;
  ref: WorkloadRef;
  options: Record<string, unknown>;
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
 * Server codes of a refused login, on every connector: MySQL/MariaDB 1045 (wrong password), 1698 (MariaDB:
 * no password given, or a unix_socket account reached over another user), 1044 (no access to that
 * database), 1251/2059 (authentication method not supported); PostgreSQL 28P01 (wrong password) and 28000
 * (no such role, or refused by pg_hba.conf).
 */
export const AUTH_FAILURE_CODES: ReadonlySet<string> = new Set([
  '1045',
  '1698',
  '1044',
  '1251',
  '2059',
  '28P01',
  '28000',
]);
/** An unknown database: MySQL 1049, PostgreSQL 3D000. */
const UNKNOWN_DATABASE_CODES: ReadonlySet<string> = new Set(['1049', '3D000']);

export function connectHint(code: string): string | undefined {
  if (code === 'ECONNREFUSED') return 'is the server running and listening on that host and port?';
  if (code === 'ENOENT') return 'no such socket: is the server running, and is the socket path right?';
  if (code === 'ENOTFOUND' || code === 'EAI_AGAIN') return 'the host name does not resolve';
  if (code === 'ETIMEDOUT') return 'the server did not answer in time (--connect-timeout)';
  if (AUTH_FAILURE_CODES.has(code)) return 'check the user name and password';
  if (UNKNOWN_DATABASE_CODES.has(code)) return 'the database does not exist: create it first';
  if (code === '1040' || code === '53300')
    return "the server has no connection left: lower --clients or raise the server's max_connections";
  if (code === 'SQLITE_CANTOPEN') return 'check that the directory exists and is writable';
  return undefined;
}

/** Turn a failure to start into the user error it is. */
export function startErrorToUserError(e: StartError, target: Target): UserError {
  const err = e.error;
  if (err.code === 'UsageError') return new UsageError(err.message);
  if (err.code === 'InputError') return new InputError(err.message);
  if (e.phase === 'connect') {
    return new ConnectError(
      `cannot connect to ${target.redactedUrl}: ${err.message}`,
      err.code,
      connectHint(err.code),
    );
  }
  if (e.phase === 'load')
    return new UserError(`cannot load the workload: ${err.message}`, undefined, EXIT.input);
  return new UserError(
    `client ${e.clientId ?? '?'} failed to set up on ${target.redactedUrl}: ${err.code}: ${err.message}`,
    undefined,
    EXIT.runFailed,
  );
}

/** Is this error a failure to connect (exit 3), whatever phase it came from? */
function isConnectFailure(e: DbError): boolean {
  return (
    e.kind === 'reconnect' ||
    AUTH_FAILURE_CODES.has(e.code) ||
    UNKNOWN_DATABASE_CODES.has(e.code) ||
    e.code === 'SQLITE_CANTOPEN'
  );
}

/** "Table exists": MySQL 1050, PostgreSQL 42P07 (duplicate table), SQLite's message. */
function isTableExists(e: DbError): boolean {
  return (
    e.code === '1050' ||
    e.code === '42P07' ||
    (e.code.startsWith('SQLITE') && /already exists/i.test(e.message))
  );
}

/** What an admin failure is reported with: the command's action, and for `prepare` the cleanup to run. */
export interface AdminErrorContext {
  /** The command whose work failed: `prepare`, `cleanup`, `run`, `sweep`. */
  action: string;
  /** The `dbsmack cleanup …` command line for the same workload and target, for "tables exist". */
  cleanup?: string;
}

/**
 * Turn an error of prepare, cleanup or a run's set-up (its `check`, a smack file's tables) into the user
 * error it is: a connection that could not be opened is "cannot connect" (exit 3, with the hint);
 * `prepare` over tables that exist names `cleanup` (exit 2); anything else names the command (exit 4).
 */
export function adminError(e: unknown, target: Target, ctx: AdminErrorContext): never {
  if (e instanceof UserError) throw e;
  const connectFailed = e instanceof AdminConnectError;
  const err = e instanceof AdminConnectError ? e.error : e;
  if (err instanceof DbError) {
    if (connectFailed || isConnectFailure(err)) {
      throw new ConnectError(
        `cannot connect to ${target.redactedUrl}: ${err.message}`,
        err.code,
        connectHint(err.code),
      );
    }
    if (ctx.cleanup !== undefined && isTableExists(err)) {
      throw new UsageError(
        `${ctx.action}: the tables exist already in ${target.redactedUrl} (${err.code}: ${err.message})`,
        `drop them first with \`${ctx.cleanup}\`, or run the workload on them as they are`,
      );
    }
    throw new UserError(
      `${ctx.action} failed on ${target.redactedUrl}: ${err.code}: ${err.message}`,
      undefined,
      EXIT.runFailed,
    );
  }
  throw e;
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

/** Build the engine's plan from the command-line options and the workload's defaults. */
export function planFrom(o: RunOptions, target: Target, resolved: ResolvedWorkload): RunPlan {
  const { workload, ref } = resolved;
  let clients = o.clients ?? workload.defaults?.clients ?? 1;
  let { rounds, events, time } = o;
  const stages = o.stages ?? o.rateStages;
  if (o.stages !== undefined && o.rateStages !== undefined) {
    throw new UsageError(
      '--stages and --rate-stages do not go together',
      'clients per stage, or a rate per stage',
    );
  }
  if (o.stages !== undefined && o.rate !== undefined) {
    throw new UsageError(
      '--stages is for the closed loop: it does not go with --rate',
      'give --rate-stages for open-loop stages',
    );
  }
  if (stages !== undefined) {
    const option = o.stages !== undefined ? '--stages' : '--rate-stages';
    if (time !== undefined && time !== 0) {
      throw new UsageError(`${option} gives the run its length: leave --time out`);
    }
    checkStageIntervals(option, stages, o.reportInterval);
    time = stagesLength(stages);
    if (o.stages !== undefined) clients = maxStageClients(o.stages);
  }
  if (
    rounds === undefined &&
    workload.defaults?.rounds !== undefined &&
    events === undefined &&
    time === undefined
  ) {
    rounds = workload.defaults.rounds;
  }
  // sysbench's 0 means "no limit" for both
  if (events === 0) events = undefined;
  if (time === 0) time = undefined;
  else if (rounds === undefined && events === undefined && time === undefined) time = 10;
  return {
    workload: ref,
    target,
    targetOverridden: o.dbGiven === true,
    clients,
    rounds,
    events,
    timeS: time,
    warmupS: o.warmup,
    reportIntervalS: o.reportInterval,
    maxTries: o.maxTries,
    ignoreErrors: (o.ignoreErrors ?? '')
      .split(',')
      .map((s) => s.trim())
      .filter(Boolean),
    connectTimeoutMs: o.connectTimeout * 1000,
    reconnectTimeoutMs: o.reconnectTimeout * 1000,
    seed: o.seed ?? Date.now() & 0x7fffffff,
    ...(o.rate !== undefined ? { rate: o.rate } : {}),
    ...(o.percentile !== undefined ? { percentile: o.percentile } : {}),
    ...(o.reportIntervalGiven ? { reportIntervalGiven: true } : {}),
    ...(stages !== undefined ? { stages } : {}),
  };
}

/**
 * The load workers of a run (`--workers`, else the bounded default), refused before the run when the
 * machine cannot hold them or the clients (memory, open files): never a crash minutes into it.
 */
export function workersFor(given: number | undefined, driver: Target['driver'], clients: number): number {
  const workers = given ?? defaultWorkers(driver, clients);
  const problem = capacityProblem(driver, clients, workers);
  if (problem !== undefined) {
    throw new UsageError(
      `cannot run ${clients} client${clients === 1 ? '' : 's'}: ${problem.reason}`,
      problem.hint,
    );
  }
  return workers;
}

/**
 * Run once with the command's error mapping: start failures become user errors with exit codes, named
 * after `action` (the command: `run`, `sweep`).
 */
export async function runWithErrors(input: RunInput, action: string): Promise<RunResult | undefined> {
  const target = input.plan.target;
  try {
    const r = await runOnce(input);
    // a stall under --rate is measured and reported, not a reason to stop
    annotateRateStalls(r);
    return r;
  } catch (e) {
    if (e instanceof StartError) {
      if (e.error.code === 'INTERRUPTED') return undefined;
      throw startErrorToUserError(e, target);
    }
    return adminError(e, target, { action });
  }
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
  // A smack file's client blocks give the target unless --db is given.
  const target =
    !o.dbGiven && resolved.workload.defaultTarget ? resolved.workload.defaultTarget() : parseTarget(o.db);
  const plan = planFrom(o, target, resolved);
  const thresholds = o.threshold ?? [];
  checkThresholdStages(thresholds, plan);
  const watch = o.thresholdAbort && thresholds.length > 0 ? new ThresholdWatch(thresholds) : undefined;
  // Every file the run will write is checked before it starts: a bad path must not cost the run.
  const workers = workersFor(o.workers, target.driver, plan.clients);
  if (o.out) checkOutputFile(o.out, '--out');
  checkHistoryPath(o.history);
  const probes = profileProbesFrom(o);
  // --metrics-listen binds before anything connects: a port in use must not cost the run.
  const metrics = await openMetrics(o, { workload: resolved.workload.name, target, label: o.label }, say);
  const tty = process.stderr.isTTY === true;
  const sysbench = o.format === 'sysbench';
  // sysbench prints its --report-interval lines live on stdout. So does dbsmack when stdout is a terminal,
  // and leaves them out of the final report; in a pipe they come in the final report, one whole document.
  const liveOnStdout =
    sysbench && plan.reportIntervalGiven === true && process.stdout.isTTY === true && !(o.quiet && o.out);
  const progress = await createProgress({
    totalRuns: 1,
    ...(plan.timeS !== undefined ? { runSeconds: plan.timeS + plan.warmupS } : {}),
    // A terminal gets the redrawn status (with the interval lines kept above it); elsewhere --progress
    // asks for plain lines. With sysbench's lines live on the terminal, they are the progress: a status
    // redrawn on the same screen would tear them apart.
    mode: o.progress || (tty && !o.quiet) ? (tty ? (liveOnStdout ? 'off' : 'status') : 'lines') : 'off',
    keepLines: true,
    title: `dbsmack ${resolved.workload.name} on ${target.redactedUrl}`,
  });
  if (liveOnStdout) {
    const head = sysbenchHeadLines({
      workload: resolved.workload.name,
      url: target.redactedUrl,
      threads: plan.clients,
      rate: plan.rate?.perSec,
      reportInterval: plan.reportIntervalS,
    });
    process.stdout.write(`${head.join('\n')}\n`);
  }
  const controller = new RunController();
  const uninstall = installSignals(() => controller.stop());
  let result: RunResult | undefined;
  progress.runStarted(plan.clients);
  try {
    result = await runWithErrors(
      {
        plan,
        workload: resolved.workload,
        options: resolved.options,
        workers,
        probes: metrics ? [metrics.probe, ...probes] : probes,
        ...(metrics ? { onSnapshot: metrics.onSnapshot } : {}),
        ...(o.label !== undefined ? { label: o.label } : {}),
        ...(thresholds.length > 0
          ? { beforeStart: ({ types }: { types: string[] }) => checkThresholdTypes(thresholds, types) }
          : {}),
        ...(watch !== undefined ? { check: watch.check.bind(watch) } : {}),
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
      },
      'run',
    );
  } finally {
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
  }
  if (result === undefined) {
    say('dbsmack: interrupted before the run started; nothing was measured');
    return EXIT.interrupted;
  }
  if (thresholds.length > 0) result.thresholds = evaluateThresholds(result, thresholds, watch?.aborted);
  await attachServerInfo(result, target, o.connectTimeout);
  const written = emitResult(result, o, render, {
    workload: resolved.workload,
    classic: o.classic === true,
    liveIntervals: liveOnStdout,
  });
  const recorded = recordRun(result, o);
  await metrics?.finish(controller.interrupted);
  if (!written || !recorded) return controller.interrupted ? EXIT.interrupted : EXIT.output;
  return exitCodeFor(result, controller.interrupted);
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
 * The command line of `command` for this workload with the options it was given (the URL redacted), for
 * hints such as "drop them first with `dbsmack cleanup …`".
 */
export function commandLine(
  command: string,
  arg: string,
  ref: WorkloadRef,
  target: Target | undefined,
): string {
  const words = ['dbsmack', command, arg];
  if (target !== undefined) words.push('--db', target.redactedUrl);
  for (const [name, v] of Object.entries(ref.rawOptions)) {
    words.push(`--${name.replace(/_/g, '-')}`);
    if (v !== true) words.push(String(v));
  }
  return words.join(' ');
}

export interface AdminOptions extends TargetOptions {
  threads?: number;
}

/** `dbsmack prepare|cleanup WORKLOAD`. */
export async function adminCommand(
  what: 'prepare' | 'cleanup',
  arg: string,
  rest: readonly string[],
  o: AdminOptions,
  command: WorkloadCommand = { name: what, options: [], argsOptional: true },
): Promise<number> {
  const { workload, options, ref, help } = await resolveWorkload(arg, rest, command);
  if (help) {
    process.stdout.write(workloadHelp(what, arg, workload));
    return EXIT.ok;
  }
  const target = !o.dbGiven && workload.defaultTarget ? workload.defaultTarget() : parseTarget(o.db);
  const fn = workload[what];
  if (fn === undefined) {
    say(`dbsmack: ${workload.name} has nothing to ${what}`);
    return EXIT.ok;
  }
  const t0 = Date.now();
  await withAdminContext(
    target,
    options,
    o.threads ?? 1,
    o.connectTimeout * 1000,
    say,
    fn.bind(workload),
    o.dbGiven === true,
  ).catch((e: unknown) =>
    adminError(e, target, {
      action: what,
      ...(what === 'prepare'
        ? { cleanup: commandLine('cleanup', arg, ref, o.dbGiven ? target : undefined) }
        : {}),
    }),
  );
  say(
    `dbsmack: ${what} ${workload.name} on ${target.redactedUrl}: done in ${((Date.now() - t0) / 1000).toFixed(2)} s`,
  );
  return EXIT.ok;
}
