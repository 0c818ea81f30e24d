/**
 * The report's charts as vega-lite specifications, built from the report model. Pure data: nothing here
 * loads vega (see render-svg.ts), so building the specs costs nothing on paths that do not draw.
 */
import type {
  CompareView,
  HistogramSet,
  ProbeSection,
  ReportModel,
  SeriesPoint,
  TimelineView,
} from './model.ts';
import { slug } from './model.ts';

/** A vega-lite top-level specification (kept loose: the shapes below are checked by rendering them). */
export type VlSpec = Record<string, unknown>;

export interface ChartSpec {
  /** Stable, file-name-safe id: the SVG/PNG file name and the HTML anchor. */
  id: string;
  title: string;
  spec: VlSpec;
}

const WIDTH = 640;
const HEIGHT = 300;
const FONT = 'DejaVu Sans, Helvetica, Arial, sans-serif';

/** Shared look: legible sizes, a white background (PNG files are pasted on dark pages too). */
const CONFIG = {
  font: FONT,
  background: 'white',
  padding: 12,
  view: { stroke: '#ccc' },
  axis: { labelFontSize: 12, titleFontSize: 13, titlePadding: 8, gridColor: '#e6e6e6' },
  legend: { labelFontSize: 12, titleFontSize: 12, labelLimit: 260 },
  title: { fontSize: 15, subtitleFontSize: 12, anchor: 'start', offset: 10 },
};

function top_(title: string, subtitle: string | undefined, body: VlSpec): VlSpec {
  return {
    $schema: 'https://vega.github.io/schema/vega-lite/v6.json',
    title: subtitle ? { text: title, subtitle } : title,
    config: CONFIG,
    ...body,
  };
}

function clientAxis(clients: number[]): VlSpec {
  return {
    field: 'clients',
    type: 'ordinal',
    sort: clients,
    title: 'clients (concurrent connections)',
    axis: { labelAngle: 0 },
  };
}

/** vega-lite's default categorical colours (tableau10), to give a label the same colour in every chart. */
const TABLEAU10 = [
  '#4c78a8',
  '#f58518',
  '#e45756',
  '#72b7b2',
  '#54a24b',
  '#eeca3b',
  '#b279a2',
  '#ff9da6',
  '#9d755d',
  '#bab0ac',
];

function labelColor(labels: string[]): VlSpec {
  return { field: 'label', type: 'nominal', title: 'label', scale: { domain: labels } };
}

function distinctClients(points: { clients: number }[]): number[] {
  return [...new Set(points.map((p) => p.clients))].sort((a, b) => a - b);
}

/** Throughput against client count: medians joined by lines, every repeat as a dot, min–max as a bar. */
export function throughputChart(m: ReportModel): ChartSpec | undefined {
  if (m.series.length === 0) return undefined;
  const clients = distinctClients(m.series);
  const multi = m.series.some((s) => s.n > 1);
  const layers: VlSpec[] = [
    {
      data: { values: m.series },
      mark: { type: 'rule', strokeWidth: 2, opacity: 0.6 },
      encoding: {
        x: clientAxis(clients),
        y: { field: 'qps_min', type: 'quantitative' },
        y2: { field: 'qps_max' },
        color: labelColor(m.labels),
      },
    },
    {
      data: { values: m.repeats },
      mark: { type: 'point', size: 30, opacity: 0.55, filled: true },
      encoding: {
        x: clientAxis(clients),
        y: { field: 'qps', type: 'quantitative' },
        color: labelColor(m.labels),
      },
    },
    {
      data: { values: m.series },
      mark: { type: 'line', point: { size: 60 }, strokeWidth: 2.5 },
      encoding: {
        x: clientAxis(clients),
        y: {
          field: 'qps_median',
          type: 'quantitative',
          title: 'throughput (queries/s)',
        },
        color: labelColor(m.labels),
      },
    },
  ];
  const outliers = m.repeats.filter((r) => r.outlier);
  if (outliers.length > 0) {
    layers.push({
      data: { values: outliers },
      mark: { type: 'point', shape: 'cross', size: 110, color: '#d62728', filled: true },
      encoding: { x: clientAxis(clients), y: { field: 'qps', type: 'quantitative' } },
    });
  }
  const subtitle = [
    multi ? 'line: median of the repeats; dots: each repeat; bar: min to max' : 'one run per point',
    outliers.length > 0 ? 'red cross: an outlier among its repeats (kept in the median)' : undefined,
  ]
    .filter(Boolean)
    .join('; ');
  return {
    id: 'throughput',
    title: 'Throughput by client count',
    spec: top_('Throughput by client count', subtitle, { width: WIDTH, height: HEIGHT, layer: layers }),
  };
}

