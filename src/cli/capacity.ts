/**
 * `dbsmack capacity WORKLOAD --slo 'p99<5ms' [--rate-min R] [--rate-max R]`: searches open-loop rates for
 * the highest one whose latencies hold the SLO (analysis/capacity.ts), running each step through the same
 * `runPlanned` as `run` (without the server info: a step's result is judged, not kept). Every option of `run` works (copied from it) except those the search sets itself.
 */
import { type Command, type CommandUnknownOpts, Option } from '@commander-js/extra-typings';
import {
  CAPACITY_SCHEMA,
  type CapacityResult,
  type CapacityStep,
  judgeRun,
  judgeStep,
  searchCapacity,
} from '../analysis/capacity.ts';
import type { ThresholdSpec } from '../analysis/threshold-spec.ts';
import { redactSecrets } from '../driver/redact.ts';
import type { Target } from '../driver/types.ts';
import { RunController } from '../engine/run-once.ts';
import { EXIT, UsageError } from '../errors.ts';
import type { RunResult } from '../metrics/run-result.ts';
import { renderCapacityText } from '../report/capacity-text.ts';
import { checkThresholdTypes } from '../run/checks.ts';
import { planFrom, targetFor, workersFor } from '../run/plan.ts';
import { runPlanned } from '../run/run.ts';
import type { ExitSink } from './command.ts';
import { workloadHelp } from './help.ts';
import { checkOutputFile, say, writeResultFile } from './output.ts';
import { positiveInt } from './parse.ts';
import { installSignals, type ResolvedWorkload, type RunOptions, resolveWorkload } from './run.ts';
import type { RunInvocation } from './sweep.ts';
import { parseThreshold } from './threshold-parse.ts';
import { helpFlag, longOptions, workloadCommandHelp } from './workload-help.ts';

/** Options of `run` that capacity sets itself, or that do not apply to a search. */
const OWN = new Set([
  '--rate',
  '--rate-stages',
  '--stages',
  '--threshold',
  '--threshold-abort',
  '--rate-max-lag',
  // live metrics are served by run and sweep; a search's many short runs would restart the series
  '--metrics-listen',
  '--metrics-linger',
  '--format',
  '--out',
  '--label',
  '--history',
  '--no-history',
  '--help',
]);

export interface CapacityOptions {
  slo: ThresholdSpec[];
  rateMin: number;
  rateMax: number;
  repeat: number;
  precision: number;
  maxSteps: number;
  format: string;
  out?: string;
  quiet?: boolean;
  shape: 'poisson' | 'constant';
  lateUs: number;
}

const positiveNumber =
  (name: string) =>
  (v: string): number => {
    const n = Number(v);
    if (v.trim() === '' || !Number.isFinite(n) || n <= 0) {
      throw new UsageError(`${name} expects a number above 0, got '${v}'`);
    }
    return n;
  };

/** What capacity refuses before it resolves the workload. */
export function checkCapacityOptions(o: CapacityOptions): void {
  if (o.format !== 'text' && o.format !== 'json') {
    throw new UsageError(`unknown format '${o.format}' for capacity`, 'formats: text, json');
  }
  if (o.slo.length === 0) {
    throw new UsageError("capacity needs --slo EXPR, e.g. --slo 'p99<5ms'", 'dbsmack capacity --help');
  }
  if (o.rateMin > o.rateMax) {
    throw new UsageError(`--rate-min ${o.rateMin} is above --rate-max ${o.rateMax}`);
  }
  for (const t of o.slo) {
    if (t.stage !== undefined) throw new UsageError(`--slo '${t.expr}': a capacity step has no stages`);
  }
}

/** The capacity document before its first step: the search's bounds, no rate found yet. */
export function capacityDocument(
  o: CapacityOptions,
  resolved: ResolvedWorkload,
  target: Target,
  first: { clients: number; timeS?: number | undefined },
): CapacityResult {
  return {
    schema: CAPACITY_SCHEMA,
    status: 'complete',
    workload: { name: resolved.workload.name, options: resolved.options },
    target: { driver: target.driver, url: target.redactedUrl, server_version: '' },
    clients: first.clients,
    started_at: new Date().toISOString(),
    slo: o.slo.map((t) => t.expr),
    rate: null,
    broke: null,
    rate_min: o.rateMin,
    rate_max: o.rateMax,
    repeat: o.repeat,
    step_time_s: first.timeS ?? null,
    precision: o.precision,
    steps: [],
  };
}

