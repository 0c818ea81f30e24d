/**
 * `dbsmack sweep WORKLOAD --clients 1,2,4 --repeat N`: runs every client count N times, one run after the
 * other through the same `runPlanned` as `run`, and saves each run the moment it finishes (history and
 * `--out`), so an interrupted sweep keeps everything it measured. Every option of `run` is accepted too
 * (copied from the run command), so options added to `run` later work in sweeps without changes here.
 */
import { createHash } from 'node:crypto';
import { existsSync } from 'node:fs';
import { type Command, type CommandUnknownOpts, Option } from '@commander-js/extra-typings';
import { buildSweep, summarizeRun } from '../analysis/sweep-build.ts';
import { SWEEP_SCHEMA, type SweepResult, type SweepRun } from '../analysis/types.ts';
import { byName } from '../collate.ts';
import { redactSecrets } from '../driver/redact.ts';
import type { Target } from '../driver/types.ts';
import { RunController, type RunProbe } from '../engine/run-once.ts';
import { EXIT, InputError, UsageError } from '../errors.ts';
import type { IntervalPoint } from '../metrics/run-result.ts';
import { profileSummaryLine, renderSweepProfiles } from '../report/profile.ts';
import { createProgress, type Progress } from '../report/progress.ts';
import { renderSweepText } from '../report/sweep-text.ts';
import { planFrom, targetFor, workersFor } from '../run/plan.ts';
import { profileProbesFrom } from '../run/probes.ts';
import { runPlanned } from '../run/run.ts';
import { readJsonFile } from '../store/documents.ts';
import type { History } from '../store/history.ts';
import type { ExitSink } from './command.ts';
import { helpDefault, workloadHelp } from './help.ts';
import {
  addHistoryOptions,
  checkHistoryPath,
  historyWriteWarning,
  openHistoryForWrite,
} from './history-options.ts';
import { type MetricsSession, openMetrics } from './metrics-options.ts';
import { checkOutputFile, say, writeResultFile } from './output.ts';
import { positiveInt, seconds } from './parse.ts';
import {
  installSignals,
  type ResolvedWorkload,
  type RunOptions,
  resolveWorkload,
  type WorkloadCommand,
} from './run.ts';
import { helpFlag, longOptions, workloadCommandHelp } from './workload-help.ts';

/** Options of `run` that sweep defines its own way. */
const OWN = new Set([
  '--clients',
  '--threads',
  '--format',
  '--out',
  '--label',
  '--history',
  '--no-history',
  '--help',
  '--resume',
]);

/** Options that do not shape a sweep's runs: a resumed sweep may change them. */
const NOT_RUN_SHAPING = new Set([
  'clients',
  'threads',
  'format',
  'out',
  'label',
  'history',
  'quiet',
  'progress',
  'debug',
  'help',
  'reportIntervalGiven',
  'resume',
  'repeat',
  'interleave',
  'pause',
]);

/**
 * What shapes a sweep's runs, as key → value (the target redacted): the workload, its words, and every
 * option of run but those of NOT_RUN_SHAPING. `fingerprint` hashes it with the target's full URL.
 */
export function sweepSettings(
  arg: string,
  rest: readonly string[],
  run: RunOptions,
  target: Target,
): { fingerprint: string; settings: Record<string, string> } {
  const settings: Record<string, string> = { workload: arg, 'workload words': rest.join(' ') };
  for (const [k, v] of Object.entries(run).sort(([a], [b]) => byName(a, b))) {
    if (NOT_RUN_SHAPING.has(k) || v === undefined || k === 'db') continue;
    settings[k] = typeof v === 'object' ? JSON.stringify(v) : String(v);
  }
  settings.target = target.redactedUrl;
  const fingerprint = createHash('sha256')
    .update(JSON.stringify({ ...settings, target: run.db }))
    .digest('hex')
    .slice(0, 16);
  return { fingerprint, settings };
}

