/**
 * `dbsmack report INPUT... --html FILE`: a report people would rather look at. Reads run, sweep and
 * compare documents (resolved by `resolveReportInputs`), draws the charts to SVG and writes an offline HTML
 * page, chart images and/or Markdown. vega is loaded only here, lazily.
 */
import path from 'node:path';
import { type Command, Option } from '@commander-js/extra-typings';
import type { Metric } from '../analysis/compare.ts';
import { redactSecrets } from '../driver/redact.ts';
import { EXIT, InputError, UsageError } from '../errors.ts';
import { reportCharts } from '../report/charts.ts';
import { renderHtml } from '../report/html.ts';
import { resolveReportInputs } from '../report/inputs.ts';
import { renderMarkdown } from '../report/markdown.ts';
import { buildReportModel } from '../report/model.ts';
import { svgToPng } from '../report/png.ts';
import { renderCharts } from '../report/render-svg.ts';
import type { ExitSink } from './command.ts';
import { HISTORY_DEFAULT, helpDefault } from './help.ts';
import { checkOutputDir, checkOutputFile, ensureOutputDir, say, writeOutputFile } from './output.ts';

export interface ReportOptions {
  html?: string;
  svg?: string;
  png?: string;
  markdown?: string;
  title?: string;
  history?: string | boolean;
  metric?: Metric;
}

/** Write one output file whole (see writeOutputFile); an OutputError names it. */
function writeOut(file: string, content: string | Buffer): void {
  writeOutputFile(file, typeof content === 'string' ? redactSecrets(content) : content);
}

/** The Markdown's images go where --png or --svg put them, else into FILE's sibling folder `NAME-charts`. */
function markdownImageDir(o: ReportOptions): { dir: string; ext: 'png' | 'svg' } {
  if (o.png) return { dir: o.png, ext: 'png' };
  if (o.svg) return { dir: o.svg, ext: 'svg' };
  const md = o.markdown!;
  return { dir: `${md.replace(/\.(md|markdown)$/i, '')}-charts`, ext: 'svg' };
}

/** Run the report command; throws user errors (exit 2) for bad inputs and options. */
/** `report`'s action: every output written; its exit code (a failure is thrown as a user error). */
export async function reportCommand(args: readonly string[], o: ReportOptions): Promise<number> {
  if (!o.html && !o.svg && !o.png && !o.markdown) {
    throw new UsageError('nothing to write', 'give --html FILE, --markdown FILE, --svg DIR and/or --png DIR');
  }
  // Every output is checked before the inputs are read and the charts drawn; nothing is created but the
  // chart directories themselves (a missing parent directory is an error, not a silent mkdir).
  if (o.html) checkOutputFile(o.html, '--html');
  if (o.markdown) checkOutputFile(o.markdown, '--markdown');
  if (o.svg) checkOutputDir(o.svg, '--svg');
  if (o.png) checkOutputDir(o.png, '--png');
  if (o.markdown && !o.png && !o.svg)
    checkOutputDir(markdownImageDir(o).dir, "the Markdown's chart directory");
  const resolved = await resolveReportInputs(args, {
    ...(o.history !== undefined ? { history: o.history } : {}),
    ...(o.metric !== undefined ? { metric: o.metric } : {}),
  });
  if (resolved.inputs.length === 0) {
    throw new InputError(
      `no input can be shown: ${resolved.skipped.map((s) => `${s.source}: ${s.reason}`).join('; ')}`,
      'INPUT is a JSON file from `dbsmack run --out`, `dbsmack sweep --out` or `dbsmack compare --out`, a history id or a label',
    );
  }
  const model = buildReportModel(resolved);
  if (o.title) model.title = o.title;
  const charts = await renderCharts(reportCharts(model));

  if (o.html) {
    writeOut(o.html, renderHtml(model, charts));
    say(`dbsmack: wrote ${o.html} (${charts.length} chart${charts.length === 1 ? '' : 's'})`);
  }
  const svgDir = o.svg ?? (o.markdown && !o.png ? markdownImageDir(o).dir : undefined);
  if (svgDir) {
    ensureOutputDir(svgDir);
    for (const c of charts) writeOut(path.join(svgDir, `${c.id}.svg`), c.svg);
    say(`dbsmack: wrote ${charts.length} SVG file${charts.length === 1 ? '' : 's'} to ${svgDir}`);
  }
  if (o.png) {
    ensureOutputDir(o.png);
    for (const c of charts) writeOut(path.join(o.png, `${c.id}.png`), await svgToPng(c.svg));
    say(`dbsmack: wrote ${charts.length} PNG file${charts.length === 1 ? '' : 's'} to ${o.png}`);
  }
  if (o.markdown) {
    const { dir, ext } = markdownImageDir(o);
    const mdDir = path.dirname(path.resolve(o.markdown));
    const images = new Map(
      charts.map((c) => [
        c.id,
        {
          title: c.title,
          path: path
            .relative(mdDir, path.resolve(dir, `${c.id}.${ext}`))
            .split(path.sep)
            .join('/'),
        },
      ]),
    );
    writeOut(o.markdown, renderMarkdown(model, images));
    say(`dbsmack: wrote ${o.markdown}`);
  }
  for (const n of model.notes) say(`dbsmack: note: ${n}`);
  return EXIT.ok;
}

/** Define `dbsmack report` on the program; its action hands its exit code to `exit`. */
export function registerReport(program: Command, exit: ExitSink): void {
  program
    .command('report')
    .description('draw charts and tables from runs, sweeps and comparisons into HTML, Markdown, SVG or PNG')
    .argument(
      '<inputs...>',
      'history labels, history ids (as compare takes them), or JSON files of run, sweep or compare; with two or more labels the first is the base of the ratio table',
    )
    .option('--html <file>', 'write one self-contained HTML page (offline, no JavaScript needed)')
    .option('--svg <dir>', 'write each chart as DIR/CHART.svg')
    .option('--png <dir>', 'write each chart as DIR/CHART.png')
    .option('--markdown <file>', 'write the tables as Markdown with links to the chart images')
    .addOption(
      helpDefault(new Option('--title <text>', 'title of the report'), 'the workload and the labels'),
    )
    .addOption(
      new Option('--metric <m>', 'what the computed ratio table compares (as compare --metric)')
        .choices(['qps', 'p95', 'p99'] as const)
        .default('qps' as const),
    )
    .addOption(
      helpDefault(
        new Option('--history <path>', 'history database to look ids and labels up in'),
        HISTORY_DEFAULT,
      ),
    )
    .option('--debug', 'print stack traces of errors')
    .action(async (inputs, o) => exit(await reportCommand(inputs, o)));
}