/**
 * The search: each step runs its rate `--repeat` times through the run layer and is judged against the SLO,
 * the document rewritten after every step; its exit code (8 when no rate held).
 */
async function capacityCommand(
  arg: string,
  rest: readonly string[],
  run: RunOptions,
  o: CapacityOptions,
  command: { name: string; options: readonly string[] },
): Promise<number> {
  checkCapacityOptions(o);
  const resolved = await resolveWorkload(arg, rest, command);
  if (resolved.help) {
    process.stdout.write(workloadHelp('capacity', arg, resolved.workload));
    return EXIT.ok;
  }
  const target = targetFor(run, resolved.workload);
  const planAt = (rate: number) =>
    planFrom(
      {
        ...run,
        rate: { perSec: rate, shape: o.shape, maxLagUs: Number.POSITIVE_INFINITY, lateUs: o.lateUs },
      },
      target,
      resolved,
    );
  const first = planAt(o.rateMin);
  const workers = workersFor(run.workers, target, first.clients, resolved);
  if (o.out) checkOutputFile(o.out, '--out');
  const controller = new RunController();
  const uninstall = installSignals(() => controller.stop());
  const log = (m: string): void => {
    if (!o.quiet) say(redactSecrets(m));
  };
  const doc = capacityDocument(o, resolved, target, first);
  const save = (): void => {
    if (o.out) writeResultFile(o.out, `${JSON.stringify(doc, null, 2)}\n`);
  };
  log(
    `dbsmack: capacity of ${resolved.workload.name} on ${target.redactedUrl} for ${doc.slo.join(' and ')}: rates ${o.rateMin} to ${o.rateMax}/s`,
  );
  let stoppedBy: string | undefined;
  const tryRate = async (
    rate: number,
    step: number,
    phase: CapacityStep['phase'],
  ): Promise<CapacityStep | undefined> => {
    const results: RunResult[] = [];
    for (let k = 1; k <= o.repeat; k++) {
      if (controller.interrupted) return undefined;
      const result = await runPlanned(
        {
          plan: planAt(rate),
          workload: resolved.workload,
          options: resolved.options,
          workers,
          beforeStart: ({ types }) => checkThresholdTypes(o.slo, types),
          log,
          controller,
        },
        'capacity',
      );
      if (result === undefined || controller.interrupted) {
        stoppedBy = 'interrupted';
        return undefined;
      }
      doc.target.server_version ||= result.target.server_version;
      results.push(result);
      const jr = judgeRun(result, k, o.slo);
      log(
        `dbsmack: step ${step} (${phase}) ${rate}/s, run ${k}/${o.repeat}: ${result.totals.eps.toFixed(1)} events/s, ` +
          `p99 ${result.events.latency_ms.p99} ms, ${jr.holds ? 'holds' : `broke (${jr.why.join(', ')})`}`,
      );
      // a step that broke once cannot hold: its other repeats would not change the verdict
      if (!jr.holds) break;
    }
    const runs = results.map((r, i) => judgeRun(r, i + 1, o.slo));
    const s = judgeStep(step, phase, rate, runs, results);
    doc.steps.push(s);
    save();
    return s;
  };
  try {
    const found = await searchCapacity(
      { rateMin: o.rateMin, rateMax: o.rateMax, precision: o.precision, maxSteps: o.maxSteps },
      tryRate,
    );
    doc.rate = found.rate;
    if (found.broke) {
      doc.broke = {
        rate: found.broke.rate,
        step: found.broke.step,
        why: found.broke.why,
        reason: found.broke.reason,
      };
    }
    if (found.stopped) {
      doc.status = 'partial';
      doc.status_reason = stoppedBy ?? 'stopped';
    }
  } finally {
    uninstall();
  }
  save();
  if (!(o.quiet && o.out)) {
    process.stdout.write(
      redactSecrets(o.format === 'json' ? `${JSON.stringify(doc, null, 2)}\n` : renderCapacityText(doc)),
    );
  }
  if (controller.interrupted) return EXIT.interrupted;
  return doc.rate === null ? EXIT.threshold : EXIT.ok;
}

