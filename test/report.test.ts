/**
 * `dbsmack report`: the model read from real run/sweep/compare documents, the outputs (HTML, SVG, PNG,
 * Markdown) and bad input, which gives a report that says what is missing or a one-line error.
 */
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import { drawableIntervals, findTimelineStalls } from '../src/analysis/stability.ts';
import type { SweepResult } from '../src/analysis/types.ts';
import type { RunResult } from '../src/metrics/run-result.ts';
import { reportCharts, throughputChart } from '../src/report/charts.ts';
import { histogramView } from '../src/report/histogram-view.ts';
import { renderHtml } from '../src/report/html.ts';
import { classifyDocument, resolveReportInputs } from '../src/report/inputs.ts';
import { buildReportModel } from '../src/report/model.ts';
import { renderCharts } from '../src/report/render-svg.ts';
import { findJsonFault } from '../src/store/json-position.ts';
import { ROOT, runCli, tmpDir } from './helpers/cli.ts';

const FIX = path.join(ROOT, 'test', 'fixtures', 'report');
const fx = (name: string): string => path.join(FIX, name);
const readJson = <T>(name: string): T => JSON.parse(readFileSync(fx(name), 'utf8')) as T;

test('the model: medians and spread per label and client count, the comparison, settings that differ', async () => {
  const m = buildReportModel(
    await resolveReportInputs([fx('sweep-mariadb.json'), fx('sweep-postgres.json'), fx('compare-qps.json')]),
  );
  assert.deepEqual(m.labels, ['mariadb', 'postgres']);
  assert.equal(m.series.length, 8);
  assert.equal(m.repeats.length, 24);
  const sweep = readJson<SweepResult>('sweep-mariadb.json');
  const at4 = m.series.find((s) => s.label === 'mariadb' && s.clients === 4)!;
  const qps = sweep.points.find((p) => p.clients === 4)!.runs.map((r) => r.qps);
  assert.equal(at4.n, 3);
  assert.equal(at4.qps_min, Math.min(...qps));
  assert.equal(at4.qps_max, Math.max(...qps));
  assert.equal(at4.qps_median, [...qps].sort((a, b) => a - b)[1]);
  assert.equal(m.compares.length, 1);
  assert.deepEqual(m.notes, []);
  assert.equal(m.settings.differ['target.driver']?.mariadb, 'mysql');
  assert.equal(m.settings.differ['target.driver']?.postgres, 'postgres');
  assert.equal(m.settings.same['workload.name'], 'select1');
  // of a sweep: the median repeat at the highest client count per label
  assert.deepEqual(
    m.timelines.map((t) => t.clients),
    [8, 8],
  );
  assert.equal(m.histograms.length, 2);
});

test('stalls: the held write lock shows as near-zero intervals; a short closing interval is not drawn', () => {
  const run = readJson<RunResult>('run-stall.json');
  const stalls = findTimelineStalls(run.intervals);
  assert.ok(stalls.length >= 1, JSON.stringify(stalls));
  const covered = stalls.reduce((a, [s, e]) => a + (e - s), 0);
  assert.ok(covered >= 0.5 && covered <= 1.5, `stalled ${covered} s of a 1 s lock`);
  const last = run.intervals[run.intervals.length - 1]!;
  assert.equal(last.dur, 0);
  assert.equal(drawableIntervals(run.intervals).length, run.intervals.length - 1);
  assert.deepEqual(
    findTimelineStalls(readJson<SweepResult>('sweep-postgres.json').points[0]!.runs[0]!.result.intervals),
    [],
  );
});

test('histograms decode from the RunResult and keep every value', () => {
  const run = readJson<RunResult>('run-stall.json');
  for (const [name, t] of Object.entries(run.types)) {
    const h = histogramView(name, t.kind, t.histogram);
    assert.equal(h.count, t.count);
    assert.equal(
      h.bins.reduce((a, b) => a + b.count, 0),
      t.count,
    );
    assert.ok(Math.abs(h.bins.reduce((a, b) => a + b.share, 0) - 100) < 1e-6);
    assert.equal(h.percentiles.p99, t.latency_ms.p99);
    for (const b of h.bins) assert.ok(b.hi_ms > b.lo_ms);
  }
});