/** p50, p95 and p99 event latency against client count, on a log scale (they can differ tenfold). */
export function latencyChart(m: ReportModel): ChartSpec | undefined {
  const rows = m.series.flatMap((s: SeriesPoint) =>
    (['p50', 'p95', 'p99'] as const).map((p) => ({
      label: s.label,
      clients: s.clients,
      percentile: p,
      ms: s[`${p}_ms`],
    })),
  );
  const positive = rows.filter((r) => r.ms > 0);
  if (positive.length === 0) return undefined;
  const clients = distinctClients(positive);
  return {
    id: 'latency',
    title: 'Latency percentiles by client count',
    spec: top_('Latency percentiles by client count', 'event latency, median of the repeats', {
      width: WIDTH,
      height: HEIGHT,
      data: { values: positive },
      mark: { type: 'line', point: { size: 50 }, strokeWidth: 2 },
      encoding: {
        x: clientAxis(clients),
        y: {
          field: 'ms',
          type: 'quantitative',
          title: 'event latency (ms, log scale)',
          scale: { type: 'log' },
          axis: { format: '~g' },
        },
        color: labelColor(m.labels),
        strokeDash: {
          field: 'percentile',
          type: 'nominal',
          title: 'percentile',
          scale: {
            domain: ['p50', 'p95', 'p99'],
            range: [
              [1, 0],
              [6, 3],
              [2, 2],
            ],
          },
        },
        shape: {
          field: 'percentile',
          type: 'nominal',
          title: 'percentile',
          scale: { domain: ['p50', 'p95', 'p99'], range: ['circle', 'square', 'triangle-up'] },
        },
      },
    }),
  };
}

const METRIC_WORDS: Record<string, string> = {
  qps: 'throughput (queries/s)',
  p95: 'p95 latency',
  p99: 'p99 latency',
};

/** The id of the ratio chart of the `index`-th comparison. */
export function ratioChartId(c: CompareView, index: number): string {
  return `ratio-${slug(c.doc.metric)}${index > 0 ? `-${index + 1}` : ''}`;
}

/** Each candidate's ratio to the base per client count, with its confidence interval and verdict. */
export function ratioChart(c: CompareView, index: number): ChartSpec | undefined {
  const rows = c.doc.rows.flatMap((r) =>
    Object.entries(r.candidates ?? {}).map(([label, cell]) => ({
      clients: r.clients,
      label,
      ratio: cell.ratio,
      ci_low: cell.ci_low,
      ci_high: cell.ci_high,
      verdict: cell.verdict,
    })),
  );
  const finite = rows.filter((r) => Number.isFinite(r.ratio));
  if (finite.length === 0) return undefined;
  const clients = distinctClients(finite);
  const withCi = finite.filter((r) => Number.isFinite(r.ci_low) && Number.isFinite(r.ci_high));
  const metric = METRIC_WORDS[c.doc.metric] ?? c.doc.metric;
  // Each candidate keeps the colour it has in the other charts, where the base is the first label.
  const candColor = {
    field: 'label',
    type: 'nominal',
    title: 'candidate',
    scale: {
      domain: c.doc.candidates,
      range: c.doc.candidates.map((_, i) => TABLEAU10[(i + 1) % TABLEAU10.length]),
    },
  };
  return {
    id: ratioChartId(c, index),
    title: `Ratio to ${c.doc.base}: ${metric}`,
    spec: top_(
      `Ratio to ${c.doc.base}: ${metric}`,
      c.doc.metric === 'qps'
        ? 'above 1: the candidate is faster; bars: confidence interval; dashed: no difference'
        : 'above 1: the candidate is slower; bars: confidence interval; dashed: no difference',
      {
        width: WIDTH,
        height: HEIGHT,
        layer: [
          {
            data: { values: [{ one: 1 }] },
            mark: { type: 'rule', strokeDash: [6, 4], color: '#555' },
            encoding: { y: { field: 'one', type: 'quantitative' } },
          },
          {
            data: { values: withCi },
            mark: { type: 'rule', strokeWidth: 2, opacity: 0.6 },
            encoding: {
              x: clientAxis(clients),
              y: { field: 'ci_low', type: 'quantitative' },
              y2: { field: 'ci_high' },
              color: candColor,
            },
          },
          {
            data: { values: finite },
            mark: { type: 'line', strokeWidth: 2.5 },
            encoding: {
              x: clientAxis(clients),
              y: {
                field: 'ratio',
                type: 'quantitative',
                title: `ratio (candidate ÷ ${c.doc.base})`,
                scale: { zero: false },
              },
              color: candColor,
            },
          },
          {
            data: { values: finite },
            mark: { type: 'point', size: 80, filled: true },
            encoding: {
              x: clientAxis(clients),
              y: { field: 'ratio', type: 'quantitative' },
              color: candColor,
              shape: {
                field: 'verdict',
                type: 'nominal',
                title: 'verdict',
                scale: {
                  domain: ['better', 'worse', 'same', 'unknown'],
                  range: ['triangle-up', 'triangle-down', 'circle', 'diamond'],
                },
              },
            },
          },
        ],
      },
    ),
  };
}

