/**
 * What a report costs: loading vega, drawing each chart to SVG, SVG to PNG, and the whole HTML page, on the
 * fixture sweeps (2 labels × 4 client counts × 3 repeats, a comparison and a stalled run).
 *   node --import tsx bench/report-render.ts
 */

import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { reportCharts } from '../src/report/charts.ts';
import { renderHtml } from '../src/report/html.ts';
import { resolveReportInputs } from '../src/report/inputs.ts';
import { buildReportModel } from '../src/report/model.ts';
import { svgToPng } from '../src/report/png.ts';
import { renderCharts } from '../src/report/render-svg.ts';

const fix = path.join(import.meta.dirname, '..', 'test', 'fixtures', 'report');
const files = ['sweep-mariadb.json', 'sweep-postgres.json', 'compare-qps.json', 'run-stall.json'].map((f) =>
  path.join(fix, f),
);
const ms = (t0: number): string => `${(performance.now() - t0).toFixed(0)} ms`;

let t = performance.now();
await Promise.all([import('vega'), import('vega-lite')]);
console.log(`import vega + vega-lite: ${ms(t)}`);

t = performance.now();
const model = buildReportModel(await resolveReportInputs(files));
console.log(`read inputs and build the model: ${ms(t)}`);

const specs = reportCharts(model);
for (let round = 1; round <= 3; round++) {
  t = performance.now();
  const charts = await renderCharts(specs);
  const first = performance.now() - t;
  t = performance.now();
  const html = renderHtml(model, charts);
  console.log(
    `round ${round}: ${charts.length} charts to SVG ${first.toFixed(0)} ms (${(first / charts.length).toFixed(0)} ms each), HTML ${ms(t)}, ${(html.length / 1024).toFixed(0)} KiB`,
  );
  if (round === 3) {
    t = performance.now();
    let bytes = 0;
    for (const c of charts) bytes += (await svgToPng(c.svg)).length;
    console.log(`${charts.length} PNGs (2× scale): ${ms(t)}, ${(bytes / 1024).toFixed(0)} KiB in all`);
  }
}