/** The runs of a partial sweep document to keep on `--resume FILE`, or why it cannot be continued. */
function resumeFrom(
  file: string,
  now: { fingerprint: string; settings: Record<string, string> },
): { doc: SweepResult; runs: { clients: number; run: SweepRun }[] } {
  if (!existsSync(file))
    throw new UsageError(`--resume: no sweep document ${file}`, 'give the --out FILE of the sweep');
  const doc = readJsonFile(file) as SweepResult;
  if (doc?.schema !== SWEEP_SCHEMA || !Array.isArray(doc.points))
    throw new InputError(`--resume: ${file} is not a sweep document (${SWEEP_SCHEMA})`);
  if (!doc.resume)
    throw new UsageError(
      `--resume: ${file} does not say how its runs were made (written by an older dbsmack)`,
      'start the sweep anew',
    );
  if (doc.resume.fingerprint !== now.fingerprint) {
    const was = doc.resume.settings;
    const keys = [...new Set([...Object.keys(was), ...Object.keys(now.settings)])].sort();
    const changed = keys
      .filter((k) => was[k] !== now.settings[k])
      .map((k) => `${k}: ${was[k] ?? '(unset)'} → ${now.settings[k] ?? '(unset)'}`);
    throw new UsageError(
      `--resume: cannot continue ${file}: ${changed.length > 0 ? changed.join('; ') : 'the target changed'}; the new runs would be mixed with runs made otherwise`,
      'give the same workload and options as the sweep had (client counts and repeats may change), or start a new sweep',
    );
  }
  const runs = doc.points.flatMap((p) =>
    p.runs.filter((r) => r.status === 'complete' && r.result).map((r) => ({ clients: p.clients, run: r })),
  );
  return { doc, runs };
}

/**
 * Runs per client count when `--repeat` is not given: 5, so that the default comparison of two sweeps can
 * reach a verdict with the exact Mann–Whitney test (analysis/compare.ts). Two-sided, 5 against 5 gives
 * p = 2/252 = 0.008 when the runs do not overlap and stays below 0.05 with up to two pairs out of order
 * (4/252, 8/252); 4 against 4 only when they do not overlap at all (0.029; one pair out of order: 0.057);
 * 3 against 3 never (0.10 at best, where compare falls back on Welch's t-test on logarithms and warns).
 */
export const DEFAULT_REPEAT = 5;

/** Parse `1,2,4,8`: positive integers, duplicates dropped, order kept. */
export function parseClientList(v: string): number[] {
  const parts = v.split(',').map((s) => s.trim());
  const out: number[] = [];
  for (const p of parts) {
    if (!/^\d+$/.test(p) || Number(p) < 1)
      throw new UsageError(`--clients expects a list like 1,2,4,8, got '${v}'`);
    if (!out.includes(Number(p))) out.push(Number(p));
  }
  return out;
}

interface SweepOptions {
  clients: number[];
  repeat: number;
  interleave: boolean;
  label?: string;
  out?: string;
  /** `--resume FILE`: the partial sweep document to continue. */
  resume?: string;
  format: string;
  history?: string | boolean;
  pause: number;
  quiet?: boolean;
  progress?: boolean;
}

/** The order of the runs: client counts in turn for each repeat (`--interleave`), or all repeats of one count together. */
export function schedule(
  clients: number[],
  repeat: number,
  interleave: boolean,
): { clients: number; repeat: number }[] {
  const out: { clients: number; repeat: number }[] = [];
  if (interleave)
    for (let r = 1; r <= repeat; r++) for (const c of clients) out.push({ clients: c, repeat: r });
  else for (const c of clients) for (let r = 1; r <= repeat; r++) out.push({ clients: c, repeat: r });
  return out;
}

const isSmack = (arg: string): boolean => arg.toLowerCase().endsWith('.smack');

/** What a sweep refuses before it resolves anything more than its first workload. */
function checkSweepOptions(run: RunOptions, o: SweepOptions): void {
  if (o.clients.length === 0)
    throw new UsageError('sweep needs --clients LIST, e.g. --clients 1,2,4,8', 'dbsmack sweep --help');
  if (run.stages !== undefined) {
    throw new UsageError(
      '--stages does not go with sweep: a sweep runs its own client counts',
      'use run --stages',
    );
  }
  if (run.threshold !== undefined) {
    throw new UsageError('--threshold is not judged in a sweep', 'use run --threshold, or capacity --slo');
  }
}

/**
 * The workload of each client count: a smack file takes its client count as $1, so it is compiled once per
 * client count (and kept); any other workload is `first` for every count.
 */
export function workloadsByClients(
  first: ResolvedWorkload,
  resolve: (c: number) => Promise<ResolvedWorkload>,
  smack: boolean,
): (c: number) => Promise<ResolvedWorkload> {
  const perClients = new Map<number, ResolvedWorkload>();
  return async (c) => {
    if (!smack) return first;
    let w = perClients.get(c);
    if (!w) {
      w = await resolve(c);
      perClients.set(c, w);
    }
    return w;
  };
}

