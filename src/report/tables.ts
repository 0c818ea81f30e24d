/**
 * The report's tables as plain rows of strings, so that the HTML and Markdown outputs show the same
 * figures with the same rounding and the same significance marks.
 */
import type { CompareCell, Verdict } from '../analysis/types.ts';
import type { StageResult, ThresholdResult } from '../metrics/run-result.ts';
import { grouped } from '../numbers.ts';
import { pval, ratio, testName } from './compare-text.ts';
import type { CompareView, HistogramSet, ReportModel } from './model.ts';

export interface TableData {
  header: string[];
  rows: string[][];
  /** Per column: right-align numbers. */
  numeric: boolean[];
  /** Per row, optional CSS classes (HTML only), e.g. the verdict of a ratio row. */
  rowClass?: (string | undefined)[];
}

/** Significance marks of the ratio table: the ones `dbsmack compare` prints, so the two tables read alike. */
export const VERDICT_MARK: Record<Verdict, string> = {
  better: '+',
  worse: '-',
  same: '~',
  unknown: '?',
};

export const VERDICT_LEGEND =
  'Ratio = median of candidate ÷ median of base. + better and - worse: a significant difference (p below alpha and the 95% bootstrap interval excludes 1); ~ no difference shown; ? too few repeats to tell. Test: MW Mann–Whitney U, t(log) Welch’s t-test on logarithms (few repeats).';

/** Three significant digits, thousands grouped: 12,345 / 123 / 1.23 / 0.0123. */
export function fmtNum(v: number): string {
  if (!Number.isFinite(v)) return '—';
  if (Number.isInteger(v)) return grouped(v);
  const a = Math.abs(v);
  if (a >= 1000) return grouped(Math.round(v));
  if (a >= 100) return v.toFixed(0);
  if (a >= 10) return v.toFixed(1);
  if (a >= 1) return v.toFixed(2);
  if (a === 0) return '0';
  return v.toPrecision(3);
}

/** A ratio as `dbsmack compare` prints it (two decimals; small ratios two significant digits). */
export function fmtRatio(v: number): string {
  return Number.isFinite(v) ? ratio(v) : '—';
}

function fmtP(c: CompareCell): string {
  if (!Number.isFinite(c.p_value)) return '—';
  return `${pval(c.p_value)} ${testName(c)}`;
}

/** A ratio with its significance mark, as in compare's table: `0.60 -`. */
export function ratioMarked(c: CompareCell): string {
  return `${fmtRatio(c.ratio)} ${VERDICT_MARK[c.verdict] ?? '?'}`;
}

/** The bootstrap interval of a ratio, as compare prints it: `0.55–0.66`. */
export function ciText(c: CompareCell): string {
  return c.ci_low !== null && c.ci_high !== null && Number.isFinite(c.ci_low) && Number.isFinite(c.ci_high)
    ? `${fmtRatio(c.ci_low)}–${fmtRatio(c.ci_high)}`
    : '—';
}

/** One ratio cell as text: `0.60 - [0.55–0.66]`. */
export function ratioText(c: CompareCell): string {
  const ci = ciText(c);
  return `${ratioMarked(c)}${ci === '—' ? '' : ` [${ci}]`}`;
}

/** Per label and client count: the median and spread of the repeats, latency and errors. */
export function seriesTable(m: ReportModel): TableData {
  const withStability = m.series.some((s) => s.stability !== undefined);
  const header = [
    'label',
    'clients',
    'runs',
    'queries/s (median)',
    'min – max',
    'CV %',
    'events/s',
    'p50 ms',
    'p95 ms',
    'p99 ms',
    'errors',
    ...(withStability ? ['stability'] : []),
  ];
  const rows = m.series.map((s) => [
    s.label,
    String(s.clients),
    // as sweep's text: complete runs + runs left out of the figures
    s.left_out ? `${s.n}+${s.left_out}` : String(s.n),
    fmtNum(s.qps_median),
    s.n > 1 ? `${fmtNum(s.qps_min)} – ${fmtNum(s.qps_max)}` : '—',
    s.n > 1 ? (s.cv * 100).toFixed(1) : '—',
    fmtNum(s.eps_median),
    fmtNum(s.p50_ms),
    fmtNum(s.p95_ms),
    fmtNum(s.p99_ms),
    String(s.errors),
    ...(withStability
      ? [s.stability ? `${s.stability}${s.stability_reason ? `: ${s.stability_reason}` : ''}` : '—']
      : []),
  ]);
  return {
    header,
    rows,
    numeric: header.map((h) => !['label', 'stability'].includes(h)),
  };
}

