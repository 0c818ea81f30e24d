/**
 * `dbsmack experiment PLAN`: the arms of a YAML plan (experiment-plan.ts), interleaved (each repeat runs
 * every arm, in an order rotated by one per repeat), each run through the same `runPlanned` as `run` and
 * `sweep`, recorded in the history (one sweep per arm, labelled `EXPERIMENT/ARM`) and written into the
 * experiment document (`dbsmack/experiment@1`) after every run, so that an interrupted experiment keeps what
 * it measured and `--resume` continues it. At the end: the ratio table of every arm to the baseline, computed
 * by compare's code over the arms as sweeps (analysis/experiment.ts).
 */
import { existsSync } from 'node:fs';
import path from 'node:path';
import { Command, CommanderError, type CommandUnknownOpts, Option } from '@commander-js/extra-typings';
import {
  armLabel,
  armSweep,
  compareArms,
  EXPERIMENT_SCHEMA,
  type ExperimentArm,
  type ExperimentDocument,
  type ExperimentRun,
  summarizeArms,
} from '../analysis/experiment.ts';
import { summarizeRun } from '../analysis/sweep-build.ts';
import { redactSecrets } from '../driver/redact.ts';
import type { Target } from '../driver/types.ts';
import { RunController } from '../engine/run-once.ts';
import { EXIT, InputError, UsageError, UserError } from '../errors.ts';
import type { ServerSched } from '../metrics/profile-types.ts';
import type { IntervalPoint, RunResult } from '../metrics/run-result.ts';
import { renderExperimentText } from '../report/experiment-text.ts';
import { createProgress, type Progress } from '../report/progress.ts';
import { planFrom, targetFor, workersFor } from '../run/plan.ts';
import { profileProbesFrom } from '../run/probes.ts';
import { runPlanned } from '../run/run.ts';
import { readJsonFile } from '../store/documents.ts';
import type { History } from '../store/history.ts';
import type { ExitSink } from './command.ts';
import { profileSideBySide } from './compare.ts';
import {
  armFingerprint,
  type ExperimentPlan,
  experimentSchedule,
  type PlanArm,
  type PlanSetting,
  type RunOptionSpec,
  readPlan,
  settingWords,
} from './experiment-plan.ts';
import { readVariables, redactCommand, runServerCommand, waitForServer } from './experiment-server.ts';
import {
  addHistoryOptions,
  checkHistoryPath,
  historyWriteWarning,
  openHistoryForWrite,
} from './history-options.ts';
import { checkOutputFile, say, writeResultFile } from './output.ts';
import { seconds } from './parse.ts';
import { installSignals, type ResolvedWorkload, type RunOptions, resolveWorkload } from './run.ts';
import type { RunInvocation } from './sweep.ts';

/** Seconds a server may take to answer after its start command, unless the arm's `server: wait:` says otherwise. */
export const DEFAULT_SERVER_WAIT = 60;
/** Seconds a stop or start command may take (a start command must return once the server is launched). */
const COMMAND_TIMEOUT = 300;

interface ExperimentOptions {
  out?: string;
  resume?: boolean;
  allowShell?: boolean;
  dryRun?: boolean;
  serverWait: number;
  format: string;
  history?: string | boolean;
  quiet?: boolean;
  progress?: boolean;
}

/** An arm ready to run: its run options, its workload per client count, its target. */
interface ResolvedArm {
  plan: PlanArm;
  run: RunOptions;
  target: Target;
  workloadFor(clients: number): Promise<ResolvedWorkload>;
}

/** The options of run, as the plan may set them. */
export function runOptionSpecs(program: Command): RunOptionSpec[] {
  const runCmd = program.commands.find((c) => c.name() === 'run');
  return (runCmd?.options ?? [])
    .filter((o) => o.long !== undefined)
    .map((o) => ({ name: (o.long as string).slice(2), flag: !o.required && !o.optional }));
}

/** A workload file named relative to the plan is found beside it. */
function workloadArg(plan: ExperimentPlan): string {
  const w = plan.workload;
  const fileLike = w.includes('/') || /\.(smack|sql|ts|js|mjs)$/i.test(w);
  if (!fileLike || path.isAbsolute(w)) return w;
  const beside = path.join(path.dirname(plan.file), w);
  return !existsSync(w) && existsSync(beside) ? beside : w;
}

const isSmack = (arg: string): boolean => arg.toLowerCase().endsWith('.smack');

/**
 * Parse an arm's settings with run's own options (a scratch command holding them) and resolve its workload
 * with the workload's own option specs. An error names the setting's place in the plan: the settings are
 * tried one by one to find the one at fault.
 */
