/**
 * The steps that finish a RunResult after the engine: stalls under `--rate` annotated, thresholds judged,
 * the experiment arm named, and the server's version and settings read over a fresh connection.
 */

import { annotateRateStalls } from '../analysis/rate-stalls.ts';
import type { ThresholdSpec } from '../analysis/threshold-spec.ts';
import { evaluateThresholds, type ThresholdWatch } from '../analysis/thresholds.ts';
import type { Target } from '../driver/types.ts';
import type { RunResult } from '../metrics/run-result.ts';
import { readServerInfo } from '../probe/server-settings.ts';

/** How a result is finished; every step is optional. */
export interface FinishSteps {
  /** `--threshold`: judged on the result (with the watch of `--threshold-abort`, if any). */
  thresholds?: readonly ThresholdSpec[];
  watch?: ThresholdWatch;
  /** The experiment and arm the run belongs to. */
  experiment?: NonNullable<RunResult['experiment']>;
  /** Read the server's version and settings (`capacity` does not). */
  serverInfo?: { connectTimeoutS: number };
}

/** A stall under --rate is measured and reported (in the intervals), not a reason to stop. */
export function annotateStalls(result: RunResult): void {
  annotateRateStalls(result);
}

/** Finish a measured result in place: thresholds, experiment, server info, in that order. */
export async function finishResult(result: RunResult, target: Target, steps: FinishSteps): Promise<void> {
  const specs = steps.thresholds ?? [];
  if (specs.length > 0) result.thresholds = evaluateThresholds(result, specs, steps.watch?.aborted);
  if (steps.experiment !== undefined) result.experiment = steps.experiment;
  if (steps.serverInfo !== undefined)
    await attachServerInfo(result, target, steps.serverInfo.connectTimeoutS);
}

/** Attach the server's version and settings to a result (read over a fresh connection). */
export async function attachServerInfo(
  result: RunResult,
  target: Target,
  connectTimeoutS: number,
): Promise<void> {
  const info = await readServerInfo(target, connectTimeoutS * 1000);
  if (info) result.server = info;
}
