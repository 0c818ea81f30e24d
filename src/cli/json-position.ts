/**
 * Where a JSON text first goes wrong, as FILE:LINE:COLUMN material. Node 20's `JSON.parse` names no
 * position for many errors; the scanner that finds it lives in report/json-error.ts and serves both the
 * compare and the report inputs.
 */
import { findJsonFault } from '../report/json-error.ts';

/** Offset of the first syntax error in `text`, or undefined when it is valid JSON. */
export function jsonErrorOffset(text: string): number | undefined {
  return findJsonFault(text)?.offset;
}

/** 1-based `LINE:COLUMN` of an offset. */
export function lineColumn(text: string, offset: number): string {
  const before = text.slice(0, offset);
  const line = before.split('\n').length;
  return `${line}:${offset - before.lastIndexOf('\n')}`;
}