async function resolveArm(
  plan: ExperimentPlan,
  arm: PlanArm,
  runCmd: CommandUnknownOpts,
  toRun: RunInvocation,
): Promise<ResolvedArm> {
  const parse = async (
    settings: readonly PlanSetting[],
  ): Promise<{ rest: string[]; options: RunOptions }> => {
    const c = new Command('experiment-arm')
      .exitOverride()
      .helpOption(false)
      .allowUnknownOption()
      .allowExcessArguments()
      .argument('[workload]')
      .argument('[args...]')
      .configureOutput({ writeErr: () => {}, writeOut: () => {}, outputError: () => {} });
    for (const o of runCmd.options) c.addOption(o as never);
    let got: { rest: string[]; options: RunOptions } | undefined;
    c.action((_w, _a, o, cmd) => {
      got = toRun(o as Record<string, unknown>, cmd as unknown as CommandUnknownOpts);
    });
    const words = [
      ...(plan.target !== undefined ? [`--db=${plan.target}`] : []),
      ...settings.flatMap(settingWords),
    ];
    await c.parseAsync([plan.workload, ...words], { from: 'user' });
    if (!got) throw new Error('the arm parser did not run');
    return got;
  };
  const located = async <T>(fn: (s: readonly PlanSetting[]) => Promise<T>): Promise<T> => {
    try {
      return await fn(arm.settings);
    } catch (e) {
      if (!(e instanceof UserError || e instanceof CommanderError)) throw e;
      const msg = e.message.replace(/^error: /, '');
      for (const s of arm.settings) {
        try {
          await fn([s]);
        } catch {
          throw new InputError(`${s.at}: ${s.key}: ${msg}`, e instanceof UserError ? e.hint : undefined);
        }
      }
      throw new InputError(
        `${arm.at}: arm '${arm.label}': ${msg}`,
        e instanceof UserError ? e.hint : undefined,
      );
    }
  };
  const inv = await located(parse);
  const run: RunOptions = { ...inv.options, clients: undefined, format: 'text', out: undefined };
  const arg = workloadArg(plan);
  const command = { name: 'run', options: [] as string[] };
  const smack = isSmack(arg);
  const cache = new Map<number, ResolvedWorkload>();
  const resolveFor = async (c: number, settings: readonly PlanSetting[]): Promise<ResolvedWorkload> => {
    const i = settings === arm.settings ? inv : await parse(settings);
    return resolveWorkload(arg, smack ? [String(c), ...i.rest] : i.rest, command);
  };
  const workloadFor = async (c: number): Promise<ResolvedWorkload> => {
    const key = smack ? c : 0;
    let w = cache.get(key);
    if (!w) {
      w = await located((s) => resolveFor(c, s));
      cache.set(key, w);
    }
    return w;
  };
  const first = await workloadFor(plan.clients[0] as number);
  for (const c of plan.clients) await workloadFor(c);
  const target = targetFor(run, first.workload);
  for (const c of plan.clients) workersFor(run.workers, target, c, await workloadFor(c));
  // The probes' options are checked now too (--server-priority without a policy …).
  try {
    profileProbesFrom(run, { sweep: true });
  } catch (e) {
    if (e instanceof UserError) throw new InputError(`${arm.at}: arm '${arm.label}': ${e.message}`, e.hint);
    throw e;
  }
  return { plan: arm, run, target, workloadFor };
}

const settingsRecord = (arm: PlanArm): Record<string, string | number | boolean> =>
  Object.fromEntries(arm.settings.map((s) => [s.key, s.value]));

