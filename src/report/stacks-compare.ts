/**
 * The per-function ratio tables of `dbsmack compare` (and of the HTML and Markdown reports' side-by-side
 * profiles): preemptions, blocks and calls per second of each run's code-profile window, with the ratio
 * candidate/base next to each candidate, as the story read "458× more often in open_table".
 */
import { functionRatios } from '../analysis/function-ratios.ts';
import type { RunResult } from '../metrics/run-result.ts';
import { ratio } from './compare-text.ts';

const TITLES = {
  preempted: 'preempted when in function, switches per second of the stacks window (candidate/base)',
  blocked: 'blocked when in function, switches per second of the stacks window (candidate/base)',
  calls: 'function executed, calls per second of the window (candidate/base)',
} as const;

const rate = (v: number | undefined): string =>
  v === undefined ? '-' : v >= 100 ? v.toFixed(0) : v.toFixed(1);
const times = (v: number | undefined): string =>
  v === undefined ? '-' : v === Number.POSITIVE_INFINITY ? 'new' : `${ratio(v)}×`;

/** Tables for runs labelled base first; empty when no run has a code profile. */
export function functionRatioTables(
  runs: ReadonlyArray<{ label: string; result: RunResult }>,
): Array<{ title: string; header: string[]; rows: string[][] }> {
  const base = runs[0]?.label ?? 'base';
  const header = ['function', base, ...runs.slice(1).flatMap((r) => [r.label, `${r.label}/${base}`])];
  return functionRatios(runs.map((r) => r.result as never)).map((t) => ({
    title: TITLES[t.kind],
    header,
    rows: t.rows.map((row) => [
      row.function,
      rate(row.rates[0]),
      ...row.rates.slice(1).flatMap((r, i) => [rate(r), times(row.ratios[i])]),
    ]),
  }));
}
