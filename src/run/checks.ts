/**
 * The checks a run's plan must pass before it starts: thresholds on stages and statement types the run
 * has, stages in whole report intervals. They belong to the run layer (the CLI's parsers only read the words).
 */
import type { ThresholdSpec } from '../analysis/threshold-spec.ts';
import type { RunPlan } from '../engine/protocol.ts';
import { UsageError } from '../errors.ts';
import type { StagePlan } from '../metrics/outcome.ts';

/**
 * Thresholds that cannot be judged on this run are refused before it starts: a stage the run does not
 * have, and (once the clients are set up) a statement type the workload does not have.
 */
export function checkThresholdStages(specs: readonly ThresholdSpec[], plan: RunPlan): void {
  for (const t of specs) {
    if (t.stage === undefined) continue;
    const n = plan.stages?.length ?? 0;
    if (n === 0) {
      throw new UsageError(
        `--threshold '${t.expr}': the run has no stages`,
        'give --stages or --rate-stages, or drop {stage=…}',
      );
    }
    if (t.stage > n) {
      throw new UsageError(`--threshold '${t.expr}': the run has ${n} stage${n === 1 ? '' : 's'}`);
    }
  }
}

/**
 * `types`: the statement types the clients declared in their set-up (`ctx.statement`). A workload that
 * declares none of its own (only the engine's begin/commit/rollback) runs ad-hoc statements (`ctx.query`),
 * whose types appear only as they run: nothing can be checked then.
 */
export function checkThresholdTypes(specs: readonly ThresholdSpec[], types: readonly string[]): void {
  if (types.every((n) => n === 'begin' || n === 'commit' || n === 'rollback')) return;
  for (const t of specs) {
    if (t.statement === undefined || types.includes(t.statement)) continue;
    throw new UsageError(
      `--threshold '${t.expr}': the workload has no statement type '${t.statement}'`,
      `its statement types: ${[...types].sort().join(', ')}`,
    );
  }
}

/** Stage lengths must be whole multiples of the report interval: each interval then lies in one stage. */
export function checkStageIntervals(option: string, stages: readonly StagePlan[], intervalS: number): void {
  for (const [i, s] of stages.entries()) {
    const k = s.durationS / intervalS;
    if (Math.abs(k - Math.round(k)) > 1e-6 || Math.round(k) < 1) {
      throw new UsageError(
        `${option}: stage ${i + 1} lasts ${s.durationS} s, not a whole multiple of --report-interval ${intervalS} s`,
        'each stage is measured from whole intervals: give stage lengths in whole report intervals',
      );
    }
  }
}