/** Why a saved experiment cannot be continued under this plan, or undefined when it can. */
export function resumeProblem(doc: ExperimentDocument, plan: ExperimentPlan): string | undefined {
  if (doc.name !== plan.name) return `it is experiment '${doc.name}', the plan is '${plan.name}'`;
  if (doc.plan.workload !== plan.workload)
    return `the workload changed from ${doc.plan.workload} to ${plan.workload}`;
  const labels = plan.arms.map((a) => a.label);
  const saved = doc.arms.map((a) => a.label);
  const added = labels.filter((l) => !saved.includes(l));
  const removed = saved.filter((l) => !labels.includes(l));
  if (added.length > 0 || removed.length > 0)
    return `the arms changed (${[...added.map((l) => `added ${l}`), ...removed.map((l) => `removed ${l}`)].join(', ')})`;
  const base = plan.arms.find((a) => a.baseline)?.label;
  if (doc.plan.baseline !== base) return `the baseline changed from ${doc.plan.baseline} to ${base}`;
  for (const arm of plan.arms) {
    const was = doc.arms.find((a) => a.label === arm.label)!;
    if (was.fingerprint === armFingerprint(plan, arm)) continue;
    const now = settingsRecord(arm);
    const keys = [...new Set([...Object.keys(now), ...Object.keys(was.settings)])].sort();
    const changed = keys
      .filter((k) => String(now[k] ?? '') !== String(was.settings[k] ?? ''))
      .map((k) => `${k}: ${was.settings[k] ?? '(unset)'} → ${now[k] ?? '(unset)'}`);
    if (JSON.stringify(was.server ?? null) !== JSON.stringify(serverOf(arm) ?? null))
      changed.push('its server commands');
    if (JSON.stringify(was.check ?? null) !== JSON.stringify(arm.check ?? null)) changed.push('its check');
    if (changed.length === 0) changed.push('its target, or a password in its commands');
    return `arm '${arm.label}' changed (${changed.join('; ')}): its new runs would be mixed with runs of another set-up`;
  }
  return undefined;
}

const serverOf = (arm: PlanArm): ExperimentArm['server'] | undefined =>
  arm.server
    ? {
        ...(arm.server.stop !== undefined ? { stop: redactCommand(arm.server.stop) } : {}),
        ...(arm.server.start !== undefined ? { start: redactCommand(arm.server.start) } : {}),
      }
    : undefined;

/** A new experiment document for the plan: every arm, no runs yet, partial. */
export function freshDocument(plan: ExperimentPlan, target: Target): ExperimentDocument {
  const now = new Date().toISOString();
  return {
    schema: EXPERIMENT_SCHEMA,
    name: plan.name,
    status: 'partial',
    status_reason: 'not finished',
    plan: {
      file: plan.file,
      workload: plan.workload,
      target: target.redactedUrl,
      clients: plan.clients,
      repeat: plan.repeat,
      baseline: plan.arms.find((a) => a.baseline)?.label ?? '',
      order: 'interleaved',
    },
    started_at: now,
    updated_at: now,
    arms: plan.arms.map((a) => ({
      label: a.label,
      baseline: a.baseline,
      fingerprint: armFingerprint(plan, a),
      settings: settingsRecord(a),
      ...(a.server ? { server: serverOf(a) } : {}),
      ...(a.check ? { check: a.check } : {}),
      runs: [],
    })),
    warnings: [],
  };
}

function loadForResume(file: string, plan: ExperimentPlan): ExperimentDocument {
  if (!existsSync(file))
    throw new UsageError(
      `--resume: no experiment document ${file} to continue`,
      'start the experiment without --resume, or name its document with --out FILE',
    );
  const doc = readJsonFile(file) as ExperimentDocument;
  if (doc?.schema !== EXPERIMENT_SCHEMA || !Array.isArray(doc.arms))
    throw new InputError(`--resume: ${file} is not an experiment document (${EXPERIMENT_SCHEMA})`);
  const problem = resumeProblem(doc, plan);
  if (problem)
    throw new UsageError(
      `--resume: cannot continue ${file} with the plan ${plan.file}: ${problem}`,
      'put the plan back as it was, or start a new experiment (another --out FILE, without --resume)',
    );
  // Runs cut short are made again; the rest stay as they are.
  for (const a of doc.arms) a.runs = a.runs.filter((r) => r.status === 'complete' && !r.interrupted);
  doc.plan.clients = plan.clients;
  doc.plan.repeat = plan.repeat;
  doc.plan.file = plan.file;
  doc.warnings = [];
  return doc;
}

/** An arm's scheduling options that the run could not apply (no server process, no permission). */
export function schedulingWarning(arm: string, result: RunResult): string | undefined {
  const sched = (result as { server_sched?: ServerSched }).server_sched;
  if (!sched || sched.applied) return undefined;
  const why = sched.notes.map((n) => n.why).join('; ') || 'not applied';
  return `arm ${arm}: its scheduling options did not take effect (${why}): it ran as the server was`;
}

/** Arms set up by server commands whose server settings came out the same: the restart may not have done what it should. */
export function identicalSettingsWarnings(doc: ExperimentDocument): string[] {
  const out: string[] = [];
  const restarted = doc.arms.filter((a) => a.server?.start && a.server_settings && !a.check);
  for (let i = 0; i < restarted.length; i++)
    for (let j = i + 1; j < restarted.length; j++) {
      const a = restarted[i]!;
      const b = restarted[j]!;
      if (JSON.stringify(a.server_settings) === JSON.stringify(b.server_settings))
        out.push(
          `arms ${a.label} and ${b.label} ran with identical server variables (${Object.keys(a.server_settings ?? {}).length} read): ` +
            'their start commands may not have set what they differ by; give the arms a check: of the variable',
        );
    }
  return out;
}

