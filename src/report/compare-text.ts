/**
 * Renderings of a CompareResult: the ratio table engineers already use (`Thrd  cand/base …`) with a mark
 * per cell, the detail (p-value and bootstrap interval) below it, warnings, and what differs between the
 * inputs. Text, Markdown and CSV; JSON is the document itself.
 */
import type { CompareCell, CompareResult } from '../analysis/types.ts';
import { table } from './format.ts';

/** `~` no difference shown, `?` too few repeats, `+` significantly better, `-` significantly worse. */
export function mark(c: CompareCell): string {
  return c.verdict === 'same' ? '~' : c.verdict === 'unknown' ? '?' : c.verdict === 'better' ? '+' : '-';
}

export const testName = (c: CompareCell): string =>
  c.test === 'welch-log' ? 't(log)' : c.test === 'none' ? 'none' : 'MW';

/** Two decimals, the way ratio tables are read; small ratios keep two significant digits (0.0016). */
export const ratio = (x: number): string =>
  !Number.isFinite(x) ? String(x) : x !== 0 && Math.abs(x) < 0.1 ? x.toPrecision(2) : x.toFixed(2);
export const pval = (p: number): string => (p < 0.001 ? p.toExponential(1) : p.toFixed(3));
/** The bootstrap interval, or why there is none (one run on a side: see the warning). */
export const interval = (c: CompareCell): string =>
  c.ci_low === null || c.ci_high === null ? 'none (1 run)' : `${ratio(c.ci_low)}–${ratio(c.ci_high)}`;
const value = (x: number, metric: string): string =>
  metric === 'qps' ? (x >= 1000 ? x.toFixed(0) : x.toFixed(1)) : x >= 100 ? x.toFixed(1) : x.toFixed(3);
const unit = (metric: string): string => (metric === 'qps' ? 'q/s' : `${metric} ms`);

function legend(r: CompareResult): string {
  const better = r.metric === 'qps' ? 'above 1 is faster' : 'above 1 is slower';
  return (
    `ratio = median of candidate / median of base (${better}); + better, - worse (p < ${r.alpha ?? 0.05} ` +
    'and the 95% bootstrap interval excludes 1), ~ no difference shown, ? too few runs to tell; ' +
    "test: MW Mann–Whitney U, t(log) Welch's t-test on logarithms (few repeats)"
  );
}

export function renderCompareText(r: CompareResult): string {
  const out: string[] = [];
  out.push(
    `dbsmack compare ${unit(r.metric)}: base ${r.base}${r.sources?.[r.base] ? ` (${r.sources[r.base]})` : ''}`,
  );
  for (const c of r.candidates) out.push(`  candidate ${c}${r.sources?.[c] ? ` (${r.sources[c]})` : ''}`);
  out.push('');
  out.push(
    table(
      ['Thrd', `base ${unit(r.metric)}`, ...r.candidates.map((c) => `${c}/base`)],
      r.rows.map((row) => [
        String(row.clients),
        value(row.base, r.metric),
        ...r.candidates.map((c) => {
          const cell = row.candidates[c];
          return cell ? `${ratio(cell.ratio)} ${mark(cell)}` : '';
        }),
      ]),
    ),
  );
  out.push('');
  out.push(legend(r));
  out.push('');
  out.push(
    table(
      ['Thrd', 'candidate', 'value', 'ratio', '95% CI', 'p', 'test', 'runs', 'verdict'],
      r.rows.flatMap((row) =>
        r.candidates.flatMap((c) => {
          const cell = row.candidates[c];
          if (!cell) return [];
          return [
            [
              String(row.clients),
              c,
              value(cell.value, r.metric),
              ratio(cell.ratio),
              interval(cell),
              pval(cell.p_value),
              testName(cell),
              `${cell.n_base}/${cell.n_cand}`,
              cell.verdict,
            ],
          ];
        }),
      ),
    ),
  );
  if (r.warnings.length > 0) {
    out.push('');
    for (const w of r.warnings) out.push(`warning: ${w}`);
  }
  out.push('');
  const diffs = Object.entries(r.differences);
  if (diffs.length === 0) out.push('settings and environment: no differences recorded');
  else {
    out.push('settings and environment that differ:');
    const names = [r.base, ...r.candidates];
    out.push(
      table(
        ['setting', ...names],
        diffs.map(([k, v]) => [k, ...names.map((n) => v[n] || '—')]),
      ),
    );
  }
  return `${out.join('\n')}\n`;
}

const mdEscape = (s: string): string => s.replace(/\|/g, '\\|');

export function renderCompareMarkdown(r: CompareResult): string {
  const out: string[] = [];
  out.push(`### ${unit(r.metric)}: ${r.candidates.map(mdEscape).join(', ')} against ${mdEscape(r.base)}`);
  out.push('');
  out.push(
    `| Thrd | base ${unit(r.metric)} | ${r.candidates.map((c) => `${mdEscape(c)}/base`).join(' | ')} |`,
  );
  out.push(`| ---: | ---: | ${r.candidates.map(() => '---:').join(' | ')} |`);
  for (const row of r.rows) {
    const cells = r.candidates.map((c) => {
      const cell = row.candidates[c];
      return cell
        ? `${ratio(cell.ratio)} ${mark(cell)} (p=${pval(cell.p_value)} ${testName(cell)}, CI ${interval(cell)})`
        : '';
    });
    out.push(`| ${row.clients} | ${value(row.base, r.metric)} | ${cells.join(' | ')} |`);
  }
  out.push('');
  out.push(legend(r));
  for (const w of r.warnings) out.push(`\n> warning: ${mdEscape(w)}`);
  const diffs = Object.entries(r.differences);
  if (diffs.length > 0) {
    const names = [r.base, ...r.candidates];
    out.push('');
    out.push(`| setting | ${names.map(mdEscape).join(' | ')} |`);
    out.push(`| --- | ${names.map(() => '---').join(' | ')} |`);
    for (const [k, v] of diffs) out.push(`| ${k} | ${names.map((n) => mdEscape(v[n] || '—')).join(' | ')} |`);
  }
  return `${out.join('\n')}\n`;
}

const csvCell = (s: string): string => (/[",\n]/.test(s) ? `"${s.replace(/"/g, '""')}"` : s);

/** One line per client count and candidate (long format, easy to load into a spreadsheet or pandas). */
export function renderCompareCsv(r: CompareResult): string {
  const lines = [
    'metric,clients,base_label,base,candidate,value,ratio,ci_low,ci_high,p_value,test,verdict,n_base,n_cand',
  ];
  for (const row of r.rows) {
    for (const c of r.candidates) {
      const cell = row.candidates[c];
      if (!cell) continue;
      lines.push(
        [
          r.metric,
          String(row.clients),
          csvCell(r.base),
          String(row.base),
          csvCell(c),
          String(cell.value),
          String(cell.ratio),
          cell.ci_low === null ? '' : String(cell.ci_low),
          cell.ci_high === null ? '' : String(cell.ci_high),
          String(cell.p_value),
          cell.test ?? 'mann-whitney',
          cell.verdict,
          String(cell.n_base),
          String(cell.n_cand),
        ].join(','),
      );
    }
  }
  return `${lines.join('\n')}\n`;
}
