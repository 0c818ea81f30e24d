/**
 * Load shapes and service levels on `run` (and, copied, `sweep`): `--stages`, `--rate-stages`,
 * `--threshold` (repeatable) and `--threshold-abort`. Parsed here into plans and specs; checked against
 * the run's plan before it starts (`checkThresholds`).
 */
import { type Command, Option } from '@commander-js/extra-typings';
import type { ThresholdSpec } from '../analysis/threshold-spec.ts';
import type { StagePlan } from '../metrics/outcome.ts';
import { parseStages } from './stages-parse.ts';
import { parseThreshold } from './threshold-parse.ts';

export interface SloCliOptions {
  stages?: StagePlan[];
  rateStages?: StagePlan[];
  threshold?: ThresholdSpec[];
  thresholdAbort?: boolean;
}

/** Add `--stages`, `--rate-stages`, `--threshold` and `--threshold-abort`. */
// biome-ignore lint/suspicious/noExplicitAny: commander's typed builder changes type with every option
export function addSloOptions<C extends Command<any, any, any>>(cmd: C): C {
  cmd.addOption(
    new Option(
      '--stages <list>',
      'clients per stage, e.g. 30s:8,60s:64,30s:8 (connections opened and closed at the boundaries); the stages give the run its length',
    ).argParser((v: string) => parseStages('--stages', v, 'clients')),
  );
  cmd.addOption(
    new Option(
      '--rate-stages <list>',
      'open loop: events per second per stage, e.g. 30s:1000,60s:5000, each ramping linearly from the previous rate (the first from --rate, else held)',
    ).argParser((v: string) => parseStages('--rate-stages', v, 'rate')),
  );
  cmd.addOption(
    new Option(
      '--threshold <expr>',
      "pass/fail rule checked at the end, repeatable: 'p99<5ms', 'p95{statement=point_selects}<2ms', 'errors<0.1%', 'qps>10000', 'tps>500', 'p99{stage=2}<5ms'; a failed one exits 8",
    ).argParser((v: string, prev: ThresholdSpec[] | undefined) => [
      ...(prev ?? []),
      parseThreshold('--threshold', v),
    ]),
  );
  cmd.addOption(
    new Option(
      '--threshold-abort',
      'stop the run as soon as a threshold can no longer hold (error counts, finished stages, max, percentiles of a run with a bounded number of events)',
    ),
  );
  return cmd;
}