/** The default label of a sweep: the workload and the local time it started, `WORKLOAD-YYYYMMDD-HHMMSS`. */
export function defaultSweepLabel(workload: string, now: Date): string {
  return `${workload}-${now.toISOString().slice(0, 19).replace(/[-:]/g, '').replace('T', '-')}`;
}

/** One run of a sweep as its line says it: client count, repeat, figures, status and stalls. */
export function sweepRunLine(
  i: number,
  total: number,
  step: { clients: number; repeat: number },
  sr: SweepRun,
  status: string,
): string {
  const stall =
    sr.stalls.length > 0 ? `, STALLED at ${sr.stalls.map(([a, b]) => `${a}–${b} s`).join(', ')}` : '';
  return (
    `dbsmack: [${i + 1}/${total}] ${step.clients} clients, repeat ${step.repeat}: ${sr.qps.toFixed(1)} q/s, ` +
    `p95 ${sr.p95_ms.toFixed(3)} ms, ${status}${stall}`
  );
}

/**
 * Where a sweep's runs go as they finish: the document, rebuilt from every run so far, the history (first:
 * it gives the run its id) and `--out`. Losing the history or the file mid-sweep warns once and the sweep
 * goes on: the other copy, and the runs still to come, are worth more than stopping.
 */
export class SweepRecorder {
  /** Every run so far, the kept runs of a resumed sweep first. */
  readonly done: { clients: number; run: SweepRun }[];
  doc: SweepResult | undefined;
  sweepId: number | undefined;
  settings: Record<string, string> | undefined;
  /** Why the sweep stopped before its last run (also 'interrupted'). */
  stopReason: string | undefined;
  outFailed = false;
  historyFailed = false;
  /** Where the warnings go (the progress, once it is open). */
  log: (m: string) => void = say;

  constructor(
    private history: History | undefined,
    private readonly head: {
      label: string;
      repeat: number;
      clients: number[];
      started_at: string;
      resume: SweepResult['resume'];
      out: string | undefined;
    },
    resumed: { doc: SweepResult; runs: { clients: number; run: SweepRun }[] } | undefined,
  ) {
    this.done = [...(resumed?.runs ?? [])];
    this.settings = resumed?.doc.server_settings;
    // the resumed sweep's history record goes on, when it is in this history
    this.sweepId =
      resumed?.doc.history && resumed.doc.history.path === history?.path
        ? resumed.doc.history.sweep
        : undefined;
  }

  /** Rebuild the document, store the newest run (or the document alone) and rewrite --out. */
  persist(finished: boolean, newest?: { result: SweepRun['result']; repeat: number }): void {
    if (this.done.length === 0) return;
    const { label, repeat, clients, started_at, resume, out } = this.head;
    const doc = buildSweep(
      {
        label,
        repeat,
        clients,
        started_at,
        finished,
        ...(this.settings ? { server_settings: this.settings } : {}),
        ...(this.stopReason ? { reason: this.stopReason } : {}),
      },
      this.done,
    );
    this.doc = doc;
    doc.resume = resume;
    const history = this.history;
    if (history) {
      try {
        if (newest)
          this.sweepId = history.addSweepRun(this.sweepId, doc, newest.result, newest.repeat).sweepId;
        else if (this.sweepId !== undefined) history.updateSweep(this.sweepId, doc);
        if (this.sweepId !== undefined) doc.history = { path: history.path, sweep: this.sweepId };
      } catch (e) {
        this.log(historyWriteWarning(history, e));
        history.close();
        this.history = undefined;
        this.historyFailed = true;
      }
    }
    if (out && !this.outFailed) {
      try {
        writeResultFile(out, `${JSON.stringify(doc, null, 2)}\n`);
      } catch (e) {
        this.outFailed = true;
        this.log(`dbsmack: warning: ${(e as Error).message} (--out), going on without it`);
      }
    }
  }

  /** Close the history; returns its path when it was still written to. */
  close(): string | undefined {
    const path = this.history?.path;
    this.history?.close();
    return path;
  }
}

/** What every run of a sweep shares: its target, probes, metrics, progress and Ctrl-C. */
interface SweepRunner {
  run: RunOptions;
  target: Target;
  label: string;
  workloadFor: (c: number) => Promise<ResolvedWorkload>;
  probes: RunProbe[];
  metrics: MetricsSession | undefined;
  progress: Progress;
  log: (m: string) => void;
  controller: RunController;
  quiet: boolean;
  pause: number;
}

/**
 * Run the steps in their order, recording each the moment it finishes; stops after a run that did not
 * complete, or on Ctrl-C.
 */
