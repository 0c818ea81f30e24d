/**
 * What `compare` compares: each argument is a JSON file (a RunResult, a sweep, or an array of RunResults),
 * a history id (`12`), or a history label (`nightly`, or `label:12` for a label that looks like an id).
 * A label means its newest sweep, or, when no sweep has it, every standalone run with it pooled by client
 * count (repeat `dbsmack run --label L` to build one up).
 */
import { existsSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { type Series, seriesFromRuns, seriesFromSweep } from '../analysis/compare.ts';
import { COMPARE_SCHEMA, SWEEP_SCHEMA, type SweepResult } from '../analysis/types.ts';
import { RUN_SCHEMA, type RunResult } from '../metrics/run-result.ts';
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

function seriesFromDoc(file: string, doc: unknown): { series: Series; label?: string } {
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
    return { series: seriesFromSweep(s.label || base, source, s), label: s.label };
  }
  if (isRun(doc)) {
    if (typeof doc.clients !== 'number' || typeof doc.totals?.qps !== 'number') {
      throw new InputError(`${file}: a run document without clients or totals`);
    }
    return {
      series: seriesFromRuns(doc.label ?? base, source, [doc]),
      ...(doc.label ? { label: doc.label } : {}),
    };
  }
  if (Array.isArray(doc) && doc.length > 0 && doc.every(isRun)) {
    return { series: seriesFromRuns(doc[0]?.label ?? base, source, doc) };
  }
  if (schema === COMPARE_SCHEMA) {
    throw new InputError(`${file} is a comparison (${COMPARE_SCHEMA}); compare runs or sweeps instead`);
  }
  throw new InputError(
    `${file} is not a dbsmack run or sweep (schema ${schema === undefined ? 'missing' : JSON.stringify(schema)})`,
    `expected "${RUN_SCHEMA}", "${SWEEP_SCHEMA}", or an array of runs`,
  );
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

  resolve(arg: string): Series {
    const isFile = existsSync(arg) && statSync(arg).isFile();
    if (isFile || (/\.json$/i.test(arg) && !arg.startsWith('label:'))) {
      if (!isFile) throw new InputError(`no such file: ${arg}`);
      return seriesFromDoc(arg, readJsonFile(arg)).series;
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
      if (e.kind === 'sweep') return seriesFromSweep(name, `sweep ${id}`, h.sweep(id)!);
      return seriesFromRuns(name, `run ${id}`, [h.run(id)!]);
    }
    const label = arg.startsWith('label:') ? arg.slice(6) : arg;
    const h = this.openHistory(arg);
    const sweepId = h.latestSweepWithLabel(label);
    if (sweepId !== undefined)
      return seriesFromSweep(label, `label ${label}: sweep ${sweepId}`, h.sweep(sweepId)!);
    const runs = h.runsWithLabel(label);
    if (runs.length > 0)
      return seriesFromRuns(label, `label ${label}: ${runs.length} run${runs.length > 1 ? 's' : ''}`, runs);
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
