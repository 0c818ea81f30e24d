/**
 * A latency histogram as a chart needs it: the RunResult's HDR histogram (compressed base64, µs) decoded
 * and regrouped into log-spaced bins, so one chart shows microseconds and seconds alike.
 */
import { decodeHistogram, forEachRecorded, percentileMs } from '../metrics/histogram.ts';
import type { StatementKind } from '../metrics/kinds.ts';

export interface HistogramBin {
  /** Lower and upper edge, ms. */
  lo_ms: number;
  hi_ms: number;
  count: number;
  /** Percentage of all values in this bin. */
  share: number;
}

export interface HistogramView {
  name: string;
  kind: StatementKind;
  count: number;
  bins: HistogramBin[];
  percentiles: { p50: number; p90: number; p99: number; p999: number; max: number };
}

/** Bins per factor of ten: fine enough to see a second mode, coarse enough to read. */
const BINS_PER_DECADE = 10;

export function histogramView(name: string, kind: StatementKind, b64: string): HistogramView {
  const h = decodeHistogram(b64);
  const total = h.totalCount;
  const byBin = new Map<number, number>();
  forEachRecorded(h, (_lo, us, c) => {
    const bin = Math.floor(Math.log10(Math.max(us, 1)) * BINS_PER_DECADE);
    byBin.set(bin, (byBin.get(bin) ?? 0) + c);
  });
  const bins: HistogramBin[] = [];
  if (byBin.size > 0) {
    const lo = Math.min(...byBin.keys());
    const hi = Math.max(...byBin.keys());
    // Empty bins between the extremes are kept so that gaps show as gaps, not as a joined line.
    for (let b = lo; b <= hi; b++) {
      const count = byBin.get(b) ?? 0;
      bins.push({
        lo_ms: 10 ** (b / BINS_PER_DECADE) / 1000,
        hi_ms: 10 ** ((b + 1) / BINS_PER_DECADE) / 1000,
        count,
        share: total > 0 ? (count / total) * 100 : 0,
      });
    }
  }
  return {
    name,
    kind,
    count: total,
    bins,
    percentiles: {
      p50: percentileMs(h, 50),
      p90: percentileMs(h, 90),
      p99: percentileMs(h, 99),
      p999: percentileMs(h, 99.9),
      max: total === 0 ? 0 : Math.round(h.maxValue) / 1000,
    },
  };
}
