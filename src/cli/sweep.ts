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
import { redactSecrets } from '../driver/redact.ts';
import type { Target } from '../driver/types.ts';
import { RunController } from '../engine/run-once.ts';
import { EXIT, InputError, UsageError } from '../errors.ts';
import type { IntervalPoint } from '../metrics/run-result.ts';
import { profileSummaryLine, renderSweepProfiles } from '../report/profile.ts';
import { createProgress } from '../report/progress.ts';
import { renderSweepText } from '../report/sweep-text.ts';
import { planFrom, targetFor, workersFor } from '../run/plan.ts';
import { profileProbesFrom } from '../run/probes.ts';
import { runPlanned } from '../run/run.ts';
import { readJsonFile } from '../store/documents.ts';
import type { ExitSink } from './command.ts';
import { helpDefault, workloadHelp } from './help.ts';
import { addHistoryOptions, checkHistoryPath, openHistoryForWrite } from './history-options.ts';
import { openMetrics } from './metrics-options.ts';
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
  for (const [k, v] of Object.entries(run).sort(([a], [b]) => a.localeCompare(b))) {
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

async function sweepCommand(
  arg: string,
  rest: readonly string[],
  run: RunOptions,
  o: SweepOptions,
  command: WorkloadCommand,
): Promise<number> {
  if (o.format !== 'text' && o.format !== 'json') {
    throw new UsageError(`unknown format '${o.format}' for sweep`, 'formats: text, json');
  }
  // A smack file takes its client count as $1: compile it once per client count.
  const smack = isSmack(arg);
  const perClients = new Map<number, ResolvedWorkload>();
  // `sweep WORKLOAD help` (and, for a smack file, the words checked before $1 is put in front of them)
  const first = await resolveWorkload(arg, rest, { ...command, argsOptional: smack });
  if (first.help) {
    process.stdout.write(workloadHelp('sweep', arg, first.workload));
    return EXIT.ok;
  }
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
  const common = smack ? undefined : first;
  const workloadFor = async (c: number): Promise<ResolvedWorkload> => {
    if (common) return common;
    let w = perClients.get(c);
    if (!w) {
      w = await resolveWorkload(arg, [String(c), ...rest], command);
      perClients.set(c, w);
    }
    return w;
  };
  // Resolve every client count up front, so that a bad workload or option fails before the first run.
  for (const c of o.clients) await workloadFor(c);
  const resolved = await workloadFor(o.clients[0] as number);
  const target = targetFor(run, resolved.workload);
  // every client count must fit the machine before the first run starts
  for (const c of o.clients) workersFor(run.workers, target.driver, c);
  const shape = sweepSettings(arg, rest, run, target);
  const resumed = o.resume !== undefined ? resumeFrom(o.resume, shape) : undefined;
  // a resumed sweep rewrites its own document unless --out names another
  if (o.resume !== undefined && o.out === undefined) o.out = o.resume;
  if (o.out) checkOutputFile(o.out, '--out');
  checkHistoryPath(o.history);
  let history = openHistoryForWrite(o.history);
  let historyFailed = false;
  const label =
    resumed?.doc.label ??
    o.label ??
    `${resolved.workload.name}-${new Date().toISOString().slice(0, 19).replace(/[-:]/g, '').replace('T', '-')}`;
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
  const done: { clients: number; run: SweepRun }[] = [...(resumed?.runs ?? [])];
  const startedAt = resumed?.doc.started_at ?? new Date().toISOString();
  // the resumed sweep's history record goes on, when it is in this history
  let sweepId: number | undefined =
    resumed?.doc.history && resumed.doc.history.path === history?.path
      ? resumed.doc.history.sweep
      : undefined;
  let doc: SweepResult | undefined;
  let settings: Record<string, string> | undefined = resumed?.doc.server_settings;
  let stopReason: string | undefined;
  let outFailed = false;
  /**
   * Rebuild the document from every run so far, store the newest run (history first: it gives the run
   * its id) and rewrite --out. Losing the history or the file mid-sweep warns once and the sweep goes on:
   * the other copy, and the runs still to come, are worth more than stopping.
   */
  const persist = (finished: boolean, newest?: { result: SweepRun['result']; repeat: number }): void => {
    if (done.length === 0) return;
    doc = buildSweep(
      {
        label,
        repeat: o.repeat,
        clients: o.clients,
        started_at: startedAt,
        finished,
        ...(settings ? { server_settings: settings } : {}),
        ...(stopReason ? { reason: stopReason } : {}),
      },
      done,
    );
    doc.resume = shape;
    if (history) {
      try {
        if (newest) sweepId = history.addSweepRun(sweepId, doc, newest.result, newest.repeat).sweepId;
        else if (sweepId !== undefined) history.updateSweep(sweepId, doc);
        if (sweepId !== undefined) doc.history = { path: history.path, sweep: sweepId };
      } catch (e) {
        log(
          `dbsmack: warning: the history ${history.path} cannot be written, going on without it: ${(e as Error).message}`,
        );
        history.close();
        history = undefined;
        historyFailed = true;
      }
    }
    if (o.out && !outFailed) {
      try {
        writeResultFile(o.out, `${JSON.stringify(doc, null, 2)}\n`);
      } catch (e) {
        outFailed = true;
        log(`dbsmack: warning: ${(e as Error).message} (--out), going on without it`);
      }
    }
  };
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
  try {
    for (const [i, step] of order.entries()) {
      if (controller.interrupted) break;
      const w = await workloadFor(step.clients);
      const plan = planFrom({ ...run, clients: step.clients }, target, w);
      progress.runStarted(step.clients, step.repeat);
      const result = await runPlanned(
        {
          plan,
          workload: w.workload,
          options: w.options,
          workers: workersFor(run.workers, target.driver, plan.clients),
          label,
          probes: metrics ? [metrics.probe, ...probes] : probes,
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
      settings ??= result.server?.settings;
      const sr = summarizeRun(result, step.repeat);
      done.push({ clients: step.clients, run: sr });
      if (result.status !== 'complete' && !controller.interrupted) {
        stopReason =
          `run ${i + 1} (${step.clients} clients, repeat ${step.repeat}) ${result.status}: ${result.status_reason ?? ''}`.trim();
      } else if (controller.interrupted) stopReason = 'interrupted';
      persist(false, { result, repeat: step.repeat });
      if (!o.quiet) {
        const stall =
          sr.stalls.length > 0 ? `, STALLED at ${sr.stalls.map(([a, b]) => `${a}–${b} s`).join(', ')}` : '';
        log(
          `dbsmack: [${i + 1}/${order.length}] ${step.clients} clients, repeat ${step.repeat}: ${sr.qps.toFixed(1)} q/s, ` +
            `p95 ${sr.p95_ms.toFixed(3)} ms, ${result.status}${stall}`,
        );
        const prof = profileSummaryLine(result);
        if (prof) log(`dbsmack:   profile: ${prof}`);
      }
      if (stopReason) break;
      if (o.pause > 0 && i < order.length - 1) await new Promise((r) => setTimeout(r, o.pause * 1000));
    }
  } catch (e) {
    stopReason = `stopped by an error: ${(e as Error).message}`;
    persist(false);
    history?.close();
    await metrics?.finish(true);
    throw e;
  } finally {
    progress.done();
    uninstall();
  }
  const finished = done.length === order.length + kept.size && !controller.interrupted;
  if (controller.interrupted) stopReason = 'interrupted';
  persist(finished);
  const recordedIn = history?.path;
  history?.close();
  if (doc === undefined) {
    await metrics?.finish(true);
    say('dbsmack: interrupted before the first run finished; nothing was measured');
    return EXIT.interrupted;
  }
  // Under --quiet with --out the file is the result; when it could not be written, stdout is.
  if (!(o.quiet && o.out) || outFailed) {
    process.stdout.write(
      o.format === 'json'
        ? `${JSON.stringify(doc, null, 2)}\n`
        : renderSweepText(doc, sweepId) + (renderSweepProfiles(doc) ?? ''),
    );
  }
  if (recordedIn && sweepId !== undefined && !o.quiet)
    say(`dbsmack: recorded as sweep ${sweepId} in ${recordedIn}`);
  if (outFailed) say(`dbsmack: cannot write ${o.out} (--out): the sweep is on stdout`);
  await metrics?.finish(controller.interrupted);
  if (controller.interrupted) return EXIT.interrupted;
  if (outFailed || historyFailed) return EXIT.output;
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