/**
 * The ratio table of one comparison, in the columns of `dbsmack compare`: the base's median, then per
 * candidate its median, `cand/base` with the significance mark, the 95% interval and the p-value with its
 * test.
 */
export function compareTable(c: CompareView): TableData {
  const cands = c.doc.candidates ?? [];
  const header = [
    'Thrd',
    `${c.doc.base} (base)`,
    ...cands.flatMap((l) => [l, `${l}/base`, '95% CI', 'p (test)']),
  ];
  const rowClass: (string | undefined)[] = [];
  const rows = c.doc.rows.map((r) => {
    const verdicts = cands.map((l) => r.candidates?.[l]?.verdict).filter(Boolean);
    rowClass.push(verdicts.length === 1 ? `v-${verdicts[0]}` : undefined);
    return [
      String(r.clients),
      fmtNum(r.base),
      ...cands.flatMap((l) => {
        const cell = r.candidates?.[l];
        if (!cell) return ['—', '—', '—', '—'];
        return [fmtNum(cell.value), ratioMarked(cell), ciText(cell), fmtP(cell)];
      }),
    ];
  });
  return { header, rows, numeric: header.map(() => true), rowClass };
}

/** Percentiles per statement type of one run. */
export function percentileTable(h: HistogramSet): TableData {
  const header = ['statement', 'kind', 'count', 'p50 ms', 'p90 ms', 'p99 ms', 'p99.9 ms', 'max ms'];
  const rows = h.types.map((t) => [
    t.name,
    t.kind,
    String(t.count),
    fmtNum(t.percentiles.p50),
    fmtNum(t.percentiles.p90),
    fmtNum(t.percentiles.p99),
    fmtNum(t.percentiles.p999),
    fmtNum(t.percentiles.max),
  ]);
  return { header, rows, numeric: header.map((_, i) => i > 1) };
}

/** Settings and environment values that differ between the labels. */
export function differTable(m: ReportModel): TableData | undefined {
  const keys = Object.keys(m.settings.differ);
  if (keys.length === 0) return undefined;
  const labels = [
    ...new Set([...m.settings.labels, ...keys.flatMap((k) => Object.keys(m.settings.differ[k]!))]),
  ];
  return {
    header: ['setting', ...labels],
    rows: keys.map((k) => [k, ...labels.map((l) => m.settings.differ[k]?.[l] ?? '—')]),
    numeric: [false, ...labels.map(() => false)],
  };
}

/** Settings that are the same for every label. */
export function sameTable(m: ReportModel): TableData | undefined {
  const keys = Object.keys(m.settings.same);
  if (keys.length === 0) return undefined;
  return {
    header: ['setting', 'value'],
    rows: keys.map((k) => [k, m.settings.same[k]!]),
    numeric: [false, false],
  };
}

const isScalar = (v: unknown): boolean => v === null || ['string', 'number', 'boolean'].includes(typeof v);

function cellText(v: unknown): string {
  if (v === null || v === undefined) return '—';
  if (typeof v === 'number') return fmtNum(v);
  if (typeof v === 'string' || typeof v === 'boolean') return String(v);
  return JSON.stringify(v);
}

/** At most this many rows of a probe's list (the biggest come first when the probe sorted them). */
export const PROBE_ROW_LIMIT = 40;

/**
 * Probe data of unknown shape as tables: a list of records becomes one table, a record of scalars a
 * key/value table; nested records give one table per key. The names are the probe's own.
 */
