/** Small number formatters shared by the text reports. */
import type { LatencySummary } from '../metrics/run-result.ts';

export const fmtMs = (v: number): string => (v >= 100 ? v.toFixed(1) : v >= 10 ? v.toFixed(2) : v.toFixed(3));
export const fmtRate = (v: number): string => v.toFixed(2);
export const fmtInt = (v: number): string => String(Math.round(v));

export function pad(s: string, width: number, left = false): string {
  return left ? s.padEnd(width) : s.padStart(width);
}

/** Render rows as a plain-text table; the first column is left-aligned, the rest right-aligned. */
export function table(header: string[], rows: string[][]): string {
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? '').length)));
  const line = (r: string[]): string =>
    r
      .map((c, i) => pad(c, widths[i] ?? 0, i === 0))
      .join('  ')
      .trimEnd();
  return [line(header), ...rows.map(line)].join('\n');
}

/** The latency columns every text table shows: min, mean, p50, p95, p99, max (ms). */
export function latencyCells(l: LatencySummary): string[] {
  return [fmtMs(l.min), fmtMs(l.mean), fmtMs(l.p50), fmtMs(l.p95), fmtMs(l.p99), fmtMs(l.max)];
}