async function runSteps(
  order: { clients: number; repeat: number }[],
  r: SweepRunner,
  recorder: SweepRecorder,
): Promise<void> {
  const { run, target, progress, log, controller, metrics } = r;
  for (const [i, step] of order.entries()) {
    if (controller.interrupted) break;
    const w = await r.workloadFor(step.clients);
    const plan = planFrom({ ...run, clients: step.clients }, target, w);
    progress.runStarted(step.clients, step.repeat);
    const result = await runPlanned(
      {
        plan,
        workload: w.workload,
        options: w.options,
        workers: workersFor(run.workers, target, plan.clients, w),
        label: r.label,
        probes: metrics ? [metrics.probe, ...r.probes] : r.probes,
        ...(metrics ? { onSnapshot: metrics.onSnapshot } : {}),
        onInterval: (p: IntervalPoint) => progress.interval(p),
        log,
        controller,
        serverInfo: { connectTimeoutS: run.connectTimeout },
      },
      'sweep',
    );
    // No summary: the sweep's own line per run (below, with stalls and the profile) says it once.
    progress.runFinished();
    if (result === undefined) break;
    recorder.settings ??= result.server?.settings;
    const sr = summarizeRun(result, step.repeat);
    recorder.done.push({ clients: step.clients, run: sr });
    if (result.status !== 'complete' && !controller.interrupted) {
      recorder.stopReason =
        `run ${i + 1} (${step.clients} clients, repeat ${step.repeat}) ${result.status}: ${result.status_reason ?? ''}`.trim();
    } else if (controller.interrupted) recorder.stopReason = 'interrupted';
    recorder.persist(false, { result, repeat: step.repeat });
    if (!r.quiet) {
      log(sweepRunLine(i, order.length, step, sr, result.status));
      const prof = profileSummaryLine(result);
      if (prof) log(`dbsmack:   profile: ${prof}`);
    }
    if (recorder.stopReason) break;
    if (r.pause > 0 && i < order.length - 1) await new Promise((res) => setTimeout(res, r.pause * 1000));
  }
}

/** Print the finished sweep (unless --quiet wrote it to --out alone) and say where it was recorded. */
function printSweep(
  doc: SweepResult,
  o: SweepOptions,
  recorder: SweepRecorder,
  recordedIn: string | undefined,
): void {
  // Under --quiet with --out the file is the result; when it could not be written, stdout is.
  if (!(o.quiet && o.out) || recorder.outFailed) {
    process.stdout.write(
      o.format === 'json'
        ? `${JSON.stringify(doc, null, 2)}\n`
        : renderSweepText(doc, recorder.sweepId) + (renderSweepProfiles(doc) ?? ''),
    );
  }
  if (recordedIn && recorder.sweepId !== undefined && !o.quiet)
    say(`dbsmack: recorded as sweep ${recorder.sweepId} in ${recordedIn}`);
  if (recorder.outFailed) say(`dbsmack: cannot write ${o.out} (--out): the sweep is on stdout`);
}

/** A sweep's workloads and target, resolved and checked before anything is opened or run. */
interface ResolvedSweep {
  workloadFor: (c: number) => Promise<ResolvedWorkload>;
  /** The workload of the first client count (the one every line names). */
  resolved: ResolvedWorkload;
  target: Target;
  /** What shapes its runs, as `--resume` compares it. */
  shape: ReturnType<typeof sweepSettings>;
  resumed: ReturnType<typeof resumeFrom> | undefined;
}

/**
 * Resolve the sweep's workload for every client count, its target and its `--resume` document, so that a bad
 * workload, option or client count fails before the first run; undefined when `help` was asked (and printed).
 */
async function resolveSweep(
  arg: string,
  rest: readonly string[],
  run: RunOptions,
  o: SweepOptions,
  command: WorkloadCommand,
): Promise<ResolvedSweep | undefined> {
  if (o.format !== 'text' && o.format !== 'json') {
    throw new UsageError(`unknown format '${o.format}' for sweep`, 'formats: text, json');
  }
  // A smack file takes its client count as $1: compile it once per client count.
  const smack = isSmack(arg);
  // `sweep WORKLOAD help` (and, for a smack file, the words checked before $1 is put in front of them)
  const first = await resolveWorkload(arg, rest, { ...command, argsOptional: smack });
  if (first.help) {
    process.stdout.write(workloadHelp('sweep', arg, first.workload));
    return undefined;
  }
  checkSweepOptions(run, o);
  const workloadFor = workloadsByClients(
    first,
    (c) => resolveWorkload(arg, [String(c), ...rest], command),
    smack,
  );
  for (const c of o.clients) await workloadFor(c);
  const resolved = await workloadFor(o.clients[0] as number);
  const target = targetFor(run, resolved.workload);
  // every client count must fit the machine before the first run starts
  for (const c of o.clients) workersFor(run.workers, target, c, await workloadFor(c));
  const shape = sweepSettings(arg, rest, run, target);
  const resumed = o.resume !== undefined ? resumeFrom(o.resume, shape) : undefined;
  return { workloadFor, resolved, target, shape, resumed };
}