/** A plan's server commands run only with `--allow-shell`: without it they are refused, each named with its arm. */
export function refuseServerCommands(plan: ExperimentPlan, allowShell: boolean): void {
  const shell = plan.arms.filter((a) => a.server);
  if (shell.length === 0 || allowShell) return;
  const list = shell
    .map(
      (a) =>
        `${a.server!.at} (arm ${a.label}): ${[a.server!.stop, a.server!.start]
          .filter((c) => c !== undefined)
          .map(redactCommand)
          .join('; ')}`,
    )
    .join('\n  ');
  throw new UsageError(
    `the plan runs server commands, which dbsmack runs only with --allow-shell:\n  ${list}`,
    'read them, then run again with --allow-shell (dbsmack runs only the commands the plan names)',
  );
}

/** The experiment document's file: `--out`, else PLAN.experiment.json in the working directory. */
export function experimentOutFile(planFile: string, out: string | undefined): string {
  return out ?? `${path.basename(planFile).replace(/\.(ya?ml)$/i, '')}.experiment.json`;
}

/** Starting anew over the document of a partial experiment says so (`--resume` would continue it). */
function noteStartingOver(out: string): void {
  if (!existsSync(out)) return;
  try {
    const old = readJsonFile(out) as ExperimentDocument;
    if (old?.schema === EXPERIMENT_SCHEMA && old.status === 'partial')
      say(`dbsmack: note: ${out} held a partial experiment; starting anew over it (--resume continues one)`);
  } catch {
    // not ours to read: it is overwritten like any --out file
  }
}

/**
 * Where an experiment's runs go: its document (the arms' summaries and the comparison computed again, the
 * file rewritten after every run) and each arm's sweep in the history. Losing the file or the history warns
 * once and the experiment goes on without it.
 */
export class ExperimentRecorder {
  outFailed = false;
  historyFailed = false;
  /** Where the warnings go (the progress, once it is open). */
  log: (m: string) => void = say;
  private readonly source: string;

  constructor(
    private readonly doc: ExperimentDocument,
    private readonly out: string,
    private history: History | undefined,
  ) {
    this.source = `file ${out}`;
  }

  /** Summarize the arms, compare them, and rewrite the document. */
  persist(): void {
    const doc = this.doc;
    doc.updated_at = new Date().toISOString();
    summarizeArms(doc);
    const cmp = compareArms(doc, this.source);
    if (cmp) doc.comparison = cmp;
    if (this.outFailed) return;
    try {
      writeResultFile(this.out, `${JSON.stringify(doc, null, 2)}\n`);
    } catch (e) {
      this.outFailed = true;
      this.log(`dbsmack: warning: ${(e as Error).message} (--out), going on without it`);
    }
  }

  /** Store the newest run in the arm's history sweep (made on the arm's first run). */
  record(arm: ExperimentArm, run: ExperimentRun): void {
    const history = this.history;
    if (!history) return;
    try {
      const sweep = armSweep(this.doc, arm)!;
      const known = arm.history?.path === history.path ? arm.history.sweep : undefined;
      const { sweepId } = history.addSweepRun(known, sweep, run.result, run.repeat);
      arm.history = { path: history.path, sweep: sweepId };
    } catch (e) {
      this.log(historyWriteWarning(history, e));
      history.close();
      this.history = undefined;
      this.historyFailed = true;
    }
  }

  /** Close the history; returns its path when it was still written to. */
  close(): string | undefined {
    const p = this.history?.path;
    this.history?.close();
    return p;
  }
}

/**
 * The server as each arm wants it: its stop and start commands, the wait for it to answer, and its check of
 * the server's variables, done when the arm differs from the one that ran before.
 */
class ArmSetUp {
  private current: number | undefined;
  /** The last arm whose start command ran: the server is left as it left it. */
  lastArmAt: string | undefined;

  constructor(
    private readonly arms: ResolvedArm[],
    private readonly doc: ExperimentDocument,
    private readonly serverWait: number,
    private readonly controller: RunController,
    private readonly log: (m: string) => void,
  ) {}

