/**
 * The Markdown report: the same tables as the HTML page, and links to the chart images written beside it,
 * ready for a pull request or a wiki page.
 */
import { probeChartId, ratioChartId } from './charts.ts';
import type { ReportModel } from './model.ts';
import { profileComparisonTables } from './profile.ts';
import {
  compareTable,
  differTable,
  genericTables,
  percentileTable,
  sameTable,
  seriesTable,
  type TableData,
  VERDICT_LEGEND,
} from './tables.ts';

function cell(s: string): string {
  return s.replace(/\|/g, '\\|').replace(/\n/g, ' ');
}

export function tableMarkdown(t: TableData): string {
  const head = `| ${t.header.map(cell).join(' | ')} |`;
  const rule = `| ${t.numeric.map((n) => (n ? '---:' : ':---')).join(' | ')} |`;
  const rows = t.rows.map((r) => `| ${r.map(cell).join(' | ')} |`);
  return [head, rule, ...rows].join('\n');
}

/**
 * Build the Markdown text. `images` maps a chart id to the path the Markdown should link (relative to the
 * Markdown file); charts without an entry are not linked.
 */
export function renderMarkdown(
  m: ReportModel,
  images: ReadonlyMap<string, { path: string; title: string }>,
): string {
  const out: string[] = [];
  const image = (id: string): void => {
    const img = images.get(id);
    if (img) out.push(`![${cell(img.title)}](${encodeURI(img.path)})`, '');
  };
  out.push(`# ${m.title}`, '', `Generated ${m.generatedAt} by dbsmack.`, '');
  if (m.notes.length > 0) {
    out.push('> **What is missing or unusual**', '>');
    for (const n of m.notes) out.push(`> - ${n}`);
    out.push('');
  }
  out.push('## Throughput by client count', '');
  if (m.series.length === 0) out.push('_No run in the inputs._', '');
  else {
    image('throughput');
    out.push(tableMarkdown(seriesTable(m)), '');
  }
  if (m.compares.length > 0) {
    out.push('## Comparison', '');
    m.compares.forEach((c, i) => {
      out.push(`### ${c.doc.metric}: ${(c.doc.candidates ?? []).join(', ')} against ${c.doc.base}`, '');
      if (c.doc.rows.length === 0) out.push('_The comparison has no rows._', '');
      else {
        out.push(tableMarkdown(compareTable(c)), '', `${VERDICT_LEGEND}`, '');
        image(ratioChartId(c, i));
      }
      for (const w of c.doc.warnings ?? []) out.push(`- ${w}`);
      if ((c.doc.warnings ?? []).length > 0) out.push('');
    });
  }
  out.push('## Latency by client count', '');
  image('latency');
  if (m.timelines.length > 0) {
    out.push('## Timelines', '');
    for (const t of m.timelines) image(t.id);
  }
  if (m.histograms.length > 0) {
    out.push('## Latency per statement type', '');
    for (const h of m.histograms) {
      out.push(`### ${h.title}`, '');
      image(h.id);
      out.push(tableMarkdown(percentileTable(h)), '');
    }
  }
  if (m.probes.length > 0 || m.profiles.length > 0) {
    out.push('## Wait profile and thread statistics', '');
    if (m.profiles.length > 0) {
      const side = profileComparisonTables(m.profiles);
      for (const t of side.tables) {
        if (t.title) out.push(`**${t.title}**`, '');
        out.push(
          tableMarkdown({ header: t.header, rows: t.rows, numeric: t.header.map((_, i) => i > 0) }),
          '',
        );
      }
      for (const n of side.notes) out.push(`- not measured: ${n}`);
      if (side.notes.length > 0) out.push('');
    }
    for (const p of m.probes) {
      out.push(`### ${p.key}: ${p.label}, ${p.clients} clients`, '');
      for (const g of genericTables(p.data)) {
        if (g.path.length > 0) out.push(`**${g.path.join(' › ')}**`, '');
        image(probeChartId(p, g.path));
        out.push(tableMarkdown(g.table), '');
        if (g.more > 0) out.push(`_${g.more} more rows not shown._`, '');
      }
    }
  }
  out.push('## Environment and settings', '');
  const differ = differTable(m);
  if (m.labels.length > 1) {
    out.push(differ ? tableMarkdown(differ) : 'No setting differs between the labels.', '');
  }
  const same = sameTable(m);
  if (same) {
    if (m.labels.length > 1) out.push('Same for all labels:', '');
    out.push(tableMarkdown(same), '');
  }
  return `${out.join('\n').trimEnd()}\n`;
}
