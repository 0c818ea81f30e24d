/**
 * What `dbsmack report` reads. Every input is resolved by `resolveReportInputs`, the one place that turns
 * command-line words into documents: JSON files of the run, sweep or compare schema, and history ids and
 * labels, read by `store/documents.ts` as `dbsmack compare` reads them. When two or more labels are given
 * and no comparison among them, the comparison is computed here by the same code as `dbsmack compare`, so the
 * report's ratio table is the one compare prints.
 */
import {
  CompareInputError,
  compareSeries,
  type Metric,
  type Series,
  seriesFromRuns,
  seriesFromSweep,
} from '../analysis/compare.ts';
import { EXPERIMENT_SCHEMA } from '../analysis/experiment.ts';
import { COMPARE_SCHEMA, type CompareResult, SWEEP_SCHEMA, type SweepResult } from '../analysis/types.ts';
import { RUN_SCHEMA, type RunResult } from '../metrics/run-result.ts';
import {
  DocumentReader,
  experimentInputs,
  isFileArgument,
  REPORT_INPUT,
  readJsonFile,
} from '../store/documents.ts';

export type ReportInput =
  | { kind: 'run'; source: string; doc: RunResult }
  | { kind: 'sweep'; source: string; doc: SweepResult }
  | { kind: 'compare'; source: string; doc: CompareResult };

export interface ReportInputs {
  inputs: ReportInput[];
  /** Inputs that were read but cannot be shown (unknown schema or version), in words for the report. */
  skipped: { source: string; reason: string }[];
}

const KNOWN: Record<string, ReportInput['kind']> = {
  [RUN_SCHEMA]: 'run',
  [SWEEP_SCHEMA]: 'sweep',
  [COMPARE_SCHEMA]: 'compare',
};

/**
 * Classify one parsed document. Unknown schemas and other versions of ours are skipped with a reason
 * rather than guessed at: a report shows what it can read and says what it could not.
 */
export function classifyDocument(
  source: string,
  doc: unknown,
): ReportInput | { source: string; reason: string } {
  if (doc === null || typeof doc !== 'object' || Array.isArray(doc)) {
    return { source, reason: 'not a JSON object (expected a dbsmack run, sweep or compare document)' };
  }
  const schema = (doc as { schema?: unknown }).schema;
  if (typeof schema !== 'string') {
    return {
      source,
      reason: 'no "schema" field (expected dbsmack/run@1, dbsmack/sweep@1 or dbsmack/compare@1)',
    };
  }
  const kind = KNOWN[schema];
  if (kind === undefined) {
    const family = /^dbsmack\/(run|sweep|compare|experiment)@(.+)$/.exec(schema);
    const reads: Record<string, string> = {
      run: RUN_SCHEMA,
      sweep: SWEEP_SCHEMA,
      compare: COMPARE_SCHEMA,
      experiment: EXPERIMENT_SCHEMA,
    };
    const reason = family
      ? `schema ${schema} is a version this dbsmack does not read (it reads ${reads[family[1] as string]})`
      : `unknown schema ${JSON.stringify(schema)}`;
    return { source, reason };
  }
  return { kind, source, doc } as ReportInput;
}

export interface ResolveReportOptions {
  /** `--history PATH`, or false for `--no-history`; undefined: the default history. */
  history?: string | boolean;
  /** The metric of a computed comparison (default qps). */
  metric?: Metric;
  /** Significance level and bootstrap seed of a computed comparison, as `dbsmack compare` takes them. */
  alpha?: number;
  seed?: number;
}

/** The label a run goes by in the report (the model groups by it; a computed comparison must agree). */
export function reportRunLabel(r: RunResult): string {
  return r.label ?? `${r.workload?.name ?? 'run'} on ${r.target?.driver ?? '?'}`;
}

/**
 * The comparison of the inputs' labels, first label the base, computed by compare's own code; undefined
 * when fewer than two labels have runs. A label's newest sweep stands for it, as in `dbsmack compare`.
 */
export function computeComparison(
  inputs: readonly ReportInput[],
  o: ResolveReportOptions = {},
): CompareResult | undefined {
  const sweeps = new Map<string, { source: string; doc: SweepResult }>();
  const runs = new Map<string, { sources: string[]; docs: RunResult[] }>();
  const order: string[] = [];
  for (const i of inputs) {
    if (i.kind === 'compare') continue;
    const label = i.kind === 'sweep' ? (i.doc.label ?? i.source) : reportRunLabel(i.doc);
    if (!order.includes(label)) order.push(label);
    if (i.kind === 'sweep') sweeps.set(label, { source: i.source, doc: i.doc });
    else {
      const g = runs.get(label) ?? { sources: [], docs: [] };
      if (!g.sources.includes(i.source)) g.sources.push(i.source);
      g.docs.push(i.doc);
      runs.set(label, g);
    }
  }
  if (order.length < 2) return undefined;
  const series: Series[] = order.map((label) => {
    const sw = sweeps.get(label);
    if (sw) return seriesFromSweep(label, sw.source, sw.doc);
    const g = runs.get(label)!;
    return seriesFromRuns(label, g.sources.join(', '), g.docs);
  });
  const [base, ...cands] = series;
  return compareSeries(base!, cands, {
    metric: o.metric ?? 'qps',
    alpha: o.alpha ?? 0.05,
    seed: o.seed ?? 1,
  });
}

/**
 * Turn the report's INPUT arguments into documents: JSON files, history ids and labels. A file that is
 * missing or not JSON, an unknown id or label is a user error (exit 2); a readable document of a schema
 * this version cannot show is reported as skipped. With two or more labels and no comparison document,
 * the comparison is computed (see `computeComparison`); labels with no client count in common are noted.
 */
export async function resolveReportInputs(
  args: readonly string[],
  o: ResolveReportOptions = {},
): Promise<ReportInputs> {
  const out: ReportInputs = { inputs: [], skipped: [] };
  const history = new DocumentReader(o.history);
  try {
    for (const arg of args) {
      if (isFileArgument(arg)) {
        const parsed = readJsonFile(arg, REPORT_INPUT);
        // an experiment document: its arms, as sweeps (baseline first)
        const arms = experimentInputs(arg, parsed);
        if (arms) {
          for (const l of arms)
            if (l.kind === 'sweep') out.inputs.push({ kind: 'sweep', source: l.source, doc: l.doc });
          continue;
        }
        const r = classifyDocument(arg, parsed);
        if ('kind' in r) out.inputs.push(r);
        else out.skipped.push(r);
        continue;
      }
      for (const l of history.loadAll(arg)) {
        if (l.kind === 'sweep') out.inputs.push({ kind: 'sweep', source: l.source, doc: l.doc });
        else for (const doc of l.docs) out.inputs.push({ kind: 'run', source: l.source, doc });
      }
    }
  } finally {
    history.close();
  }
  if (!out.inputs.some((i) => i.kind === 'compare')) {
    try {
      const doc = computeComparison(out.inputs, o);
      if (doc) {
        out.inputs.push({
          kind: 'compare',
          source: `computed as by dbsmack compare ${[doc.base, ...doc.candidates].join(' ')}${doc.metric !== 'qps' ? ` --metric ${doc.metric}` : ''}`,
          doc,
        });
      }
    } catch (e) {
      if (!(e instanceof CompareInputError)) throw e;
      out.skipped.push({ source: 'comparison', reason: `no ratio table: ${e.message}` });
    }
  }
  return out;
}