  /** Make arm `i` the server's set-up (returns early on Ctrl-C). */
  async setUp(i: number): Promise<void> {
    const a = this.arms[i]!;
    const stopped = (): boolean => this.controller.interrupted;
    const srv = a.plan.server;
    if (srv && this.current !== i) {
      const what = `arm ${a.plan.label}`;
      if (srv.stop) {
        this.log(`dbsmack: ${what}: stopping the server: ${redactCommand(srv.stop)}`);
        await runServerCommand(srv.stop, `${what} stop`, COMMAND_TIMEOUT, stopped);
      }
      if (stopped()) return;
      if (srv.start) {
        this.log(`dbsmack: ${what}: starting the server: ${redactCommand(srv.start)}`);
        this.lastArmAt = a.plan.label;
        await runServerCommand(srv.start, `${what} start`, COMMAND_TIMEOUT, stopped);
        await waitForServer(a.target, srv.wait ?? this.serverWait, a.run.connectTimeout, what, stopped);
      }
    }
    if (stopped()) return;
    if (a.plan.check && this.current !== i) await this.check(a, this.doc.arms[i]!);
    this.current = i;
  }

  /** The arm's `check:`: the server's variables as the plan expects them, or the experiment stops. */
  private async check(a: ResolvedArm, armDoc: ExperimentArm): Promise<void> {
    const check = a.plan.check!;
    const names = Object.keys(check);
    const seen = await readVariables(a.target, names, a.run.connectTimeout);
    armDoc.checked = seen;
    const wrong = names.filter((n) => (seen[n] ?? '').toLowerCase() !== String(check[n]).toLowerCase());
    if (wrong.length > 0) {
      throw new UserError(
        `arm ${a.plan.label}: ${wrong.map((n) => `${n} is ${seen[n] === undefined ? 'unknown to the server' : `'${seen[n]}'`}, the plan expects '${check[n]}'`).join('; ')}`,
        "the arm's settings did not take effect: check its server commands; the partial experiment is saved (--resume)",
        EXIT.runFailed,
      );
    }
    this.log(`dbsmack: arm ${a.plan.label}: checked ${names.map((n) => `${n}=${seen[n]}`).join(', ')}`);
  }
}

/** What every run of an experiment shares while its steps run. */
interface ExperimentRunner {
  plan: ExperimentPlan;
  arms: ResolvedArm[];
  doc: ExperimentDocument;
  recorder: ExperimentRecorder;
  server: ArmSetUp;
  progress: Progress;
  log: (m: string) => void;
  controller: RunController;
  quiet: boolean;
}

/**
 * Run the steps in their order, each arm's server set up first, each run recorded the moment it finishes;
 * stops after a run that did not complete, or on Ctrl-C.
 */
async function runExperimentSteps(
  order: { arm: number; clients: number; repeat: number }[],
  r: ExperimentRunner,
): Promise<void> {
  const { plan, doc, recorder, progress, log, controller } = r;
  let seq = doc.arms.reduce((n, a) => n + a.runs.length, 0);
  for (const [n, step] of order.entries()) {
    if (controller.interrupted) break;
    const a = r.arms[step.arm]!;
    const armDoc = doc.arms[step.arm]!;
    await r.server.setUp(step.arm);
    if (controller.interrupted) break;
    const w = await a.workloadFor(step.clients);
    const runPlan = planFrom({ ...a.run, clients: step.clients }, a.target, w);
    progress.runStarted(step.clients, step.repeat);
    let result: RunResult | undefined;
    try {
      result = await runPlanned(
        {
          plan: runPlan,
          workload: w.workload,
          options: w.options,
          workers: workersFor(a.run.workers, a.target, runPlan.clients, w),
          label: armLabel(plan.name, a.plan.label),
          probes: profileProbesFrom(a.run, { sweep: true }),
          onInterval: (p: IntervalPoint) => progress.interval(p),
          log,
          controller,
          experiment: { name: plan.name, arm: a.plan.label },
          serverInfo: { connectTimeoutS: a.run.connectTimeout },
        },
        'experiment',
      );
    } finally {
      progress.runFinished();
    }
    if (result === undefined) break;
    armDoc.server_settings ??= result.server?.settings;
    const cut = controller.interrupted && result.status !== 'complete';
    const run: ExperimentRun = {
      ...summarizeRun(result, step.repeat),
      clients: step.clients,
      seq: ++seq,
      // cut short by Ctrl-C (a run that finished before the signal counts as any other)
      ...(cut ? { interrupted: true } : {}),
    };
    armDoc.runs.push(run);
    if (!cut) recorder.record(armDoc, run);
    const schedWarning = schedulingWarning(a.plan.label, result);
    for (const wmsg of [...identicalSettingsWarnings(doc), ...(schedWarning ? [schedWarning] : [])])
      if (!doc.warnings.includes(wmsg)) {
        doc.warnings.push(wmsg);
        log(`dbsmack: warning: ${wmsg}`);
      }
    if (result.status !== 'complete' && !controller.interrupted)
      doc.status_reason =
        `run ${seq} (arm ${a.plan.label}, ${step.clients} clients, repeat ${step.repeat}) ${result.status}: ${result.status_reason ?? ''}`.trim();
    else if (cut) doc.status_reason = 'interrupted';
    recorder.persist();
    if (!r.quiet)
      log(
        `dbsmack: [${n + 1}/${order.length}] ${a.plan.label}, ${step.clients} clients, repeat ${step.repeat}: ` +
          `${run.qps.toFixed(1)} q/s, p95 ${run.p95_ms.toFixed(3)} ms, ${result.status}`,
      );
    if (result.status !== 'complete' || controller.interrupted) break;
  }
}