/**
 * The sweep: resolved and checked, then its runs one after the other, each recorded as it finishes, and the
 * sweep printed at the end; its exit code.
 */
async function sweepCommand(
  arg: string,
  rest: readonly string[],
  run: RunOptions,
  o: SweepOptions,
  command: WorkloadCommand,
): Promise<number> {
  const sweep = await resolveSweep(arg, rest, run, o, command);
  if (sweep === undefined) return EXIT.ok;
  const { workloadFor, resolved, target, shape, resumed } = sweep;
  // a resumed sweep rewrites its own document unless --out names another
  if (o.resume !== undefined && o.out === undefined) o.out = o.resume;
  if (o.out) checkOutputFile(o.out, '--out');
  checkHistoryPath(o.history);
  const history = openHistoryForWrite(o.history);
  const label = resumed?.doc.label ?? o.label ?? defaultSweepLabel(resolved.workload.name, new Date());
  const kept = new Set(resumed?.runs.map((r) => `${r.clients}:${r.run.repeat}`) ?? []);
  const order = schedule(o.clients, o.repeat, o.interleave).filter(
    (s) => !kept.has(`${s.clients}:${s.repeat}`),
  );
  // One set of probes serves every run: --profile and the scheduling options apply to each run alike.
  const probes = profileProbesFrom(run, { sweep: true });
  // --metrics-listen: one listener for the whole sweep, bound before the first run connects; the runs add
  // up in the same series (dbsmack_clients tells which client count runs).
  const metrics = await openMetrics(
    { ...run, quiet: o.quiet },
    { workload: resolved.workload.name, target, label },
    say,
  );
  const controller = new RunController();
  const uninstall = installSignals(() => controller.stop());
  const recorder = new SweepRecorder(
    history,
    {
      label,
      repeat: o.repeat,
      clients: o.clients,
      started_at: resumed?.doc.started_at ?? new Date().toISOString(),
      resume: shape,
      out: o.out,
    },
    resumed,
  );
  if (!o.quiet)
    say(
      `dbsmack: sweep ${label}: ${order.length} runs of ${resolved.workload.name} on ${target.redactedUrl}` +
        (resumed ? `, resuming ${o.resume} (${resumed.runs.length} runs kept)` : ''),
    );
  const tty = process.stderr.isTTY === true;
  const firstPlan = planFrom({ ...run, clients: o.clients[0] as number }, target, resolved);
  // As in `run`: a redrawn status on a terminal; elsewhere --progress asks for a plain line per interval.
  const progress = await createProgress({
    totalRuns: order.length,
    repeats: o.repeat,
    ...(firstPlan.timeS !== undefined ? { runSeconds: firstPlan.timeS + firstPlan.warmupS } : {}),
    mode: o.progress || (tty && !o.quiet) ? (tty ? 'status' : 'lines') : 'off',
    title: `dbsmack sweep ${label}: ${resolved.workload.name} on ${target.redactedUrl}`,
  });
  const log = (m: string): void => progress.log(redactSecrets(m));
  recorder.log = log;
  const runner: SweepRunner = {
    run,
    target,
    label,
    workloadFor,
    probes,
    metrics,
    progress,
    log,
    controller,
    quiet: o.quiet === true,
    pause: o.pause,
  };
  try {
    await runSteps(order, runner, recorder);
  } catch (e) {
    recorder.stopReason = `stopped by an error: ${(e as Error).message}`;
    recorder.persist(false);
    recorder.close();
    await metrics?.finish(true);
    throw e;
  } finally {
    progress.done();
    uninstall();
  }
  const finished = recorder.done.length === order.length + kept.size && !controller.interrupted;
  if (controller.interrupted) recorder.stopReason = 'interrupted';
  recorder.persist(finished);
  const recordedIn = recorder.close();
  const doc = recorder.doc;
  if (doc === undefined) {
    await metrics?.finish(true);
    say('dbsmack: interrupted before the first run finished; nothing was measured');
    return EXIT.interrupted;
  }
  printSweep(doc, o, recorder, recordedIn);
  await metrics?.finish(controller.interrupted);
  if (controller.interrupted) return EXIT.interrupted;
  if (recorder.outFailed || recorder.historyFailed) return EXIT.output;
  return doc.status === 'complete' ? EXIT.ok : EXIT.runFailed;
}

