/**
 * Charts to SVG on the server side: vega-lite compiles a spec to vega, vega's headless view renders SVG
 * without a canvas. vega takes about a third of a second to load, so it is imported here, lazily, and only
 * the report command comes here.
 */
import { loadModule } from '../load-module.ts';
import type { ChartSpec } from './charts.ts';

export interface RenderedChart extends ChartSpec {
  svg: string;
}

/**
 * Give every id inside one SVG a chart-specific prefix: vega numbers its clip paths per process, and
 * several SVGs inlined into one page must not share an id.
 */
export function scopeSvgIds(svg: string, scope: string): string {
  const ids = new Set<string>();
  for (const m of svg.matchAll(/\sid="([^"]+)"/g)) ids.add(m[1]!);
  let out = svg;
  for (const id of ids) {
    const esc = id.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
    out = out
      .replace(new RegExp(`\\sid="${esc}"`, 'g'), ` id="${scope}-${id}"`)
      .replace(new RegExp(`url\\(#${esc}\\)`, 'g'), `url(#${scope}-${id})`)
      .replace(new RegExp(`href="#${esc}"`, 'g'), `href="#${scope}-${id}"`);
  }
  return out;
}

/** Render each chart to an SVG string. A spec vega cannot render throws with the chart's title. */
export async function renderCharts(charts: readonly ChartSpec[]): Promise<RenderedChart[]> {
  if (charts.length === 0) return [];
  const [vega, vl] = await Promise.all([
    loadModule<typeof import('vega')>('vega'),
    loadModule<typeof import('vega-lite')>('vega-lite'),
  ]);
  const out: RenderedChart[] = [];
  for (const c of charts) {
    try {
      // biome-ignore lint/suspicious/noExplicitAny: the spec is built loosely typed in charts.ts
      const compiled = vl.compile(c.spec as any).spec;
      const view = new vega.View(vega.parse(compiled), { renderer: 'none' });
      const svg = await view.toSVG();
      view.finalize();
      out.push({ ...c, svg: scopeSvgIds(svg, `c-${c.id}`) });
    } catch (e) {
      throw new Error(`cannot draw the chart "${c.title}": ${(e as Error).message}`);
    }
  }
  return out;
}