test('documents of other schemas or versions are skipped with the reason', () => {
  assert.equal(
    (classifyDocument('a', { schema: 'dbsmack/run@2' }) as { reason: string }).reason,
    'schema dbsmack/run@2 is a version this dbsmack does not read (it reads dbsmack/run@1)',
  );
  assert.match(
    (classifyDocument('b', { schema: 'k6/summary' }) as { reason: string }).reason,
    /unknown schema "k6\/summary"/,
  );
  assert.match((classifyDocument('c', [1, 2]) as { reason: string }).reason, /not a JSON object/);
  assert.match((classifyDocument('d', { x: 1 }) as { reason: string }).reason, /no "schema" field/);
});

test('dbsmack report writes HTML, SVG, PNG and Markdown that agree', async () => {
  const dir = tmpDir('dbsmack-report-');
  // the page's directory must exist (a missing one is an error); the chart directories are made
  mkdirSync(path.join(dir, 'out'));
  const html = path.join(dir, 'out', 'report.html');
  const md = path.join(dir, 'report.md');
  const r = await runCli(
    [
      'report',
      fx('sweep-mariadb.json'),
      fx('sweep-postgres.json'),
      fx('compare-qps.json'),
      '--html',
      html,
      '--svg',
      path.join(dir, 'svg'),
      '--png',
      path.join(dir, 'png'),
      '--markdown',
      md,
    ],
    { cwd: dir },
  );
  assert.equal(r.code, 0, r.stderr);
  assert.equal(r.stdout, '', 'nothing on stdout');
  const page = readFileSync(html, 'utf8');
  assert.doesNotMatch(page, /<script|<link|<img|@import|src=|href="(?!#)/, 'self-contained, no script');
  assert.equal((page.match(/<svg/g) ?? []).length, 7);
  const svgs = readdirSync(path.join(dir, 'svg')).sort();
  const pngs = readdirSync(path.join(dir, 'png')).sort();
  assert.deepEqual(svgs, [
    'histogram-mariadb-c8.svg',
    'histogram-postgres-c8.svg',
    'latency.svg',
    'ratio-qps.svg',
    'throughput.svg',
    'timeline-mariadb-c8-r1.svg',
    'timeline-postgres-c8-r2.svg',
  ]);
  assert.deepEqual(
    pngs,
    svgs.map((s) => s.replace(/\.svg$/, '.png')),
  );
  for (const p of pngs) {
    const b = readFileSync(path.join(dir, 'png', p));
    assert.equal(b.subarray(1, 4).toString(), 'PNG');
    assert.ok(b.length > 10_000, `${p} has content`);
  }
  const text = readFileSync(md, 'utf8');
  // the Markdown links the PNGs (given --png), relative to itself
  const links = [...text.matchAll(/!\[[^\]]*\]\(([^)]+)\)/g)].map((x) => x[1]!);
  assert.equal(links.length, 7);
  for (const l of links) assert.ok(existsSync(path.join(dir, decodeURI(l))), l);
  // the ratio table says the same in both outputs
  const compare = readJson<{
    rows: { clients: number; candidates: Record<string, { ratio: number; verdict: string }> }[];
  }>('compare-qps.json');
  // the marks of `dbsmack compare`
  const marks: Record<string, string> = { better: '+', worse: '-', same: '~', unknown: '?' };
  for (const row of compare.rows) {
    const c = row.candidates.postgres!;
    const cell = `${c.ratio.toFixed(2)} ${marks[c.verdict]}`;
    assert.ok(text.includes(cell), `markdown has ${cell}`);
    assert.ok(page.includes(cell), `html has ${cell}`);
  }
});

