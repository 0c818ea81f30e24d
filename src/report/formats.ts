/**
 * Output formats of a run on stdout (`--format`). `text` and `json` are built in; other parts register theirs
 * (`sysbench`). A workload may bring its own text layout (a smack file's Query Barrel Report).
 */
import type { RunResult } from '../metrics/run-result.ts';
import type { Workload } from '../workload/types.ts';
import { renderRunText } from './text.ts';

export interface RenderOptions {
  workload?: Workload;
  /** Only the classic layout, without dbsmack's additions (smack `--classic`). */
  classic?: boolean;
}

export type RunRenderer = (r: RunResult, o: RenderOptions) => string;

const formats = new Map<string, RunRenderer>([
  ['text', (r, o) => o.workload?.renderText?.(r, o) ?? renderRunText(r)],
  ['json', (r) => `${JSON.stringify(r, null, 2)}\n`],
]);

export function registerFormat(name: string, render: RunRenderer): void {
  formats.set(name, render);
}

export function formatNames(): string[] {
  return [...formats.keys()];
}

export function getFormat(name: string): RunRenderer | undefined {
  return formats.get(name);
}
