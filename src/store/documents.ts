/**
 * The one reader of result documents, below the commands and the reports: JSON files (a RunResult, a
 * sweep, an array of RunResults, an experiment) and the history's ids (`12`) and labels (`nightly`, or
 * `label:12` for a label that looks like an id). `compare`, `report`, `show`, `sweep --resume` and
 * `experiment` all read through here. A label means its newest sweep, or, when no sweep has it, every
 * standalone run with it pooled by client count (repeat `dbsmack run --label L` to build one up).
 */
import { existsSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { EXPERIMENT_SCHEMA, experimentSweeps, isExperimentDocument } from '../analysis/experiment.ts';
import { COMPARE_SCHEMA, SWEEP_SCHEMA, type SweepResult } from '../analysis/types.ts';
import { InputError, UsageError } from '../errors.ts';
import { RUN_SCHEMA, type RunResult } from '../metrics/run-result.ts';
import { History, type HistoryEntry, HistoryError } from './history.ts';
import { historyPathFrom } from './history-path.ts';
import { findJsonFault, lineColumn } from './json-position.ts';

/**
 * How a reader words a file it cannot read or parse. Two wordings are in use and kept as they are: the
 * commands that read a result they go on with (compare, `sweep --resume`, experiment: `RESULT_FILE`) and
 * `report`, which reads whatever it is given (`REPORT_INPUT`).
 */
export interface JsonFileWords {
  /** The fault in the words of JSON.parse (`parser`) or of the scanner of json-position.ts (`scanner`). */
  fault: 'parser' | 'scanner';
  /** The hint below a file that is not valid JSON. */
  notJsonHint: string;
  /** When set: an unreadable file's reason in short words (no such file, is a directory), and this hint. */
  unreadableHint?: string;
}

export const RESULT_FILE: JsonFileWords = {
  fault: 'parser',
  notJsonHint: 'compare takes a run (--out of dbsmack run) or a sweep (--out of dbsmack sweep)',
};

export const REPORT_INPUT: JsonFileWords = {
  fault: 'scanner',
  notJsonHint: 'pass a file written by `dbsmack run --out`, `dbsmack sweep` or `dbsmack compare`',
  unreadableHint:
    'INPUT is a JSON file from `dbsmack run --out`, `dbsmack sweep --out` or `dbsmack compare --out`, a history id or a label',
};

/** Parse a JSON file; a syntax error names FILE:LINE:COLUMN. */
export function readJsonFile(file: string, words: JsonFileWords = RESULT_FILE): unknown {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (e) {
    if (words.unreadableHint === undefined)
      throw new InputError(`cannot read ${file}: ${(e as Error).message}`);
    const code = (e as NodeJS.ErrnoException).code;
    throw new InputError(
      `cannot read ${file}: ${code === 'ENOENT' ? 'no such file' : code === 'EISDIR' ? 'is a directory' : (e as Error).message}`,
      words.unreadableHint,
    );
  }
  try {
    return JSON.parse(text);
  } catch (e) {
    const fault = findJsonFault(text);
    if (words.fault === 'scanner') {
      const where = fault ? `${file}:${lineColumn(text, fault.offset)}` : file;
      throw new InputError(
        `${where}: not valid JSON: ${fault?.message ?? (e as Error).message}`,
        words.notJsonHint,
      );
    }
    const msg = (e as Error).message
      .replace(/, (\.\.\.)?"[\s\S]*" is not valid JSON$/, '')
      .replace(/ in JSON at position \d+.*$/, '');
    const where = lineColumn(text, fault?.offset ?? text.length);
    throw new InputError(`${file}:${where}: not valid JSON: ${msg}`, words.notJsonHint);
  }
}

const isRun = (x: unknown): x is RunResult =>
  typeof x === 'object' && x !== null && (x as { schema?: unknown }).schema === RUN_SCHEMA;

/**
 * What one argument names, as documents: a sweep, or runs pooled by client count. `compare` turns it into a
 * `Series` (`seriesOf` in cli/compare.ts); `report` draws the documents themselves.
 */
export type LoadedInput =
  | { kind: 'sweep'; name: string; source: string; doc: SweepResult }
  | { kind: 'runs'; name: string; source: string; docs: RunResult[] };

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

/**
 * Reads result documents from files and the history, opening the history only when an argument needs it
 * (`--history PATH`, false for `--no-history`, undefined for the default). Close it when done.
 */
export class DocumentReader {
  private opened: History | undefined;
  constructor(private readonly historyOpt: string | boolean | undefined) {}

  /**
   * The history, opened for reading. `what` is the argument that sent us there (a file it is not), which
   * its errors then name; without it (`show`, `history`) they are the history's own.
   */
  private openHistory(what?: string): History {
    if (this.opened) return this.opened;
    const file = historyPathFrom(this.historyOpt);
    if (file === undefined && what !== undefined)
      throw new UsageError(`'${what}' is not a file, and --no-history leaves no history to look it up in`);
    try {
      this.opened = History.open(file as string, { create: false });
    } catch (e) {
      if (e instanceof HistoryError) {
        throw new InputError(
          what === undefined ? e.message : `'${what}' is not a file, and ${e.message}`,
          e.hint,
        );
      }
      throw e;
    }
    return this.opened;
  }

  /** The history itself (`dbsmack history` lists it). */
  history(): History {
    return this.openHistory();
  }

  /** The run or sweep recorded under `id`, with its entry; `what` as for the history's errors. */
  recorded(id: number, what?: string): { entry: HistoryEntry; doc: RunResult | SweepResult } {
    const h = this.openHistory(what);
    const entry = h.entry(id);
    if (!entry)
      throw new InputError(
        `no run or sweep with id ${id} in the history ${h.path}`,
        'see dbsmack history --all',
      );
    return { entry, doc: entry.kind === 'sweep' ? h.sweep(id)! : h.run(id)! };
  }

  close(): void {
    this.opened?.close();
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
      const id = Number(arg);
      const { entry: e, doc } = this.recorded(id, arg);
      const name = `${e.label ?? e.kind}#${id}`;
      if (e.kind === 'sweep') return { kind: 'sweep', name, source: `sweep ${id}`, doc: doc as SweepResult };
      return { kind: 'runs', name, source: `run ${id}`, docs: [doc as RunResult] };
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
