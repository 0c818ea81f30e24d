/**
 * Output formats of a run on stdout (`--format`): one static table from a format's name to its renderer,
 * written out here rather than registered by the parts that bring one, so that what `--format` takes does
 * not depend on which modules happen to be imported. A workload may bring its own text layout (a smack
 * file's Query Barrel Report); the text layout of every run is followed by its sections (the profile).
 */
import type { RunResult } from '../metrics/run-result.ts';
import type { Workload } from '../workload/types.ts';
import { renderBarrelReport } from './barrel.ts';
import { renderPgbench } from './pgbench.ts';
import { renderProfileText } from './profile.ts';
import { renderSysbench } from './sysbench.ts';
import { renderRunText } from './text.ts';

export interface RenderOptions {
  workload?: Workload;
  /** Only the classic layout, without dbsmack's additions (smack `--classic`). */
  classic?: boolean;
  /** The head and interval lines were printed live (`--format sysbench` on a terminal): leave them out. */
  liveIntervals?: boolean;
}

export type RunRenderer = (r: RunResult, o: RenderOptions) => string;

/** A part of the text report that follows the summary when its data is there; undefined when it has nothing to say. */
export type TextSection = (r: RunResult) => string | undefined;

/** The sections below the text summary of every run, in the order they are printed. */
const TEXT_SECTIONS: readonly TextSection[] = [renderProfileText];

function withSections(text: string, r: RunResult, o: RenderOptions): string {
  if (o.classic) return text;
  const extra = TEXT_SECTIONS.map((s) => s(r)).filter((s): s is string => s !== undefined && s !== '');
  return [text, ...extra].join('\n');
}

/** The text layouts a workload may name instead of the run summary (`Workload.textLayout`). */
const TEXT_LAYOUTS: Readonly<Record<NonNullable<Workload['textLayout']>, RunRenderer>> = {
  barrel: (r, o) => renderBarrelReport(r, o.classic === true),
};

function textOf(r: RunResult, o: RenderOptions): string {
  const layout = o.workload?.textLayout;
  return layout !== undefined ? TEXT_LAYOUTS[layout](r, o) : renderRunText(r);
}

/** Every format `--format` takes, in the order `formatNames` lists them. */
const FORMATS: Readonly<Record<string, RunRenderer>> = {
  text: (r, o) => withSections(textOf(r, o), r, o),
  json: (r) => `${JSON.stringify(r, null, 2)}\n`,
  sysbench: (r, o) => renderSysbench(r, o),
  pgbench: (r) => renderPgbench(r),
};

export function formatNames(): string[] {
  return Object.keys(FORMATS);
}

export function getFormat(name: string): RunRenderer | undefined {
  return Object.hasOwn(FORMATS, name) ? FORMATS[name] : undefined;
}