/** `capacity`'s action: the workload's help, or the search through commander's options; its exit code. */
export async function capacityAction(
  workload: string | undefined,
  c: CommandUnknownOpts,
  toRun: RunInvocation,
): Promise<number> {
  const all = c.opts() as Record<string, unknown>;
  if (await workloadCommandHelp(c, workload, all.help as boolean | undefined)) return EXIT.ok;
  const inv = toRun(all, c);
  const run: RunOptions = { ...inv.options, format: 'text', out: undefined, history: false };
  return capacityCommand(
    workload as string,
    inv.rest,
    run,
    {
      slo: (all.slo as ThresholdSpec[] | undefined) ?? [],
      rateMin: all.rateMin as number,
      rateMax: all.rateMax as number,
      repeat: all.repeat as number,
      precision: all.precision as number,
      maxSteps: all.maxSteps as number,
      format: all.format as string,
      shape: all.rateShape === 'constant' ? 'constant' : 'poisson',
      lateUs: ((all.rateLateMs as number | undefined) ?? 1) * 1000,
      ...(all.out !== undefined ? { out: all.out as string } : {}),
      ...(all.quiet !== undefined ? { quiet: all.quiet as boolean } : {}),
    },
    { name: 'capacity', options: longOptions(c) },
  );
}

/**
 * Define `capacity`; after `run`, whose options it copies (the search sets the rate itself). Its action
 * hands its exit code to `exit`.
 */
export function registerCapacity(program: Command, exit: ExitSink, toRun: RunInvocation): void {
  const runCmd = program.commands.find((c) => c.name() === 'run');
  const cmd = program
    .command('capacity')
    .description(
      'find the highest open-loop rate whose latencies hold an SLO: bracketing, then bisection, each step repeated and judged',
    )
    .usage('[options] <workload> [args...]')
    .helpOption(false)
    .argument('[workload]', 'built-in workload name or workload file')
    .argument('[args...]', 'workload options (--name value), options of run, or help')
    .addOption(
      new Option(
        '--slo <expr>',
        "the service level to hold, in --threshold's grammar, repeatable: 'p99<5ms', 'p95{statement=point_selects}<2ms', 'errors<0.1%' (required)",
      ).argParser((v: string, prev: ThresholdSpec[] | undefined) => [
        ...(prev ?? []),
        parseThreshold('--slo', v),
      ]),
    )
    .addOption(
      new Option('--rate-min <r>', 'the first rate tried, events per second')
        .argParser(positiveNumber('--rate-min'))
        .default(10),
    )
    .addOption(
      new Option('--rate-max <r>', 'the highest rate tried, events per second')
        .argParser(positiveNumber('--rate-max'))
        .default(100000),
    )
    .option('--repeat <n>', 'runs per step (a step holds when every run holds)', positiveInt('--repeat'), 2)
    .addOption(
      new Option('--precision <p>', 'stop bisecting when the rates that held and broke are within this share')
        .argParser(positiveNumber('--precision'))
        .default(0.1),
    )
    .option('--max-steps <n>', 'at most this many steps', positiveInt('--max-steps'), 20)
    .option(
      '-o, --out <file>',
      'write the capacity JSON (dbsmack/capacity@1) to FILE, rewritten after every step',
    )
    .option('--format <fmt>', 'what to print on stdout at the end: text or json', 'text');
  for (const opt of runCmd?.options ?? []) {
    if (opt.long && !OWN.has(opt.long)) cmd.addOption(opt as never);
  }
  cmd.addOption(helpFlag());
  cmd
    .allowUnknownOption()
    .action(async (workload, _args, _o, c) => exit(await capacityAction(workload, c, toRun)));
}
