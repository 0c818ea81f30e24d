/**
 * What `compare` compares: each argument is a JSON file (a RunResult, a sweep, or an array of RunResults),
 * a history id (`12`), or a history label (`nightly`, or `label:12` for a label that looks like an id).
 * A label means its newest sweep, or, when no sweep has it, every standalone run with it pooled by client
 * count (repeat `dbsmack run --label L` to build one up).
 */
import { existsSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { type Series, seriesFromRuns, seriesFromSweep } from '../analysis/compare.ts';
import { EXPERIMENT_SCHEMA, experimentSweeps, isExperimentDocument } from '../analysis/experiment.ts';
import { COMPARE_SCHEMA, SWEEP_SCHEMA, type SweepResult } from '../analysis/types.ts';
import { RUN_SCHEMA, type RunResult } from '../metrics/run-result.ts';
import type { LabelledResult } from '../report/profile.ts';
import { History, HistoryError } from '../store/history.ts';
import { historyPathFrom } from '../store/history-path.ts';
import { InputError, UsageError } from './errors.ts';
import { jsonErrorOffset, lineColumn } from './json-position.ts';

/** Parse a JSON file; a syntax error names FILE:LINE:COLUMN. */
export function readJsonFile(file: string): unknown {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (e) {
    throw new InputError(`cannot read ${file}: ${(e as Error).message}`);
  }
  try {
    return JSON.parse(text);
  } catch (e) {
    const msg = (e as Error).message
      .replace(/, (\.\.\.)?"[\s\S]*" is not valid JSON$/, '')
      .replace(/ in JSON at position \d+.*$/, '');
    const where = lineColumn(text, jsonErrorOffset(text) ?? text.length);
    throw new InputError(
      `${file}:${where}: not valid JSON: ${msg}`,
      'compare takes a run (--out of dbsmack run) or a sweep (--out of dbsmack sweep)',
    );
  }
}

const isRun = (x: unknown): x is RunResult =>
  typeof x === 'object' && x !== null && (x as { schema?: unknown }).schema === RUN_SCHEMA;

/**
 * What one argument names, as documents: a sweep, or runs pooled by client count. `compare` turns it into a
 * `Series`; `report` draws the documents themselves.
 */
export type LoadedInput =
  | { kind: 'sweep'; name: string; source: string; doc: SweepResult }
  | { kind: 'runs'; name: string; source: string; docs: RunResult[] };

/** The `Series` compare computes on, from a loaded input. */
export function seriesOf(l: LoadedInput): Series {
  return l.kind === 'sweep'
    ? seriesFromSweep(l.name, l.source, l.doc)
    : seriesFromRuns(l.name, l.source, l.docs);
}

function loadDoc(file: string, doc: unknown): LoadedInput {
  const base = path.basename(file);
  const source = `file ${file}`;
  const schema = (doc as { schema?: unknown } | null)?.schema;
  if (schema === SWEEP_SCHEMA) {
    const s = doc as SweepResult;
    const valid = (p: SweepResult['points'][number]): boolean =>
      typeof p?.clients === 'number' &&
      Array.isArray(p.runs) &&
      p.runs.every(
        (r) => typeof r?.qps === 'number' && typeof r.p95_ms === 'number' && typeof r.status === 'string',
      );
    if (!Array.isArray(s.points) || !s.points.every(valid)) {
      throw new InputError(
        `${file}: a sweep document without valid points (each needs clients, and runs with status, qps and p95_ms)`,
      );
    }
    return { kind: 'sweep', name: s.label || base, source, doc: s };
  }
  if (isRun(doc)) {
    if (typeof doc.clients !== 'number' || typeof doc.totals?.qps !== 'number') {
      throw new InputError(`${file}: a run document without clients or totals`);
    }
    return { kind: 'runs', name: doc.label ?? base, source, docs: [doc] };
  }
  if (Array.isArray(doc) && doc.length > 0 && doc.every(isRun)) {
    return { kind: 'runs', name: doc[0]?.label ?? base, source, docs: doc };
  }
  if (schema === COMPARE_SCHEMA) {
    throw new InputError(`${file} is a comparison (${COMPARE_SCHEMA}); compare runs or sweeps instead`);
  }
  throw new InputError(
    `${file} is not a dbsmack run, sweep or experiment (schema ${schema === undefined ? 'missing' : JSON.stringify(schema)})`,
    `expected "${RUN_SCHEMA}", "${SWEEP_SCHEMA}", "${EXPERIMENT_SCHEMA}", or an array of runs`,
  );
}

/**
 * The arms of an experiment document (`dbsmack experiment --out`) as sweeps, the baseline first, each named
 * by its arm; undefined when `doc` is not an experiment.
 */
export function experimentInputs(file: string, doc: unknown): LoadedInput[] | undefined {
  if ((doc as { schema?: unknown } | null)?.schema !== EXPERIMENT_SCHEMA) return undefined;
  if (!isExperimentDocument(doc))
    throw new InputError(
      `${file}: an experiment document without valid arms (each needs a label, and runs with clients, status and qps)`,
    );
  const arms = experimentSweeps(doc);
  if (arms.length === 0) throw new InputError(`${file}: the experiment ${doc.name} has no runs yet`);
  return arms.map(({ arm, sweep }) => ({
    kind: 'sweep',
    name: arm,
    source: `file ${file}, arm ${arm}`,
    doc: sweep,
  }));
}

/** Whether compare and report take ARG for a file rather than a history id or label. */
export function isFileArgument(arg: string): boolean {
  const isFile = existsSync(arg) && statSync(arg).isFile();
  return isFile || (/\.json$/i.test(arg) && !arg.startsWith('label:'));
}

/** Loads inputs, opening the history only when an argument needs it. */
export class InputResolver {
  private history: History | undefined;
  constructor(private readonly historyOpt: string | boolean | undefined) {}

  private openHistory(what: string): History {
    if (this.history) return this.history;
    const file = historyPathFrom(this.historyOpt);
    if (file === undefined)
      throw new UsageError(`'${what}' is not a file, and --no-history leaves no history to look it up in`);
    try {
      this.history = History.open(file, { create: false });
    } catch (e) {
      if (e instanceof HistoryError) {
        throw new InputError(`'${what}' is not a file, and ${e.message}`, e.hint);
      }
      throw e;
    }
    return this.history;
  }

  close(): void {
    this.history?.close();
  }

  /** Resolve an argument to the series compare computes on. */
  resolve(arg: string): Series {
    return seriesOf(this.load(arg));
  }

  /**
   * Resolve an argument to its inputs: one, or every arm of an experiment (a document, or an experiment's
   * name in the history: the newest sweep of each of its arms `NAME/ARM`), the baseline first.
   */
  loadAll(arg: string): LoadedInput[] {
    if (isFileArgument(arg)) {
      if (!(existsSync(arg) && statSync(arg).isFile())) throw new InputError(`no such file: ${arg}`);
      const doc = readJsonFile(arg);
      return experimentInputs(arg, doc) ?? [loadDoc(arg, doc)];
    }
    if (!/^\d+$/.test(arg) && !arg.startsWith('label:')) {
      const h = this.openHistory(arg);
      if (h.latestSweepWithLabel(arg) === undefined && h.runsWithLabel(arg).length === 0) {
        const arms = h.experimentSweeps(arg);
        if (arms.length > 0)
          return arms.map(({ id, doc }) => ({
            kind: 'sweep',
            name: doc.experiment?.arm ?? doc.label,
            source: `experiment ${arg}: sweep ${id}`,
            doc,
          }));
      }
    }
    return [this.load(arg)];
  }

  /** Resolve an argument to its documents: a file, a history id, or a history label. */
  load(arg: string): LoadedInput {
    if (isFileArgument(arg)) {
      if (!(existsSync(arg) && statSync(arg).isFile())) throw new InputError(`no such file: ${arg}`);
      const doc = readJsonFile(arg);
      const arms = experimentInputs(arg, doc);
      if (arms) throw new InputError(`${arg} is an experiment of ${arms.length} arms, not one input`);
      return loadDoc(arg, doc);
    }
    if (/^\d+$/.test(arg)) {
      const h = this.openHistory(arg);
      const id = Number(arg);
      const e = h.entry(id);
      if (!e)
        throw new InputError(
          `no run or sweep with id ${id} in the history ${h.path}`,
          'see dbsmack history --all',
        );
      const name = `${e.label ?? e.kind}#${id}`;
      if (e.kind === 'sweep') return { kind: 'sweep', name, source: `sweep ${id}`, doc: h.sweep(id)! };
      return { kind: 'runs', name, source: `run ${id}`, docs: [h.run(id)!] };
    }
    const label = arg.startsWith('label:') ? arg.slice(6) : arg;
    const h = this.openHistory(arg);
    const sweepId = h.latestSweepWithLabel(label);
    if (sweepId !== undefined)
      return {
        kind: 'sweep',
        name: label,
        source: `label ${label}: sweep ${sweepId}`,
        doc: h.sweep(sweepId)!,
      };
    const runs = h.runsWithLabel(label);
    if (runs.length > 0)
      return {
        kind: 'runs',
        name: label,
        source: `label ${label}: ${runs.length} run${runs.length > 1 ? 's' : ''}`,
        docs: runs,
      };
    const known = h.labels();
    throw new InputError(
      `no label '${label}' in the history ${h.path}, and no such file`,
      known.length > 0
        ? `labels there: ${known.join(', ')}`
        : 'the history has no labelled runs yet (--label NAME)',
    );
  }
}

/** Give every input a distinct name: a repeated one gets ` (2)`, ` (3)` … */
export function distinctNames(series: Series[]): void {
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
export function representativeRuns(
  loaded: readonly LoadedInput[],
  names: readonly string[],
): LabelledResult[] {
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
