/**
 * SVG to PNG without a browser (resvg), for pasting charts into issues and mail. Text uses the system's
 * fonts (DejaVu on Debian: the `fonts-dejavu-core` package), so a machine without fonts draws no labels.
 */
import { loadModule } from '../load-module.ts';

/** Rasterise an SVG at twice its size, so text stays crisp on high-density screens. */
export async function svgToPng(svg: string, scale = 2): Promise<Buffer> {
  const { Resvg } = await loadModule<typeof import('@resvg/resvg-js')>('@resvg/resvg-js');
  const r = new Resvg(svg, {
    fitTo: { mode: 'zoom', value: scale },
    background: 'white',
    font: { loadSystemFonts: true, defaultFontFamily: 'DejaVu Sans', sansSerifFamily: 'DejaVu Sans' },
  });
  return r.render().asPng();
}