/** Throughput and p95 per interval, one above the other on the same time axis, stalls shaded. */
export function timelineChart(t: TimelineView): ChartSpec {
  // No statement finished in an interval (a stall): its p95 is unknown, not 0, so the line breaks there.
  const rows = t.intervals.map((p) => ({
    t: p.t,
    qps: p.qps,
    p95_ms: p.queries > 0 ? p.p95_ms : null,
    errors: p.errors,
  }));
  const dropped =
    t.dropped > 0
      ? `${t.dropped} partial interval${t.dropped === 1 ? '' : 's'} at the end not drawn`
      : undefined;
  const stalls = t.stalls.map(([start, end]) => ({ start, end }));
  const x = { field: 't', type: 'quantitative', title: 'time since the measured part began (s)' };
  const stallLayer = (): VlSpec => ({
    data: { values: stalls },
    mark: { type: 'rect', color: '#d62728', opacity: 0.18 },
    encoding: { x: { field: 'start', type: 'quantitative' }, x2: { field: 'end' } },
  });
  const errorRows = rows.filter((r) => r.errors > 0);
  // a staged run: a dashed rule where each stage after the first begins, labelled with its load
  const boundaries = (t.stages ?? []).slice(1).map((s) => ({
    t: s.start_s,
    label: `stage ${s.stage}: ${s.clients !== undefined ? `${s.clients} clients` : `${s.rate}/s`}`,
  }));
  const stageLayers = (labels: boolean): VlSpec[] =>
    boundaries.length === 0
      ? []
      : [
          {
            data: { values: boundaries },
            mark: { type: 'rule', color: '#555', strokeDash: [4, 3] },
            encoding: { x: { field: 't', type: 'quantitative' } },
          },
          ...(labels
            ? [
                {
                  data: { values: boundaries },
                  mark: {
                    type: 'text',
                    align: 'left',
                    baseline: 'top',
                    dx: 3,
                    dy: 2,
                    fontSize: 10,
                    color: '#333',
                  },
                  encoding: {
                    x: { field: 't', type: 'quantitative' },
                    y: { value: 0 },
                    text: { field: 'label' },
                  },
                },
              ]
            : []),
        ];
  const panel = (field: string, title: string, color: string, extra: VlSpec[] = []): VlSpec => ({
    width: WIDTH,
    height: 170,
    layer: [
      stallLayer(),
      ...stageLayers(field === 'qps'),
      {
        data: { values: rows },
        mark: {
          type: 'line',
          point: { size: 25, color },
          color,
          strokeWidth: 2,
          invalid: 'break-paths-show-domains',
        },
        encoding: { x, y: { field, type: 'quantitative', title } },
      },
      ...extra,
    ],
  });
  const subtitle = [
    boundaries.length > 0 ? `dashed: stage boundaries (${(t.stages ?? []).length} stages)` : undefined,
    stalls.length > 0
      ? `shaded: ${stalls.length} stall${stalls.length === 1 ? '' : 's'} (near-zero throughput)`
      : 'no stalls',
    errorRows.length > 0 ? 'red ticks: intervals with errors' : undefined,
    dropped,
    // A run no longer than one --report-interval has a single point: say so rather than leave a puzzle.
    t.intervals.length === 1
      ? 'one interval only (the run lasted one --report-interval; a smaller --report-interval draws a line)'
      : undefined,
  ]
    .filter(Boolean)
    .join('; ');
  const errorTicks: VlSpec[] =
    errorRows.length > 0
      ? [
          {
            data: { values: errorRows },
            mark: { type: 'tick', color: '#d62728', thickness: 2 },
            encoding: { x, y: { value: 0 } },
          },
        ]
      : [];
  return {
    id: t.id,
    title: `Timeline: ${t.title}`,
    spec: top_(`Timeline: ${t.title}`, subtitle, {
      vconcat: [
        panel('qps', 'throughput (queries/s)', '#1f77b4', errorTicks),
        panel('p95_ms', 'p95 statement latency (ms)', '#ff7f0e'),
      ],
      spacing: 14,
    }),
  };
}

