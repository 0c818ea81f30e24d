/**
 * One planned run, carried to its finished RunResult: the engine through `runOnce`, a failure to start
 * mapped to the user error it is, and the result finished (run/finish.ts). `run`, `sweep`, `capacity`,
 * `experiment` and `pgbench` all run through `runPlanned`; they only map options in, render and record.
 */

// Up into cli/ until this check moves down beside run/plan.ts: it still lives beside its parser.
import { checkThresholdTypes } from '../cli/slo-options.ts';
import { StartError } from '../engine/engine.ts';
import { type RunInput, runOnce } from '../engine/run-once.ts';
import type { RunResult } from '../metrics/run-result.ts';
import { annotateStalls, type FinishSteps, finishResult } from './finish.ts';
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

/**
 * Run once with the command's error mapping, stalls annotated (`pgbench` finishes its result itself).
 */
export async function runWithErrors(input: RunInput, action: string): Promise<RunResult | undefined> {
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