/** Maps commander's options of `run` to RunOptions and workload arguments (run.ts's `runInvocation`). */
export type RunInvocation = (
  o: Record<string, unknown>,
  cmd: CommandUnknownOpts,
) => { rest: string[]; options: RunOptions };

/** `sweep`'s action: the workload's help, or the sweep through commander's options; its exit code. */
export async function sweepAction(
  workload: string | undefined,
  c: CommandUnknownOpts,
  toRun: RunInvocation,
): Promise<number> {
  const all = c.opts() as Record<string, unknown>;
  if (await workloadCommandHelp(c, workload, all.help as boolean | undefined)) return EXIT.ok;
  const clients = (all.clients as number[] | undefined) ?? (all.threads as number[] | undefined) ?? [];
  // The runs take run's own mapping; the sweep decides clients, format and output per run.
  const inv = toRun(all, c);
  const run: RunOptions = { ...inv.options, clients: undefined, format: 'text', out: undefined };
  return sweepCommand(
    workload as string,
    inv.rest,
    run,
    {
      clients,
      repeat: all.repeat as number,
      interleave: all.interleave === true,
      format: all.format as string,
      pause: all.pause as number,
      ...(all.label !== undefined ? { label: all.label as string } : {}),
      ...(all.out !== undefined ? { out: all.out as string } : {}),
      ...(all.resume !== undefined ? { resume: all.resume as string } : {}),
      ...(all.history !== undefined ? { history: all.history as string | boolean } : {}),
      ...(all.quiet !== undefined ? { quiet: all.quiet as boolean } : {}),
      ...(all.progress !== undefined ? { progress: all.progress as boolean } : {}),
    },
    { name: 'sweep', options: longOptions(c) },
  );
}

/**
 * Define `sweep` on the program; call it after `run` is defined, whose options it copies, with the same
 * mapper `run` uses, so that a sweep's runs are configured exactly as `run` would configure them. Its
 * action hands its exit code to `exit`.
 */
export function registerSweep(program: Command, exit: ExitSink, toRun: RunInvocation): void {
  const runCmd = program.commands.find((c) => c.name() === 'run');
  const cmd = program
    .command('sweep')
    .description(
      'run a workload at each of several client counts, several times each; judge stability; record every run',
    )
    .usage('[options] <workload> [args...]')
    .helpOption(false)
    .argument(
      '[workload]',
      'built-in workload name or workload file (a smack file gets the client count as $1)',
    )
    .argument('[args...]', 'workload options (--name value), options of run, positional arguments, or help')
    .option('-c, --clients <list>', 'client counts, e.g. 1,2,4,8,16,32,64,128 (required)', parseClientList)
    .option('--threads <list>', 'alias of --clients (sysbench)', parseClientList)
    .option('--repeat <n>', 'runs per client count', positiveInt('--repeat'), DEFAULT_REPEAT)
    .option(
      '--interleave',
      'run the client counts in turn for each repeat, so that drift spreads over all of them',
    )
    .option('--pause <s>', 'seconds to wait between runs', seconds('--pause'), 0)
    .addOption(
      helpDefault(
        new Option('--label <name>', 'label of the sweep and its runs in the history'),
        'WORKLOAD-YYYYMMDD-HHMMSS',
      ),
    )
    .option('-o, --out <file>', 'write the sweep JSON (dbsmack/sweep@1) to FILE, rewritten after every run')
    .option(
      '--resume <file>',
      'continue the partial sweep of FILE (its --out) without repeating its finished runs; refused when the workload or options differ',
    )
    .option('--format <fmt>', 'what to print on stdout at the end: text or json', 'text');
  addHistoryOptions(cmd as unknown as Command<unknown[], Record<string, unknown>>);
  for (const opt of runCmd?.options ?? []) {
    if (opt.long && !OWN.has(opt.long)) cmd.addOption(opt as never);
  }
  cmd.addOption(helpFlag());
  cmd
    .allowUnknownOption()
    .action(async (workload, _args, _o, c) => exit(await sweepAction(workload, c, toRun)));
}
