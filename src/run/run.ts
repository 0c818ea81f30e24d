/**
 * One planned run, carried to its finished RunResult: the engine through `runOnce`, a failure to start
 * mapped to the user error it is, and the result finished (run/finish.ts). `run`, `sweep`, `capacity`,
 * `experiment` and `pgbench` all run through `runPlanned`; they only map options in, render and record.
 */

import { StartError } from '../engine/engine.ts';
import { type RunInput, type RunProbe, runOnce } from '../engine/run-once.ts';
import type { RunResult } from '../metrics/run-result.ts';
import { checkThresholdTypes } from './checks.ts';
import { annotateStalls, type FinishSteps, finishResult } from './finish.ts';
import { type PlannedRun, type PlannedWorkload, planRun, type RunRequest } from './plan.ts';
import { type ProbeOptions, profileProbesFrom } from './probes.ts';
import { adminError, startErrorToUserError } from './run-errors.ts';

/** A run as `runPlanned` takes it: what `runOnce` needs, and how to finish its result. */
export interface RunSpec extends RunInput, FinishSteps {}

/**
 * Run once and finish the result. Start failures become user errors with exit codes, named after
 * `action` (the command: `run`, `sweep` …); undefined when interrupted before the run started.
 * Thresholds given are checked against the statement types before the start, watched while it runs
 * (`watch`), and judged at the end.
 */
export async function runPlanned(spec: RunSpec, action: string): Promise<RunResult | undefined> {
  const specs = spec.thresholds ?? [];
  const watch = spec.watch;
  const result = await runWithErrors(
    {
      ...spec,
      ...(specs.length > 0
        ? { beforeStart: ({ types }: { types: string[] }) => checkThresholdTypes(specs, types) }
        : {}),
      ...(watch !== undefined ? { check: watch.check.bind(watch) } : {}),
    },
    action,
  );
  if (result !== undefined) await finishResult(result, spec.plan.target, spec);
  return result;
}

/** Run once with the command's error mapping, stalls annotated. */
async function runWithErrors(input: RunInput, action: string): Promise<RunResult | undefined> {
  const target = input.plan.target;
  try {
    const r = await runOnce(input);
    annotateStalls(r);
    return r;
  } catch (e) {
    if (e instanceof StartError) {
      if (e.error.code === 'INTERRUPTED') return undefined;
      throw startErrorToUserError(e, target);
    }
    return adminError(e, target, { action });
  }
}

/** The hooks a command's front hands to its run: what shows it, and how it is stopped. */
export interface FrontHooks
  extends Pick<RunInput, 'onInterval' | 'log' | 'controller' | 'onSnapshot' | 'label'> {
  /** Probes of the command's own (live metrics), started before those the options ask for. */
  probes?: RunProbe[];
  /** The run is over (`result` undefined: it failed or nothing was measured). */
  closed(result: RunResult | undefined): Promise<void> | void;
}

/**
 * What a command shows and writes around one run, asked by `runWorkload` as the run takes shape: the
 * command checks its outputs once the run is planned, and opens what shows it once the probes are made.
 */
export interface RunFront {
  /** The run is planned: check every file the run will write (a bad path must not cost the run). */
  planned(run: PlannedRun): void;
  /** The probes are made: open what shows the run and hand back its hooks. */
  open(run: PlannedRun): Promise<FrontHooks>;
}

/**
 * One run from its options to its finished RunResult (`run`): planned (run/plan.ts), its probes made, run
 * and finished (`runPlanned`, with its thresholds and the server info); the front shows it. Undefined
 * when interrupted before the run started.
 */
export async function runWorkload(
  o: RunRequest & ProbeOptions,
  resolved: PlannedWorkload,
  front: RunFront,
  action: string,
): Promise<RunResult | undefined> {
  const planned = planRun(o, resolved);
  front.planned(planned);
  const probes = profileProbesFrom(o);
  const hooks = await front.open(planned);
  const { closed, probes: own, ...shown } = hooks;
  let result: RunResult | undefined;
  try {
    result = await runPlanned(
      {
        plan: planned.plan,
        workload: resolved.workload,
        options: resolved.options,
        workers: planned.workers,
        probes: [...(own ?? []), ...probes],
        ...shown,
        thresholds: planned.thresholds,
        ...(planned.watch !== undefined ? { watch: planned.watch } : {}),
        serverInfo: { connectTimeoutS: o.connectTimeout },
      },
      action,
    );
  } finally {
    await closed(result);
  }
  return result;
}
