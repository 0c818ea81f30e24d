import { InputError } from '../../errors.ts';

/** A script's text and the name it is shown under (`file.sql`, `<builtin: TPC-B (sort of)>`). */
export interface Source {
  readonly name: string;
  readonly text: string;
  /** Offsets where each line starts. */
  readonly lines: readonly number[];
}

export function makeSource(name: string, text: string): Source {
  const lines = [0];
  for (let i = 0; i < text.length; i++) if (text.charCodeAt(i) === 10) lines.push(i + 1);
  return { name, text, lines };
}

/** 1-based line and column of an offset. */
export function lineCol(src: Source, offset: number): { line: number; col: number } {
  let lo = 0;
  let hi = src.lines.length - 1;
  while (lo < hi) {
    const mid = (lo + hi + 1) >> 1;
    if ((src.lines[mid] as number) <= offset) lo = mid;
    else hi = mid - 1;
  }
  return { line: lo + 1, col: offset - (src.lines[lo] as number) + 1 };
}

/**
 * A mistake in a pgbench script found before the run: `FILE:LINE:COLUMN: message`. An `InputError`, so the
 * CLI prints one line and exits with 2.
 */
export class PgbenchScriptError extends InputError {
  readonly file: string;
  readonly line: number;
  readonly col: number;
  constructor(file: string, line: number, col: number, message: string, hint?: string) {
    super(`${file}:${line}:${col}: ${message}`, hint);
    this.file = file;
    this.line = line;
    this.col = col;
  }
}

export function errorAt(src: Source, offset: number, message: string, hint?: string): PgbenchScriptError {
  const { line, col } = lineCol(src, offset);
  return new PgbenchScriptError(src.name, line, col, message, hint);
}