/** The end of an experiment on stdout (its table, or its document) and stderr (where it was kept). */
function printExperiment(
  doc: ExperimentDocument,
  plan: ExperimentPlan,
  o: ExperimentOptions,
  out: string,
  end: { outFailed: boolean; recordedIn: string | undefined; interrupted: boolean },
): void {
  const { outFailed, recordedIn, interrupted } = end;
  const complete = doc.arms.reduce((k, a) => k + a.runs.filter((r) => r.status === 'complete').length, 0);
  if (complete === 0 && doc.arms.every((a) => a.runs.length === 0)) {
    if (interrupted) say('dbsmack: interrupted before the first run finished; nothing was measured');
  } else if (o.format === 'json') process.stdout.write(`${JSON.stringify(doc, null, 2)}\n`);
  else {
    const profiles = doc.comparison ? profileSideBySide(representatives(doc)) : undefined;
    process.stdout.write(renderExperimentText(doc, doc.comparison) + (profiles ? `\n${profiles}` : ''));
  }
  if (!o.quiet) {
    if (!outFailed)
      say(
        `dbsmack: experiment document ${out}${doc.status === 'partial' ? ' (partial: dbsmack experiment PLAN --resume continues it)' : ''}`,
      );
    if (recordedIn)
      say(
        `dbsmack: runs recorded in ${recordedIn} as ${plan.arms.map((a) => armLabel(plan.name, a.label)).join(', ')}`,
      );
  }
}

/**
 * The experiment: the plan read and its arms resolved (or only printed, `--dry-run`), then its runs
 * interleaved, each recorded as it finishes, and the ratio table at the end; its exit code.
 */
