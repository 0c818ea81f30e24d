/**
 * What `dbsmack report` reads. Every input is resolved by `resolveReportInputs`, the one place that turns
 * command-line words into documents: today JSON files of the run, sweep or compare schema. History ids and
 * labels (and computing a comparison on the fly) plug in here without touching the renderers.
 */
import { readFileSync } from 'node:fs';
import { COMPARE_SCHEMA, type CompareResult, SWEEP_SCHEMA, type SweepResult } from '../analysis/types.ts';
import { InputError } from '../cli/errors.ts';
import { RUN_SCHEMA, type RunResult } from '../metrics/run-result.ts';
import { findJsonFault } from './json-error.ts';

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

/** Line and column of a character offset, 1-based, for error messages that point into a file. */
function lineCol(text: string, offset: number): string {
  const before = text.slice(0, offset);
  const line = before.split('\n').length;
  const col = offset - before.lastIndexOf('\n');
  return `${line}:${col}`;
}

/** Parse JSON and name FILE:LINE:COLUMN when it is malformed. */
export function parseJsonFile(source: string, text: string): unknown {
  try {
    return JSON.parse(text);
  } catch (e) {
    const fault = findJsonFault(text);
    const where = fault ? `${source}:${lineCol(text, fault.offset)}` : source;
    throw new InputError(
      `${where}: not valid JSON: ${fault?.message ?? (e as Error).message}`,
      'pass a file written by `dbsmack run --out`, `dbsmack sweep` or `dbsmack compare`',
    );
  }
}

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
    const family = /^dbsmack\/(run|sweep|compare)@(.+)$/.exec(schema);
    const reason = family
      ? `schema ${schema} is a version this dbsmack does not read (it reads ${family[1] === 'run' ? RUN_SCHEMA : family[1] === 'sweep' ? SWEEP_SCHEMA : COMPARE_SCHEMA})`
      : `unknown schema ${JSON.stringify(schema)}`;
    return { source, reason };
  }
  return { kind, source, doc } as ReportInput;
}

/**
 * Turn the report's INPUT arguments into documents. A file that is missing or not JSON is a user error
 * (exit 2); a readable document of a schema this version cannot show is reported as skipped.
 */
export async function resolveReportInputs(args: readonly string[]): Promise<ReportInputs> {
  const out: ReportInputs = { inputs: [], skipped: [] };
  for (const arg of args) {
    let text: string;
    try {
      text = readFileSync(arg, 'utf8');
    } catch (e) {
      const code = (e as NodeJS.ErrnoException).code;
      throw new InputError(
        `cannot read ${arg}: ${code === 'ENOENT' ? 'no such file' : code === 'EISDIR' ? 'is a directory' : (e as Error).message}`,
        'INPUT is a JSON file from `dbsmack run --out`, `dbsmack sweep --out` or `dbsmack compare --out`',
      );
    }
    const r = classifyDocument(arg, parseJsonFile(arg, text));
    if ('kind' in r) out.inputs.push(r);
    else out.skipped.push(r);
  }
  return out;
}
