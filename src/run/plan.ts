/**
 * Planning a run: the target it goes to, the engine's plan (the workload's defaults under the options
 * given), the number of load workers and its thresholds (the probes: run/probes.ts). Every command that
 * runs workloads (`run`, `sweep`, `capacity`, `experiment`, `pgbench`) plans through here; the CLI only
 * maps its options in.
 */

import type { ThresholdSpec } from '../analysis/threshold-spec.ts';
import { ThresholdWatch } from '../analysis/thresholds.ts';
import { sharedIoOf, soloIoOf } from '../driver/connectors.ts';
import type { Target } from '../driver/types.ts';
import { parseTarget } from '../driver/url.ts';
import { capacityProblem, defaultWorkers } from '../engine/capacity.ts';
import type { RunPlan } from '../engine/protocol.ts';
import { maxStageClients, stagesLength } from '../engine/stages.ts';
import { UsageError } from '../errors.ts';
import type { RatePlan, StagePlan } from '../metrics/outcome.ts';
import type { Workload, WorkloadRef } from '../workload/types.ts';
import { checkStageIntervals, checkThresholdStages } from './checks.ts';

/** Where a run goes: `--db`, and whether it was given (rather than defaulted). */
export interface TargetChoice {
  db: string;
  /** Whether --db was given: it then overrides a smack file's client settings. */
  dbGiven?: boolean;
}

/** The options a run's plan is made of (the run-shaping part of `run`'s options). */
export interface PlanOptions {
  dbGiven?: boolean;
  connectTimeout: number;
  clients?: number;
  rounds?: number;
  events?: number;
  time?: number;
  warmup: number;
  reportInterval: number;
  maxTries: number;
  ignoreErrors?: string;
  reconnectTimeout: number;
  seed?: number;
  /** Open loop (`--rate`). */
  rate?: RatePlan | undefined;
  percentile?: number;
  reportIntervalGiven?: boolean;
  stages?: StagePlan[];
  rateStages?: StagePlan[];
}

/** A workload as a run needs it: the loaded workload, how the workers load it, its parsed options. */
export interface PlannedWorkload {
  workload: Workload;
  ref: WorkloadRef;
  options: Record<string, unknown>;
}

/**
 * The target: `--db`, unless a workload that names its own target (a smack file's client blocks, through
 * an optional `defaultTarget()`) runs without `--db`.
 */
export function targetFor(o: TargetChoice, workload: Workload): Target {
  const own = (workload as { defaultTarget?: () => Target }).defaultTarget;
  return !o.dbGiven && typeof own === 'function' ? own.call(workload) : parseTarget(o.db);
}

/** Build the engine's plan from the command-line options and the workload's defaults. */
export function planFrom(o: PlanOptions, target: Target, resolved: PlannedWorkload): RunPlan {
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
 * Whether the workload says its statements only read under its options (`Workload.readOnly`): the default
 * layout gives more PostgreSQL clients a load thread each then (capacity.ts `defaultWorkers`).
 */
export function readsOnly(w: PlannedWorkload): boolean {
  return w.workload.readOnly?.(w.options) === true;
}

/**
 * The load workers of a run of `resolved` (`--workers`, else the bounded default, which asks `readsOnly`),
 * refused before the run when the machine cannot hold them or the clients (memory, open files): never a
 * crash minutes into it.
 */
export function workersFor(
  given: number | undefined,
  target: Target,
  clients: number,
  resolved: PlannedWorkload,
): number {
  const workers =
    given ??
    defaultWorkers(
      target.driver,
      clients,
      undefined,
      undefined,
      sharedIoOf(target),
      soloIoOf(target),
      readsOnly(resolved),
    );
  const problem = capacityProblem(target.driver, clients, workers);
  if (problem !== undefined) {
    throw new UsageError(
      `cannot run ${clients} client${clients === 1 ? '' : 's'}: ${problem.reason}`,
      problem.hint,
    );
  }
  return workers;
}

/** What `planRun` is given: the target, the plan's options, the workers and the thresholds. */
export interface RunRequest extends TargetChoice, PlanOptions {
  workers?: number;
  threshold?: ThresholdSpec[];
  thresholdAbort?: boolean;
}

/** One run, planned: everything the run layer needs to start it (see run/run.ts `runPlanned`). */
export interface PlannedRun {
  target: Target;
  plan: RunPlan;
  workers: number;
  /** `--threshold`: judged at the end; `watch` (`--threshold-abort`) stops the run when one cannot hold. */
  thresholds: ThresholdSpec[];
  watch?: ThresholdWatch;
}

/**
 * Plan one run (`run`): the target, the plan, thresholds that cannot be judged on it refused, and the
 * worker count. The probes come after the command has checked its output paths (`profileProbesFrom`).
 */
export function planRun(o: RunRequest, resolved: PlannedWorkload): PlannedRun {
  const target = targetFor(o, resolved.workload);
  const plan = planFrom(o, target, resolved);
  const thresholds = o.threshold ?? [];
  checkThresholdStages(thresholds, plan);
  const watch = o.thresholdAbort && thresholds.length > 0 ? new ThresholdWatch(thresholds) : undefined;
  const workers = workersFor(o.workers, target, plan.clients, resolved);
  return {
    target,
    plan,
    workers,
    thresholds,
    ...(watch !== undefined ? { watch } : {}),
  };
}
