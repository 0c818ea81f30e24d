/**
 * The HTML report: one self-contained file. Charts are inline SVG rendered beforehand, styles are inline,
 * and there is no script and no external reference, so it opens offline and shows everything without
 * JavaScript.
 */
import { probeChartId, ratioChartId } from './charts.ts';
import { runFlameGraphs } from './flamegraph.ts';
import type { ReportModel } from './model.ts';
import { profileComparisonTables } from './profile.ts';
import type { RenderedChart } from './render-svg.ts';
import {
  compareTable,
  differTable,
  genericTables,
  percentileTable,
  sameTable,
  seriesTable,
  stageTable,
  type TableData,
  thresholdTable,
  VERDICT_LEGEND,
} from './tables.ts';

export function esc(s: string): string {
  return s.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

const CSS = `
:root { color-scheme: light; }
body { font-family: 'DejaVu Sans', Helvetica, Arial, sans-serif; margin: 0; color: #1d1d1f; background: #f6f6f4; }
main { max-width: 1100px; margin: 0 auto; padding: 24px 28px 60px; }
h1 { font-size: 24px; margin: 8px 0 4px; }
h2 { font-size: 19px; margin: 36px 0 10px; border-bottom: 1px solid #ccc; padding-bottom: 4px; }
h3 { font-size: 15px; margin: 22px 0 8px; }
p, li { font-size: 14px; line-height: 1.45; }
.meta { color: #555; font-size: 13px; }
figure { margin: 10px 0 18px; background: white; border: 1px solid #ddd; border-radius: 4px; padding: 6px; overflow-x: auto; }
figure svg { display: block; max-width: 100%; height: auto; }
figcaption { font-size: 12px; color: #555; padding: 4px 6px 0; }
table { border-collapse: collapse; font-size: 13px; background: white; margin: 8px 0 14px; }
th, td { border: 1px solid #d4d4d4; padding: 4px 8px; vertical-align: top; }
th { background: #efefec; text-align: left; font-weight: 600; }
td.n { text-align: right; font-variant-numeric: tabular-nums; white-space: nowrap; }
tr.v-better td { background: #eaf6ea; }
tr.v-worse td { background: #fbeaea; }
.notes { background: #fff8e1; border: 1px solid #e6c65c; border-radius: 4px; padding: 8px 16px; }
.notes h2 { border: 0; margin: 6px 0; font-size: 16px; }
.missing { color: #8a6d00; font-style: italic; }
.wide { overflow-x: auto; }
details summary { cursor: pointer; font-size: 14px; margin: 6px 0; }
nav a { margin-right: 12px; font-size: 13px; }
code { font-size: 12px; }
`;

export function tableHtml(t: TableData): string {
  const head = `<tr>${t.header.map((h) => `<th>${esc(h)}</th>`).join('')}</tr>`;
  const body = t.rows
    .map((r, i) => {
      const cls = t.rowClass?.[i];
      const cells = r.map((c, j) => `<td${t.numeric[j] ? ' class="n"' : ''}>${esc(c)}</td>`).join('');
      return `<tr${cls ? ` class="${esc(cls)}"` : ''}>${cells}</tr>`;
    })
    .join('\n');
  return `<div class="wide"><table>\n<thead>${head}</thead>\n<tbody>\n${body}\n</tbody></table></div>`;
}

function figure(c: RenderedChart | undefined, caption?: string): string {
  if (!c) return '';
  return `<figure id="${esc(c.id)}" aria-label="${esc(c.title)}">${c.svg}${caption ? `<figcaption>${esc(caption)}</figcaption>` : ''}</figure>`;
}

function missing(text: string): string {
  return `<p class="missing">${esc(text)}</p>`;
}

/** Build the page. `charts` are the rendered charts by id (those that could be drawn). */
export function renderHtml(m: ReportModel, rendered: readonly RenderedChart[]): string {
  const byId = new Map(rendered.map((c) => [c.id, c]));
  const out: string[] = [];
  const section = (id: string, title: string): void => {
    out.push(`<h2 id="${id}">${esc(title)}</h2>`);
  };

  out.push(`<h1>${esc(m.title)}</h1>`);
  out.push(
    `<p class="meta">Generated ${esc(m.generatedAt)} by dbsmack from ${m.sources.length} input file${m.sources.length === 1 ? '' : 's'}.</p>`,
  );
  out.push(
    '<nav><a href="#throughput-section">throughput</a><a href="#ratios">ratios</a><a href="#latency-section">latency</a><a href="#timelines">timelines</a><a href="#histograms">histograms</a><a href="#profiles">profiles</a><a href="#settings">settings</a><a href="#inputs">inputs</a></nav>',
  );
  if (m.notes.length > 0) {
    out.push(
      `<div class="notes"><h2>What is missing or unusual</h2><ul>${m.notes.map((n) => `<li>${esc(n)}</li>`).join('')}</ul></div>`,
    );
  }

  section('throughput-section', 'Throughput by client count');
  if (m.series.length === 0) out.push(missing('No run in the inputs: no throughput to show.'));
  else {
    out.push(figure(byId.get('throughput')));
    out.push(tableHtml(seriesTable(m)));
  }

  section('ratios', 'Comparison');
  if (m.compares.length === 0) {
    out.push(
      missing(
        m.labels.length > 1
          ? 'No comparison document among the inputs: no ratio table. Pass the JSON written by `dbsmack compare` too.'
          : 'Only one label: nothing to compare.',
      ),
    );
  }
  m.compares.forEach((c, i) => {
    out.push(
      `<h3>${esc(c.doc.metric)}: ${esc((c.doc.candidates ?? []).join(', '))} against ${esc(c.doc.base)} <span class="meta">(${esc(c.source)})</span></h3>`,
    );
    if (c.doc.rows.length === 0) out.push(missing('The comparison has no rows.'));
    else {
      out.push(tableHtml(compareTable(c)));
      out.push(`<p class="meta">${esc(VERDICT_LEGEND)}</p>`);
      out.push(figure(byId.get(ratioChartId(c, i))));
    }
    if ((c.doc.warnings ?? []).length > 0) {
      out.push(`<ul>${c.doc.warnings.map((w) => `<li>${esc(w)}</li>`).join('')}</ul>`);
    }
  });

  section('latency-section', 'Latency by client count');
  if (byId.has('latency')) out.push(figure(byId.get('latency')));
  else out.push(missing('No latency was measured.'));

  section('timelines', 'Timelines');
  if (m.timelines.length === 0)
    out.push(missing('No run with a timeline (per-interval figures) among the inputs.'));
  for (const t of m.timelines) {
    out.push(figure(byId.get(t.id)));
    if (t.stages !== undefined && t.stages.length > 0) {
      out.push(`<p>Stages of ${esc(t.title)}:</p>`, tableHtml(stageTable(t.stages)));
    }
    if (t.thresholds !== undefined && t.thresholds.length > 0) {
      out.push(`<p>Thresholds of ${esc(t.title)}:</p>`, tableHtml(thresholdTable(t.thresholds)));
    }
  }

  section('histograms', 'Latency histograms per statement type');
  if (m.histograms.length === 0) out.push(missing('No latency histogram among the inputs.'));
  for (const h of m.histograms) {
    out.push(figure(byId.get(h.id)));
    out.push(tableHtml(percentileTable(h)));
  }

  section('profiles', 'Wait profile and thread statistics');
  if (m.probes.length === 0 && m.profiles.length === 0) {
    out.push(missing('Not measured in these runs (no wait profile or thread statistics in the inputs).'));
  }
  if (m.profiles.length > 0) {
    const side = profileComparisonTables(m.profiles);
    out.push(
      `<p class="meta">One run per label: the median-throughput repeat at its highest client count (${m.profiles.map((p) => `${esc(p.label)}: ${p.result.clients}`).join(', ')}). CPU, LAT (waiting for a CPU) and LCK (lock wait) are shares of the threads' time; VCX/ICX voluntary and involuntary context switches.</p>`,
    );
    for (const t of side.tables) {
      if (t.title) out.push(`<p><b>${esc(t.title)}</b></p>`);
      out.push(tableHtml({ header: t.header, rows: t.rows, numeric: t.header.map((_, i) => i > 0) }));
    }
    if (side.notes.length > 0) {
      out.push(`<p><b>Not measured</b></p><ul>${side.notes.map((n) => `<li>${esc(n)}</li>`).join('')}</ul>`);
    }
    for (const p of m.profiles) {
      for (const f of runFlameGraphs(p.label, p.result)) {
        out.push(
          `<figure id="${esc(f.id)}" class="flame" aria-label="${esc(f.title)}">${f.svg}<figcaption>${esc(f.caption)}</figcaption></figure>`,
        );
      }
    }
  }
  for (const p of m.probes) {
    out.push(`<h3>${esc(p.key)}: ${esc(p.label)}, ${p.clients} clients</h3>`);
    for (const g of genericTables(p.data)) {
      if (g.path.length > 0) out.push(`<p><b>${esc(g.path.join(' › '))}</b></p>`);
      out.push(figure(byId.get(probeChartId(p, g.path))));
      out.push(tableHtml(g.table));
      if (g.more > 0) out.push(`<p class="meta">${g.more} more rows not shown.</p>`);
    }
  }

  section('settings', 'Environment and settings');
  const differ = differTable(m);
  if (m.labels.length > 1) {
    out.push(differ ? tableHtml(differ) : '<p>No setting differs between the labels.</p>');
  }
  const same = sameTable(m);
  if (same) {
    out.push(
      m.labels.length > 1
        ? `<details><summary>Settings that are the same for all labels (${same.rows.length})</summary>${tableHtml(same)}</details>`
        : tableHtml(same),
    );
  }

  section('inputs', 'Inputs');
  out.push(
    tableHtml({
      header: ['file', 'kind', 'content'],
      rows: m.sources.map((s) => [s.source, s.kind, s.what]),
      numeric: [false, false, false],
    }),
  );

  return `<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="generator" content="dbsmack">
<title>${esc(m.title)}</title>
<style>${CSS}</style>
</head>
<body>
<main>
${out.filter(Boolean).join('\n')}
</main>
</body>
</html>
`;
}