test('bad input: an empty sweep, a run without a timeline, other schemas: a report that says what is missing', async () => {
  const dir = tmpDir('dbsmack-report-bad-');
  const sweep = readJson<SweepResult>('sweep-mariadb.json');
  const empty = { ...sweep, label: 'empty', points: [] };
  const run = readJson<RunResult>('run-stall.json');
  const noTimeline = { ...run, label: 'no-timeline', intervals: [], types: {} };
  const files: Record<string, unknown> = {
    'empty.json': empty,
    'no-timeline.json': noTimeline,
    'future.json': { ...run, schema: 'dbsmack/run@2' },
    'other.json': { schema: 'someone/else@1' },
  };
  for (const [f, doc] of Object.entries(files)) writeFileSync(path.join(dir, f), JSON.stringify(doc));
  const html = path.join(dir, 'r.html');
  const r = await runCli(['report', ...Object.keys(files), '--html', html], { cwd: dir });
  assert.equal(r.code, 0, r.stderr);
  const page = readFileSync(html, 'utf8');
  assert.match(page, /empty.json: the sweep &#34;empty&#34; has no points: nothing was measured/);
  assert.match(page, /no-timeline.json: no-timeline, 2 clients has no timeline/);
  assert.match(page, /future.json: skipped: schema dbsmack\/run@2 is a version this dbsmack does not read/);
  assert.match(page, /other.json: skipped: unknown schema &#34;someone\/else@1&#34;/);
  assert.match(page, /No latency histogram among the inputs/);
  assert.match(page, /<\/html>\n$/);
  // what there is is still shown: the run's throughput
  assert.equal((page.match(/<svg/g) ?? []).length, 2, 'throughput and latency');
  assert.match(r.stderr, /note: .*has no points/);
});

test('bad input: malformed JSON names FILE:LINE:COLUMN; missing files, no output and nothing usable exit 2', async () => {
  const dir = tmpDir('dbsmack-report-err-');
  writeFileSync(path.join(dir, 'broken.json'), '{\n  "schema": "dbsmack/run@1",\n  "status": oops\n}\n');
  writeFileSync(path.join(dir, 'other.json'), '{"schema":"x"}');
  let r = await runCli(['report', 'broken.json', '--html', 'r.html'], { cwd: dir });
  assert.equal(r.code, 2);
  assert.match(r.stderr, /^dbsmack: broken\.json:3:13: not valid JSON: unexpected "o", expected a value\n/);
  assert.doesNotMatch(r.stderr, /at .*\.js:\d+/, 'no stack trace');
  r = await runCli(['report', 'missing.json', '--html', 'r.html'], { cwd: dir });
  assert.equal(r.code, 2);
  assert.match(r.stderr, /cannot read missing\.json: no such file/);
  r = await runCli(['report', fx('run-stall.json')], { cwd: dir });
  assert.equal(r.code, 2);
  assert.match(r.stderr, /nothing to write\nhint: give --html FILE/);
  r = await runCli(['report', 'other.json', '--html', 'r.html'], { cwd: dir });
  assert.equal(r.code, 2);
  assert.match(r.stderr, /no input can be shown: other\.json: unknown schema "x"/);
  assert.equal(existsSync(path.join(dir, 'r.html')), false);
});

test('vega is loaded lazily: only render-svg.ts imports it, dynamically', () => {
  const files: string[] = [];
  const walk = (d: string): void => {
    for (const e of readdirSync(d, { withFileTypes: true })) {
      if (e.isDirectory()) walk(path.join(d, e.name));
      else if (e.name.endsWith('.ts')) files.push(path.join(d, e.name));
    }
  };
  walk(path.join(ROOT, 'src'));
  const heavy = /(?:from\s+|import\()\s*'(vega|vega-lite|@resvg\/resvg-js|log-update)'/g;
  const found: string[] = [];
  for (const f of files) {
    for (const m of readFileSync(f, 'utf8').matchAll(heavy)) {
      found.push(`${path.relative(ROOT, f)}: ${m[0].startsWith('import(') ? 'dynamic' : 'static'} ${m[1]}`);
    }
  }
  assert.deepEqual(found.sort(), [
    'src/report/png.ts: dynamic @resvg/resvg-js',
    'src/report/progress.ts: dynamic log-update',
    'src/report/render-svg.ts: dynamic vega',
    'src/report/render-svg.ts: dynamic vega-lite',
  ]);
});

test('findJsonFault points at the first error', () => {
  assert.equal(findJsonFault('{"a": [1, 2, {"b": null}], "c": "x\\n"}'), undefined);
  assert.deepEqual(findJsonFault('{"a": 1,}'), {
    offset: 8,
    message: `unexpected "}", expected a property name in double quotes`,
  });
  assert.deepEqual(findJsonFault('[1 2]'), { offset: 3, message: `unexpected "2", expected ',' or ']'` });
  assert.equal(
    findJsonFault('{"a": "unterminated')?.message,
    'unexpected end of file, expected a closing quote',
  );
  assert.equal(findJsonFault('{} x')?.offset, 3);
});

test('probe data of a shape the report does not know is shown generically: tables, and bars for lists', async () => {
  const run = readJson<RunResult>('run-stall.json');
  const custom = {
    source: 'performance_schema',
    waits: [
      { event: 'wait/synch/mutex/sql/LOCK_open', count: 4512, wait_ms: 812.5 },
      { event: 'wait/io/file/innodb/innodb_log_file', count: 120, wait_ms: 40.1 },
    ],
    threads: { voluntary_ctxsw: 10234, involuntary_ctxsw: 88 },
  };
  // A probe's data of a shape the report does not know: shown generically.
  const doc = { ...run, label: 'profiled', custom_probe: custom } as unknown as RunResult;
  const m = buildReportModel({ inputs: [{ kind: 'run', source: 'p.json', doc }], skipped: [] });
  assert.deepEqual(
    m.probes.map((p) => p.key),
    ['custom_probe'],
  );
  const specs = reportCharts(m);
  const bars = specs.find((c) => c.id === 'probe-profiled-custom-probe-waits');
  assert.ok(bars, specs.map((c) => c.id).join(', '));
  const rendered = await renderCharts(specs);
  const page = renderHtml(m, rendered);
  const has = (text: string, why: string): void => assert.ok(page.includes(text), why);
  has(
    '<td>wait/synch/mutex/sql/LOCK_open</td><td class="n">4,512</td><td class="n">813</td>',
    'the waits table',
  );
  has('<td>voluntary_ctxsw</td><td class="n">10,234</td>', 'the thread statistics');
  has('<figure id="probe-profiled-custom-probe-waits"', 'the bars of the waits');
  has('>wait (ms)</text>', 'the bars are sized by the wait time, titled with its unit');
  assert.ok(!page.includes('Not measured in these runs'));
});

test('a sweep run flagged as an outlier is marked on the throughput chart', async () => {
  const sweep = readJson<SweepResult>('sweep-postgres.json');
  for (const p of sweep.points) for (const r of p.runs) r.outlier = false;
  sweep.points[1]!.runs[0]!.outlier = true;
  const m = buildReportModel({ inputs: [{ kind: 'sweep', source: 's.json', doc: sweep }], skipped: [] });
  const chart = throughputChart(m)!;
  const layers = chart.spec.layer as { data: { values: unknown[] } }[];
  assert.equal(layers.length, 4);
  assert.deepEqual(
    layers[3]!.data.values.map((r) => (r as { clients: number }).clients),
    [sweep.points[1]!.clients],
  );
  const [svg] = await renderCharts([chart]);
  assert.match(svg!.svg, /red cross: an outlier among its repeats/);
});

test('a repeat that stopped early is left out of the medians when a complete one is there, and the note says so', async () => {
  const sweep = readJson<SweepResult>('sweep-postgres.json');
  const point = sweep.points[0]!;
  const partial = point.runs[0]!;
  partial.status = 'partial';
  partial.qps = 1;
  const doc = partial as unknown as { result: RunResult };
  doc.result.status = 'partial';
  doc.result.totals.qps = 1;
  const m = buildReportModel({ inputs: [{ kind: 'sweep', source: 's.json', doc: sweep }], skipped: [] });
  const s = m.series.find((x) => x.clients === point.clients)!;
  const rest = point.runs.slice(1).map((r) => r.qps);
  assert.equal(rest.length, 2);
  assert.equal(s.n, rest.length);
  assert.equal(s.left_out, 1);
  assert.equal(s.qps_min, Math.min(...rest));
  assert.equal(s.qps_median, (rest[0]! + rest[1]!) / 2);
  assert.ok(
    m.notes.some((n) => /is partial.*left out of the medians there/.test(n)),
    m.notes.join('\n'),
  );
  // with every repeat stopped early, the figures are theirs (there is nothing else to show)
  for (const r of point.runs) {
    r.status = 'partial';
    (r as unknown as { result: RunResult }).result.status = 'partial';
  }
  const all = buildReportModel({ inputs: [{ kind: 'sweep', source: 's.json', doc: sweep }], skipped: [] });
  const s2 = all.series.find((x) => x.clients === point.clients)!;
  assert.equal(s2.n, point.runs.length);
  assert.equal(s2.left_out, undefined);
});
