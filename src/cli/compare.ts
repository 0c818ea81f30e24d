/**
 * `dbsmack compare BASE CAND [CAND…]`: the ratio table per client count with significance, what differs
 * between the inputs, and `--fail-below R` / `--fail-above R` to guard a CI pipeline.
 */
import type { Command } from '@commander-js/extra-typings';
import { Option } from '@commander-js/extra-typings';
import {
  CompareInputError,
  compareSeries,
  guard,
  type Metric,
  type Series,
  seriesFromRuns,
  seriesFromSweep,
} from '../analysis/compare.ts';
import { EXIT, UsageError } from '../errors.ts';
import type { RunResult } from '../metrics/run-result.ts';
import { renderCompareCsv, renderCompareMarkdown, renderCompareText } from '../report/compare-text.ts';
import { type LabelledResult, type ProfiledResult, renderProfileComparison } from '../report/profile.ts';
import { DocumentReader, type LoadedInput } from '../store/documents.ts';
import type { ExitSink } from './command.ts';
import { readHistoryOption } from './history-options.ts';
import { checkOutputFile, say, writeResultFile } from './output.ts';
import { nonNegativeInt } from './parse.ts';

function ratioArg(name: string) {
  return (v: string): number => {
    const n = Number(v);
    if (v.trim() === '' || !Number.isFinite(n) || n <= 0)
      throw new UsageError(`${name} expects a ratio above 0 such as 0.95, got '${v}'`);
    return n;
  };
}

function alphaArg(v: string): number {
  const n = Number(v);
  if (!(n > 0 && n < 1))
    throw new UsageError(`--alpha expects a probability between 0 and 1 such as 0.05, got '${v}'`);
  return n;
}

interface CompareOpts {
  metric: Metric;
  format: string;
  failBelow?: number;
  failAbove?: number;
  alpha: number;
  seed: number;
  out?: string;
  history?: string | boolean;
}

/** The `Series` compare computes on, from a loaded input. */
function seriesOf(l: LoadedInput): Series {
  return l.kind === 'sweep'
    ? seriesFromSweep(l.name, l.source, l.doc)
    : seriesFromRuns(l.name, l.source, l.docs);
}

/** Give every input a distinct name: a repeated one gets ` (2)`, ` (3)` … */
function distinctNames(series: Series[]): void {
  const seen = new Map<string, number>();
  for (const s of series) {
    const n = (seen.get(s.name) ?? 0) + 1;
    seen.set(s.name, n);
    if (n > 1) s.name = `${s.name} (${n})`;
  }
}

/**
 * The run that stands for each input in the side-by-side profile table: at the highest client count all
 * inputs share, the complete run with the median throughput (its profile is the one typical of the input).
 */
function representativeRuns(loaded: readonly LoadedInput[], names: readonly string[]): LabelledResult[] {
  const runsOf = (l: LoadedInput): RunResult[] =>
    (l.kind === 'sweep' ? l.doc.points.flatMap((p) => p.runs.map((r) => r.result)) : l.docs).filter(
      (r): r is RunResult => r !== undefined && r !== null && r.status === 'complete',
    );
  const all = loaded.map(runsOf);
  const counts = all.map((rs) => new Set(rs.map((r) => r.clients)));
  const common = [...(counts[0] ?? [])].filter((c) => counts.every((s) => s.has(c)));
  if (common.length === 0) return [];
  const top = Math.max(...common);
  return all.map((rs, i) => {
    const at = rs.filter((r) => r.clients === top).sort((a, b) => a.totals.qps - b.totals.qps);
    return { label: names[i] ?? loaded[i]!.name, result: at[(at.length - 1) >> 1]! };
  });
}