export function genericTables(
  data: unknown,
  path: string[] = [],
): { path: string[]; table: TableData; more: number }[] {
  if (Array.isArray(data)) {
    if (data.length === 0) return [];
    if (data.every((r) => r !== null && typeof r === 'object' && !Array.isArray(r))) {
      const keys = [...new Set(data.flatMap((r) => Object.keys(r as object)))];
      const rows = (data as Record<string, unknown>[])
        .slice(0, PROBE_ROW_LIMIT)
        .map((r) => keys.map((k) => cellText(r[k])));
      const numeric = keys.map((k) =>
        (data as Record<string, unknown>[]).every((r) => r[k] === undefined || typeof r[k] === 'number'),
      );
      return [
        { path, table: { header: keys, rows, numeric }, more: Math.max(0, data.length - PROBE_ROW_LIMIT) },
      ];
    }
    return [
      {
        path,
        table: {
          header: ['value'],
          rows: data.slice(0, PROBE_ROW_LIMIT).map((v) => [cellText(v)]),
          numeric: [false],
        },
        more: Math.max(0, data.length - PROBE_ROW_LIMIT),
      },
    ];
  }
  if (data !== null && typeof data === 'object') {
    const entries = Object.entries(data as Record<string, unknown>);
    const scalars = entries.filter(([, v]) => isScalar(v));
    const nested = entries.filter(([, v]) => !isScalar(v) && v !== undefined);
    const out: { path: string[]; table: TableData; more: number }[] = [];
    if (scalars.length > 0) {
      out.push({
        path,
        table: {
          header: ['name', 'value'],
          rows: scalars.map(([k, v]) => [k, cellText(v)]),
          numeric: [false, true],
        },
        more: 0,
      });
    }
    if (path.length < 3) for (const [k, v] of nested) out.push(...genericTables(v, [...path, k]));
    else
      for (const [k, v] of nested)
        out.push({
          path: [...path, k],
          table: { header: ['value'], rows: [[cellText(v)]], numeric: [false] },
          more: 0,
        });
    return out;
  }
  return [{ path, table: { header: ['value'], rows: [[cellText(data)]], numeric: [false] }, more: 0 }];
}

/** A staged run's stages: load, time span, throughput, event latency. */
export function stageTable(stages: readonly StageResult[]): TableData {
  return {
    header: [
      'stage',
      'load',
      'from s',
      'to s',
      'q/s',
      'events/s',
      'errors',
      'p50 ms',
      'p95 ms',
      'p99 ms',
      'max ms',
    ],
    rows: stages.map((s) => [
      String(s.stage),
      s.clients !== undefined
        ? `${s.clients} clients`
        : s.rate_from !== undefined && s.rate_from !== s.rate
          ? `${s.rate_from}→${s.rate}/s`
          : `${s.rate}/s`,
      String(s.start_s),
      String(s.end_s),
      fmtNum(s.qps),
      fmtNum(s.eps),
      String(s.errors),
      fmtNum(s.latency_ms.p50),
      fmtNum(s.latency_ms.p95),
      fmtNum(s.latency_ms.p99),
      fmtNum(s.latency_ms.max),
    ]),
    numeric: [false, false, true, true, true, true, true, true, true, true, true],
  };
}

/** Thresholds with their values and verdicts. */
export function thresholdTable(ts: readonly ThresholdResult[]): TableData {
  return {
    header: ['threshold', 'value', 'verdict'],
    rows: ts.map((t) => [
      t.expr,
      t.value === null
        ? (t.note ?? 'not measured')
        : `${t.value}${t.unit === 'ms' ? ' ms' : t.unit === '%' ? '%' : t.unit === '/s' ? '/s' : ''}`,
      t.ok ? 'held' : `failed${t.note && t.value !== null ? ` (${t.note})` : ''}`,
    ]),
    numeric: [false, true, false],
    rowClass: ts.map((t) => (t.ok ? 'v-better' : 'v-worse')),
  };
}