/** Latency distribution per statement type of one run: share of statements per log-spaced bin. */
export function histogramChart(h: HistogramSet): ChartSpec | undefined {
  const rows = h.types.flatMap((t) =>
    t.bins.map((b) => ({ type: t.name, ms: Math.sqrt(b.lo_ms * b.hi_ms), share: b.share, count: b.count })),
  );
  if (rows.length === 0) return undefined;
  return {
    id: h.id,
    title: `Latency histogram: ${h.title}`,
    spec: top_(
      `Latency histogram: ${h.title}`,
      'share of statements in each latency bin (10 bins per decade)',
      {
        width: WIDTH,
        height: 240,
        data: { values: rows },
        mark: { type: 'line', point: { size: 20 }, strokeWidth: 2 },
        encoding: {
          x: {
            field: 'ms',
            type: 'quantitative',
            title: 'statement latency (ms, log scale)',
            scale: { type: 'log', nice: false, padding: 12 },
            axis: { format: '~g' },
          },
          y: { field: 'share', type: 'quantitative', title: 'share of statements (%)' },
          color: { field: 'type', type: 'nominal', title: 'statement type' },
        },
      },
    ),
  };
}

/** The id of the chart of one list inside a probe's data. */
export function probeChartId(p: ProbeSection, path: readonly string[]): string {
  return `probe-${slug(p.label)}-${slug([p.key, ...path].join('-'))}`;
}

/** Lists of records inside probe data, with where they are: the candidates for a bar chart. */
export function probeLists(
  data: unknown,
  path: string[] = [],
): { path: string[]; rows: Record<string, unknown>[] }[] {
  if (Array.isArray(data)) {
    const records = data.every((r) => r !== null && typeof r === 'object' && !Array.isArray(r));
    return records && data.length > 0 ? [{ path, rows: data as Record<string, unknown>[] }] : [];
  }
  if (data !== null && typeof data === 'object' && path.length < 3) {
    return Object.entries(data as Record<string, unknown>).flatMap(([k, v]) => probeLists(v, [...path, k]));
  }
  return [];
}

/** At most this many bars: the biggest waits tell the story, the tail is in the table. */
const PROBE_BARS = 15;

/**
 * A probe's list of records as horizontal bars: the first text field names the bars, the first numeric
 * field sizes them. The probe's own field names are the axis titles (they carry the unit, like wait_ms).
 */
export function probeChart(
  p: ProbeSection,
  path: string[],
  rows: Record<string, unknown>[],
): ChartSpec | undefined {
  const keys = [...new Set(rows.flatMap((r) => Object.keys(r)))];
  const name = keys.find((k) => rows.every((r) => typeof r[k] === 'string'));
  const numeric = keys.filter((k) => rows.every((r) => typeof r[k] === 'number'));
  // Time waited says more than how often: prefer a field that names a duration or a share.
  const value = numeric.find((k) => /(_ms|_us|_ns|_s|time|wait|share|pct|percent)$/i.test(k)) ?? numeric[0];
  if (name === undefined || value === undefined || rows.length < 2) return undefined;
  const top = [...rows].sort((a, b) => (b[value] as number) - (a[value] as number)).slice(0, PROBE_BARS);
  const data = top.map((r) => ({ name: r[name], value: r[value] }));
  const title = `${p.key}${path.length > 0 ? ` › ${path.join(' › ')}` : ''}: ${p.label}, ${p.clients} clients`;
  return {
    id: probeChartId(p, path),
    title,
    spec: top_(title, rows.length > PROBE_BARS ? `the ${PROBE_BARS} largest of ${rows.length}` : undefined, {
      width: WIDTH - 120,
      height: { step: 22 },
      data: { values: data },
      mark: { type: 'bar', color: '#4c78a8' },
      encoding: {
        // The bars' names are long (wait/synch/mutex/…): an axis title beside them would overlap them.
        y: { field: 'name', type: 'nominal', sort: '-x', title: null, axis: { labelLimit: 480 } },
        x: { field: 'value', type: 'quantitative', title: axisTitle(value) },
      },
    }),
  };
}

/** A probe's field name as an axis title with its unit: `wait_ms` → `wait (ms)`, `share_pct` → `share (%)`. */
export function axisTitle(field: string): string {
  const units: [RegExp, string][] = [
    [/_ms$/, ' (ms)'],
    [/_us$/, ' (µs)'],
    [/_ns$/, ' (ns)'],
    [/_s$/, ' (s)'],
    [/_pct$/, ' (%)'],
  ];
  for (const [re, unit] of units)
    if (re.test(field)) return `${field.replace(re, '').replace(/_/g, ' ')}${unit}`;
  return field.replace(/_/g, ' ');
}

/** Every chart of a report, in page order. */
export function reportCharts(m: ReportModel): ChartSpec[] {
  const out: ChartSpec[] = [];
  const push = (c: ChartSpec | undefined): void => {
    if (c) out.push(c);
  };
  push(throughputChart(m));
  m.compares.forEach((c, i) => {
    push(ratioChart(c, i));
  });
  push(latencyChart(m));
  for (const t of m.timelines) push(timelineChart(t));
  for (const h of m.histograms) push(histogramChart(h));
  for (const p of m.probes) for (const l of probeLists(p.data)) push(probeChart(p, l.path, l.rows));
  return out;
}