async function experimentCommand(
  planFile: string,
  o: ExperimentOptions,
  runCmd: CommandUnknownOpts,
  toRun: RunInvocation,
  specs: RunOptionSpec[],
): Promise<number> {
  if (o.format !== 'text' && o.format !== 'json')
    throw new UsageError(`unknown format '${o.format}' for experiment`, 'formats: text, json');
  const plan = readPlan(planFile, specs);
  const arms: ResolvedArm[] = [];
  for (const a of plan.arms) arms.push(await resolveArm(plan, a, runCmd, toRun));
  if (o.dryRun) {
    process.stdout.write(renderDryRun(plan, arms));
    return EXIT.ok;
  }
  refuseServerCommands(plan, o.allowShell === true);
  const out = experimentOutFile(planFile, o.out);
  checkOutputFile(out, '--out');
  checkHistoryPath(o.history);
  const doc = o.resume ? loadForResume(out, plan) : freshDocument(plan, arms[0]!.target);
  if (!o.resume) noteStartingOver(out);
  const done = new Set(
    doc.arms.flatMap((a) => a.runs.map((r) => `${a.label}\u0000${r.clients}\u0000${r.repeat}`)),
  );
  const order = experimentSchedule(plan.arms.length, plan.clients, plan.repeat).filter(
    (s) => !done.has(`${plan.arms[s.arm]!.label}\u0000${s.clients}\u0000${s.repeat}`),
  );
  const mixed = plan.arms.some((a) => a.server) && plan.arms.some((a) => !a.server);
  if (mixed)
    doc.warnings.push(
      'some arms restart the server and others do not: those run on the server as the arm before them left it',
    );
  const recorder = new ExperimentRecorder(doc, out, openHistoryForWrite(o.history));
  const controller = new RunController();
  const uninstall = installSignals(() => controller.stop());
  let errorCode: number | undefined;
  const tty = process.stderr.isTTY === true;
  const firstPlan = planFrom(
    { ...arms[0]!.run, clients: plan.clients[0] as number },
    arms[0]!.target,
    await arms[0]!.workloadFor(plan.clients[0] as number),
  );
  const progress = await createProgress({
    totalRuns: order.length,
    repeats: plan.repeat,
    ...(firstPlan.timeS !== undefined ? { runSeconds: firstPlan.timeS + firstPlan.warmupS } : {}),
    mode: o.progress || (tty && !o.quiet) ? (tty ? 'status' : 'lines') : 'off',
    title: `dbsmack experiment ${plan.name}`,
  });
  const log = (m: string): void => progress.log(redactSecrets(m));
  recorder.log = log;
  const server = new ArmSetUp(arms, doc, o.serverWait, controller, log);
  if (!o.quiet) {
    const kept = doc.arms.reduce((n, a) => n + a.runs.length, 0);
    const resumed = o.resume ? `, resuming ${out} (${kept} runs kept)` : '';
    say(
      `dbsmack: experiment ${plan.name}: ${order.length} runs of ${plan.workload}, ${plan.arms.length} arms interleaved on ${arms[0]!.target.redactedUrl}${resumed}`,
    );
  }
  recorder.persist();
  try {
    await runExperimentSteps(order, {
      plan,
      arms,
      doc,
      recorder,
      server,
      progress,
      log,
      controller,
      quiet: o.quiet === true,
    });
  } catch (e) {
    doc.status_reason = `stopped by an error: ${(e as Error).message}`;
    recorder.persist();
    if (!(e instanceof UserError)) throw e;
    errorCode = e.exitCode;
    progress.done();
    process.stderr.write(`dbsmack: ${redactSecrets(e.message)}\n`);
    if (e.hint) process.stderr.write(`hint: ${redactSecrets(e.hint)}\n`);
  } finally {
    progress.done();
    uninstall();
  }
  const all = experimentSchedule(plan.arms.length, plan.clients, plan.repeat).length;
  const complete = doc.arms.reduce((k, a) => k + a.runs.filter((r) => r.status === 'complete').length, 0);
  if (controller.interrupted) doc.status_reason = 'interrupted';
  if (complete === all && errorCode === undefined && !controller.interrupted) {
    doc.status = 'complete';
    delete doc.status_reason;
  }
  recorder.persist();
  printExperiment(doc, plan, o, out, {
    outFailed: recorder.outFailed,
    recordedIn: recorder.close(),
    interrupted: controller.interrupted,
  });
  if (controller.interrupted || errorCode !== undefined) {
    const left =
      server.lastArmAt !== undefined
        ? `the server is left as the commands of arm ${server.lastArmAt} left it`
        : 'the server is left as it was (no arm restarted it; scheduling options are put back after each run)';
    say(`dbsmack: ${controller.interrupted ? 'interrupted' : 'stopped'}: ${left}`);
  }
  if (controller.interrupted) return EXIT.interrupted;
  if (errorCode !== undefined) return errorCode;
  if (recorder.outFailed || recorder.historyFailed) return EXIT.output;
  return doc.status === 'complete' ? EXIT.ok : EXIT.runFailed;
}

/** `--dry-run`: what the plan would do, checked as a real start checks it, and nothing done. */
function renderDryRun(plan: ExperimentPlan, arms: ResolvedArm[]): string {
  const order = experimentSchedule(plan.arms.length, plan.clients, plan.repeat);
  const out: string[] = [
    `experiment ${plan.name}: ${order.length} runs of ${plan.workload} (${plan.clients.length} client counts × ${plan.repeat} repeats × ${plan.arms.length} arms), interleaved`,
  ];
  for (const a of arms) {
    const words = a.plan.settings.flatMap(settingWords);
    out.push(
      `arm ${a.plan.label}${a.plan.baseline ? ' (baseline)' : ''}: dbsmack run ${plan.workload} --db ${a.target.redactedUrl}${words.length > 0 ? ` ${words.join(' ')}` : ''}`,
    );
    if (a.plan.server?.stop) out.push(`  server stop:  ${redactCommand(a.plan.server.stop)}`);
    if (a.plan.server?.start)
      out.push(
        `  server start: ${redactCommand(a.plan.server.start)} (then up to ${a.plan.server.wait ?? DEFAULT_SERVER_WAIT} s until it answers)`,
      );
    if (a.plan.check)
      out.push(
        `  check: ${Object.entries(a.plan.check)
          .map(([k, v]) => `${k} = ${v}`)
          .join(', ')}`,
      );
  }
  for (let r = 1; r <= plan.repeat; r++) {
    const labels = [...new Set(order.filter((s) => s.repeat === r).map((s) => plan.arms[s.arm]!.label))];
    out.push(`repeat ${r}: ${labels.join(', ')} (each at ${plan.clients.join(', ')} clients)`);
  }
  if (plan.arms.some((a) => a.server)) out.push('the server commands run only with --allow-shell');
  return `${redactSecrets(out.join('\n'))}\n`;
}