function compareCommand(args: string[], o: CompareOpts): number {
  if (args.length < 1)
    throw new UsageError(
      'compare needs a base and at least one candidate',
      'dbsmack compare BASE CAND [CAND…], or an experiment (its arms against its baseline)',
    );
  const renderers: Record<string, (r: ReturnType<typeof compareSeries>) => string> = {
    text: renderCompareText,
    markdown: renderCompareMarkdown,
    md: renderCompareMarkdown,
    csv: renderCompareCsv,
    json: (r) => `${JSON.stringify(r, null, 2)}\n`,
  };
  const render = renderers[o.format];
  if (!render)
    throw new UsageError(`unknown format '${o.format}' for compare`, 'formats: text, markdown, csv, json');
  if (o.out) checkOutputFile(o.out, '--out');
  const inputs = new DocumentReader(o.history);
  let result: ReturnType<typeof compareSeries>;
  let profiles: string | undefined;
  try {
    // an experiment stands for its arms, its baseline first
    const loaded = args.flatMap((a) => inputs.loadAll(a));
    if (loaded.length < 2)
      throw new UsageError(
        'compare needs a base and at least one candidate',
        'dbsmack compare BASE CAND [CAND…], or an experiment (its arms against its baseline)',
      );
    const series = loaded.map(seriesOf);
    distinctNames(series);
    const [base, ...cands] = series;
    result = compareSeries(base!, cands, { metric: o.metric, alpha: o.alpha, seed: o.seed });
    profiles = profileSideBySide(
      representativeRuns(
        loaded,
        series.map((s) => s.name),
      ),
    );
  } catch (e) {
    if (e instanceof CompareInputError)
      throw new UsageError(e.message, 'compare sweeps that share client counts');
    throw e;
  } finally {
    inputs.close();
  }
  process.stdout.write(render(result));
  if (profiles && o.format === 'text') process.stdout.write(`\n${profiles}`);
  else if (profiles && (o.format === 'markdown' || o.format === 'md'))
    process.stdout.write(`\n\`\`\`\n${profiles}\`\`\`\n`);
  // after the comparison is printed: a file that cannot be written loses nothing else
  if (o.out) writeResultFile(o.out, `${JSON.stringify(result, null, 2)}\n`);
  if (o.failBelow === undefined && o.failAbove === undefined) return EXIT.ok;
  const g = guard(result, o.failBelow, o.failAbove);
  const limit = [
    o.failBelow !== undefined ? `below ${o.failBelow}` : '',
    o.failAbove !== undefined ? `above ${o.failAbove}` : '',
  ]
    .filter(Boolean)
    .join(' or ');
  if (g.failed.length > 0) {
    say(`dbsmack: significant ratio ${limit}: ${g.failed.join('; ')}`);
    return EXIT.regression;
  }
  if (g.inconclusive.length > 0) {
    say(`dbsmack: ratio ${limit} that too few repeats cannot confirm: ${g.inconclusive.join('; ')}`);
    return EXIT.inconclusive;
  }
  return EXIT.ok;
}

/**
 * The wait profiles and thread statistics of the compared inputs side by side (one representative run
 * each, at the highest common client count), when any of them was profiled or ran a scheduling experiment.
 */
export function profileSideBySide(runs: LabelledResult[]): string | undefined {
  const profiled = runs.some((r) => {
    const p = r.result as ProfiledResult;
    return p.profile !== undefined || p.server_sched !== undefined;
  });
  if (!profiled) return undefined;
  const clients = runs[0]?.result.clients ?? 0;
  return `profiles side by side (one median run each at ${clients} client${clients === 1 ? '' : 's'}):\n${renderProfileComparison(runs)}`;
}

/** Define `compare` on the program; its action (`compareCommand`) hands its exit code to `exit`. */
export function registerCompare(program: Command, exit: ExitSink): void {
  const cmd = program
    .command('compare')
    .description(
      'compare candidates with a base per client count: ratio, Mann–Whitney p, bootstrap CI, verdict',
    )
    .argument(
      '<inputs...>',
      'BASE CAND [CAND…]: history labels, history ids, or JSON files (run or sweep); an experiment (its document or name) stands for its arms, baseline first',
    )
    .addOption(
      new Option('--metric <m>', 'what to compare')
        .choices(['qps', 'p95', 'p99'] as const)
        .default('qps' as const),
    )
    .option('--format <fmt>', 'text, markdown, csv or json (dbsmack/compare@1)', 'text')
    .option(
      '--fail-below <r>',
      `exit ${EXIT.regression} when any client count shows a significant ratio below R (${EXIT.inconclusive}: below R, but one run a side cannot tell)`,
      ratioArg('--fail-below'),
    )
    .option(
      '--fail-above <r>',
      `exit ${EXIT.regression} when any client count shows a significant ratio above R, for latency (${EXIT.inconclusive} as above)`,
      ratioArg('--fail-above'),
    )
    .option('--alpha <a>', 'significance level', alphaArg, 0.05)
    .option('--seed <n>', 'seed of the bootstrap', nonNegativeInt('--seed'), 1)
    .option('-o, --out <file>', 'also write the comparison JSON to FILE')
    .addOption(readHistoryOption())
    .option('--debug', 'print stack traces of errors');
  cmd.action((inputs, o) =>
    exit(
      compareCommand(inputs, {
        metric: o.metric,
        format: o.format,
        alpha: o.alpha,
        seed: o.seed,
        ...(o.failBelow !== undefined ? { failBelow: o.failBelow } : {}),
        ...(o.failAbove !== undefined ? { failAbove: o.failAbove } : {}),
        ...(o.out !== undefined ? { out: o.out } : {}),
        ...(o.history !== undefined ? { history: o.history } : {}),
      }),
    ),
  );
}
