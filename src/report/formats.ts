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
  /** The head and interval lines were printed live (`--format sysbench` on a terminal): leave them out. */
  liveIntervals?: boolean;
}

export type RunRenderer = (r: RunResult, o: RenderOptions) => string;

/** A part of the text report that follows the summary when its data is there (the profile). */
export type TextSection = (r: RunResult) => string | undefined;
const textSections: TextSection[] = [];

/** Add a section below the text summary of every run; it returns undefined when it has nothing to say. */
export function registerTextSection(section: TextSection): void {
  if (!textSections.includes(section)) textSections.push(section);
}

function withSections(text: string, r: RunResult, o: RenderOptions): string {
  if (o.classic) return text;
  const extra = textSections.map((s) => s(r)).filter((s): s is string => s !== undefined && s !== '');
  return [text, ...extra].join('\n');
}

const formats = new Map<string, RunRenderer>([
  ['text', (r, o) => withSections(o.workload?.renderText?.(r, o) ?? renderRunText(r), r, o)],
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