/** The median run of each arm at the highest client count, for the profiles side by side. */
function representatives(doc: ExperimentDocument): { label: string; result: RunResult }[] {
  const top = Math.max(...doc.plan.clients);
  const out: { label: string; result: RunResult }[] = [];
  for (const a of [...doc.arms].sort((x, y) => Number(y.baseline) - Number(x.baseline))) {
    const at = a.runs
      .filter((r) => r.clients === top && r.status === 'complete')
      .sort((x, y) => x.qps - y.qps);
    const mid = at[(at.length - 1) >> 1];
    if (mid) out.push({ label: a.label, result: mid.result });
  }
  return out.length === doc.arms.length ? out : [];
}

/**
 * `experiment`'s action: its help, or the plan run through commander's options; its exit code. `runCmd` is
 * `run` (whose options a plan's arms set), `program` the whole program (for the specs of those options).
 */
export async function experimentAction(
  planFile: string | undefined,
  all: Record<string, unknown>,
  cmd: CommandUnknownOpts,
  runCmd: CommandUnknownOpts,
  toRun: RunInvocation,
  program: Command,
): Promise<number> {
  if (all.help || planFile === undefined) {
    if (planFile === undefined && !all.help)
      throw new UsageError(
        'experiment needs a plan: dbsmack experiment PLAN.yaml',
        'dbsmack experiment --help',
      );
    cmd.outputHelp();
    return EXIT.ok;
  }
  return experimentCommand(
    planFile,
    {
      serverWait: all.serverWait as number,
      format: all.format as string,
      ...(all.out !== undefined ? { out: all.out as string } : {}),
      ...(all.resume ? { resume: true } : {}),
      ...(all.allowShell ? { allowShell: true } : {}),
      ...(all.dryRun ? { dryRun: true } : {}),
      ...(all.history !== undefined ? { history: all.history as string | boolean } : {}),
      ...(all.quiet ? { quiet: true } : {}),
      ...(all.progress ? { progress: true } : {}),
    },
    runCmd,
    toRun,
    runOptionSpecs(program),
  );
}

/**
 * Define `experiment` on the program, after `run` (whose options a plan may set). Its action hands its exit
 * code to `exit`.
 */
export function registerExperiment(program: Command, exit: ExitSink, toRun: RunInvocation): void {
  const runCmd = program.commands.find((c) => c.name() === 'run') as unknown as CommandUnknownOpts;
  const cmd = program
    .command('experiment')
    .description(
      'run the arms of a YAML plan interleaved (server restarts, scheduling or run options per arm); one ratio table to the baseline',
    )
    .usage('[options] <plan.yaml>')
    .helpOption(false)
    .argument('[plan]', 'the plan: a YAML file (see the README, Experiments)')
    .option(
      '-o, --out <file>',
      'the experiment document (dbsmack/experiment@1), rewritten after every run (default: PLAN.experiment.json here)',
    )
    .option('--resume', 'continue the partial experiment in --out without repeating its finished runs')
    .option('--allow-shell', "run the plan's server stop/start commands (nothing else)")
    .option(
      '-n, --dry-run',
      'check the plan and print the arms, their commands and the order of the runs; run nothing',
    )
    .option(
      '--server-wait <s>',
      'seconds to wait for the server to answer after a start command',
      seconds('--server-wait', false),
      DEFAULT_SERVER_WAIT,
    )
    .option('--format <fmt>', 'what to print on stdout at the end: text or json', 'text')
    .option('--progress', 'print a line per interval on stderr even when it is not a terminal')
    .option('-q, --quiet', 'no progress lines');
  addHistoryOptions(cmd as unknown as Command<unknown[], Record<string, unknown>>);
  cmd.option('--debug', 'print stack traces of errors');
  cmd.addOption(new Option('-h, --help', 'display help for command'));
  cmd.action(async (planFile, o) =>
    exit(
      await experimentAction(
        planFile,
        o as Record<string, unknown>,
        cmd as unknown as CommandUnknownOpts,
        runCmd,
        toRun,
        program,
      ),
    ),
  );
}
