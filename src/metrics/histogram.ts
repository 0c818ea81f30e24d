/**
 * Latency histograms: HdrHistogram with microsecond values, 3 significant digits, 1 µs to 1 hour.
 * The load threads record into plain counts in HdrHistogram's layout (recording-histogram.ts);
 * their snapshots, the buckets that hold values, are added exactly into the main thread's 64-bit
 * JavaScript histograms of this file, whose standard compressed base64 encoding (hdr-codec.ts) is what
 * runs and the history store.
 */
import type { Histogram as HdrHistogram } from 'hdr-histogram-js';
// The parts, not the package's index: the index also loads its log writer, which creates an
// Intl.NumberFormat at import (ICU set-up, about 90 ms of CPU on this machine) in every thread. Nor its
// builder or its encoding modules: those load pako (hdr-codec.ts reads and writes the encoding instead).
import { constructorFromBucketSize } from 'hdr-histogram-js/dist/JsHistogramFactory.js';
import { round3 } from '../numbers.ts';
import { decodeCompressed, encodeCompressed } from './hdr-codec.ts';
import {
  COUNTS_LENGTH,
  DIGITS,
  HIGHEST_US,
  type HistogramCounts,
  LOWEST_US,
  type RecordingHistogram,
  recordingHistogram,
} from './recording-histogram.ts';
import type { LatencySummary } from './run-result.ts';

export type Histogram = HdrHistogram;
export { HIGHEST_US, type HistogramCounts, type RecordingHistogram, recordingHistogram };

/** A 64-bit histogram to merge snapshots into (plain JS, no explicit destroy needed). */
export function mergingHistogram(): Histogram {
  const Ctor = constructorFromBucketSize(64);
  const h = new Ctor(LOWEST_US, HIGHEST_US, DIGITS);
  h.autoResize = true;
  return h as unknown as Histogram;
}

/** The standard compressed base64 encoding of a histogram. */
export function encodeHistogram(h: Histogram): string {
  return encodeCompressed(h);
}

/** Decode a base64 snapshot into a plain 64-bit histogram. */
export function decodeHistogram(b64: string): Histogram {
  return decodeCompressed(b64);
}

/**
 * Add a load thread's snapshot (a recording histogram's `counts()`: (index, count) pairs in the recording
 * layout) into a histogram, exactly as adding a histogram of the recording layout holding those counts
 * would, the way `add` of hdr-histogram-js does it: the counts, the total, the maximum and the lowest value
 * above zero such a histogram has (each its bucket's, as a decoded histogram's), its time stamps (a new
 * histogram's). The main thread does this for every histogram of every snapshot, twice (the run's totals,
 * the interval's figures): where `dest` has the recording layout (every merging histogram) the counts go
 * straight into it; otherwise through a histogram made of them.
 */
export function addSnapshot(dest: Histogram, pairs: HistogramCounts): void {
  const d = dest as unknown as AddingInto;
  if (
    typeof d.addToCountAtIndex !== 'function' ||
    d.lowestDiscernibleValue !== LOWEST_US ||
    d.highestTrackableValue !== HIGHEST_US ||
    d.numberOfSignificantValueDigits !== DIGITS ||
    d.countsArrayLength < COUNTS_LENGTH
  ) {
    addInto(dest, histogramOf(pairs));
    return;
  }
  const n = pairs.length >> 1;
  const mask = d.unitMagnitudeMask;
  // what establishInternalTackingValues gives a histogram of these counts: its maximum from the highest
  // index holding values, its lowest value above zero from the lowest such index but 0
  let srcMax = 0;
  let srcMin = Number.MAX_VALUE;
  if (n > 0) {
    srcMax = d.highestEquivalentValue(d.valueFromIndex(pairs[2 * n - 2] as number)) + mask;
    const first = pairs[0] === 0 ? (n > 1 ? (pairs[2] as number) : -1) : (pairs[0] as number);
    if (first > 0) {
      const v = d.valueFromIndex(first);
      if (v > mask)
        srcMin = Math.floor(v / d.lowestDiscernibleValueRounded) * d.lowestDiscernibleValueRounded;
    }
  }
  let observed = 0;
  for (let i = 0; i < 2 * n; i += 2) {
    const k = pairs[i + 1] as number;
    d.addToCountAtIndex(pairs[i] as number, k);
    observed += k;
  }
  // a new histogram's time stamps (start MAX_SAFE_INTEGER, end 0)
  addedTotals(d, observed, srcMax, srcMin, Number.MAX_SAFE_INTEGER, 0);
}

/** A 64-bit histogram of the recording layout holding a snapshot's counts. */
export function histogramOf(pairs: HistogramCounts): Histogram {
  const Ctor = constructorFromBucketSize(64);
  const h = new Ctor(LOWEST_US, HIGHEST_US, DIGITS) as unknown as Histogram & {
    setCountAtIndex(i: number, c: number): void;
    establishInternalTackingValues(length?: number): void;
  };
  const n = pairs.length >> 1;
  for (let i = 0; i < 2 * n; i += 2) h.setCountAtIndex(pairs[i] as number, pairs[i + 1] as number);
  h.establishInternalTackingValues(n > 0 ? (pairs[2 * n - 2] as number) + 1 : 0);
  return h;
}

/** The internals of hdr-histogram-js's JS histograms that adding into one writes. */
type Adding = CountsWalk & {
  startTimeStampMsec: number;
  endTimeStampMsec: number;
  totalCount: number;
  maxValue: number;
  minNonZeroValue: number;
  addToCountAtIndex(i: number, c: number): void;
  setTotalCount(n: number): void;
  updatedMaxValue(v: number): void;
  updateMinNonZeroValue(v: number): void;
  highestEquivalentValue(v: number): number;
};

/** What `addSnapshot` reads of its destination besides. */
type AddingInto = Adding & {
  lowestDiscernibleValue: number;
  highestTrackableValue: number;
  numberOfSignificantValueDigits: number;
  unitMagnitudeMask: number;
  lowestDiscernibleValueRounded: number;
};

/**
 * After the counts of a source were added into `d` (`observed` of them): its total, maximum, lowest value
 * above zero and time stamps, as the package's `add` sets them from the source's.
 */
function addedTotals(
  d: Adding,
  observed: number,
  max: number,
  minNonZero: number,
  startMs: number,
  endMs: number,
): void {
  d.setTotalCount(d.totalCount + observed);
  d.updatedMaxValue(Math.max(d.maxValue, max));
  d.updateMinNonZeroValue(Math.min(d.minNonZeroValue, minNonZero));
  d.startTimeStampMsec = Math.min(d.startTimeStampMsec, startMs);
  d.endTimeStampMsec = Math.max(d.endTimeStampMsec, endMs);
}

/** Latency summary in milliseconds. An empty histogram gives zeros. */
export function summarize(h: Histogram): LatencySummary {
  if (h.totalCount === 0) {
    return { min: 0, mean: 0, p50: 0, p90: 0, p95: 0, p99: 0, p999: 0, max: 0, stddev: 0 };
  }
  const ms = (us: number): number => round3(us / 1000);
  const { mean, stddev } = meanAndDeviation(h);
  const [p50 = 0, p90 = 0, p95 = 0, p99 = 0, p999 = 0] = percentilesOf(h, SUMMARY_PERCENTILES);
  return {
    min: ms(h.minNonZeroValue),
    mean: ms(mean),
    p50: ms(p50),
    p90: ms(p90),
    p95: ms(p95),
    p99: ms(p99),
    p999: ms(p999),
    max: ms(h.maxValue),
    stddev: ms(stddev),
  };
}

/**
 * The mean and standard deviation (µs) exactly as hdr-histogram-js computes them (each bucket's median
 * equivalent value times its count, summed lowest first), in two walks of the recorded buckets rather than
 * three passes of its iterator over every index up to the highest value (`stdDeviation` computes the mean
 * again): about 20 ms less of the main thread's CPU at the end of a short run.
 */
export function meanAndDeviation(h: Histogram): { mean: number; stddev: number } {
  if (typeof (h as unknown as CountsWalk).getCountAtIndex !== 'function')
    return { mean: h.mean, stddev: h.stdDeviation };
  const mean = meanOf(h);
  let squares = 0;
  forEachRecorded(h, (_lo, median, count) => {
    const d = median - mean;
    squares += d * d * count;
  });
  return { mean, stddev: Math.sqrt(squares / h.totalCount) };
}

/** The mean (µs) as hdr-histogram-js's `mean` gives it, in one walk of the recorded buckets (see above). */
export function meanOf(h: Histogram): number {
  if (typeof (h as unknown as CountsWalk).getCountAtIndex !== 'function') return h.mean;
  if (h.totalCount === 0) return 0;
  let total = 0;
  forEachRecorded(h, (_lo, median, count) => {
    total += median * count;
  });
  return total / h.totalCount;
}

const SUMMARY_PERCENTILES = [50, 90, 95, 99, 99.9];

/**
 * The values (µs) at several percentiles, each exactly what `getValueAtPercentile` gives, in one walk of
 * the counts from the lowest recorded value rather than one walk per percentile from index 0 (a summary
 * asks for five, and a run summarizes a histogram per statement type, step and stage).
 */
export function percentilesOf(h: Histogram, percentiles: readonly number[]): number[] {
  const walk = h as unknown as CountsWalk & {
    lowestEquivalentValue(v: number): number;
    highestEquivalentValue(v: number): number;
  };
  if (typeof walk.getCountAtIndex !== 'function' || h.totalCount === 0) {
    return percentiles.map((p) => h.getValueAtPercentile(p));
  }
  // the count each percentile must reach, as the package rounds it (up, less one ulp of the product)
  const wanted = percentiles.map((p) => {
    const fp = (Math.min(p, 100) / 100) * h.totalCount;
    return Math.max(Math.ceil(fp - ulp(fp)), 1);
  });
  const order = percentiles.map((_p, k) => k).sort((a, b) => (wanted[a] as number) - (wanted[b] as number));
  const out = percentiles.map(() => 0);
  const from = walk.getCountAtIndex(0) > 0 ? 0 : Math.max(0, walk.countsArrayIndex(h.minNonZeroValue));
  let next = 0;
  let total = 0;
  for (let i = from; i < walk.countsArrayLength && next < order.length; i++) {
    total += walk.getCountAtIndex(i);
    while (next < order.length && total >= (wanted[order[next] as number] as number)) {
      const k = order[next] as number;
      const v = walk.valueFromIndex(i);
      out[k] = percentiles[k] === 0 ? walk.lowestEquivalentValue(v) : walk.highestEquivalentValue(v);
      next++;
    }
  }
  return out;
}

/** hdr-histogram-js's unit in the last place (ulp.js), which its percentile rounding subtracts. */
function ulp(x: number): number {
  return 2 ** (Math.floor(Math.log2(x)) - 52);
}

/**
 * Add `src` into `dest` (JS histograms), exactly as `dest.add(src)` does, but visiting only the indexes
 * from `src`'s lowest to its highest recorded value: `add` walks all of the counts (23,552 of them
 * for 1 µs to 1 hour), and the engine adds a decoded snapshot per statement type, worker and interval.
 * Histograms of another layout, or values beyond `dest`'s range (which `add` resizes for), go to `add`.
 */
export function addInto(dest: Histogram, src: Histogram): void {
  type Layout = Adding & { bucketCount: number; subBucketCount: number; unitMagnitude: number };
  const d = dest as unknown as Layout;
  const o = src as unknown as Layout;
  if (
    typeof d.addToCountAtIndex !== 'function' ||
    typeof o.getCountAtIndex !== 'function' ||
    d.bucketCount !== o.bucketCount ||
    d.subBucketCount !== o.subBucketCount ||
    d.unitMagnitude !== o.unitMagnitude ||
    d.highestEquivalentValue(d.valueFromIndex(d.countsArrayLength - 1)) < src.maxValue
  ) {
    dest.add(src);
    return;
  }
  let observed = 0;
  if (src.totalCount > 0) {
    const from = o.getCountAtIndex(0) > 0 ? 0 : Math.max(0, o.countsArrayIndex(src.minNonZeroValue));
    const to = Math.min(o.countsArrayLength - 1, o.countsArrayIndex(src.maxValue));
    for (let i = from; i <= to; i++) {
      const c = o.getCountAtIndex(i);
      if (c > 0) {
        d.addToCountAtIndex(i, c);
        observed += c;
      }
    }
  }
  addedTotals(d, observed, src.maxValue, src.minNonZeroValue, o.startTimeStampMsec, o.endTimeStampMsec);
}

/** Value at a percentile in milliseconds (0 for an empty histogram). */
export function percentileMs(h: Histogram, p: number): number {
  return h.totalCount === 0 ? 0 : round3((percentilesOf(h, [p])[0] as number) / 1000);
}

/** The internals of hdr-histogram-js's JS histograms that let us walk the recorded values. */
interface CountsWalk {
  countsArrayLength: number;
  /** Indexes per power of two above the first (whose unit stays the same within such a block). */
  subBucketHalfCount: number;
  getCountAtIndex(i: number): number;
  valueFromIndex(i: number): number;
  countsArrayIndex(v: number): number;
}

/**
 * Call `fn` for every bucket of `h` that holds values, lowest first: its lowest equivalent value and its
 * median equivalent value (µs), and its count. Works on plain JS histograms (decoded or merging ones), whose
 * counts can be walked. Only the indexes from the lowest to the highest value recorded are visited, and the
 * values are stepped by the unit of each block of `subBucketHalfCount` indexes rather than computed per index
 * (3,750 buckets of a wide distribution: 0.5 ms with hdr-histogram-js's own per-value functions).
 */
export function forEachRecorded(
  h: Histogram,
  fn: (lowestUs: number, medianUs: number, count: number) => void,
): void {
  const walk = h as unknown as CountsWalk;
  if (typeof walk.getCountAtIndex !== 'function' || !(walk.subBucketHalfCount > 0))
    throw new Error('histogram implementation cannot be walked');
  if (h.totalCount === 0) return;
  const half = walk.subBucketHalfCount;
  const from = walk.getCountAtIndex(0) > 0 ? 0 : Math.max(0, walk.countsArrayIndex(h.minNonZeroValue));
  const to = Math.min(walk.countsArrayLength - 1, walk.countsArrayIndex(h.maxValue));
  let block = -1;
  let base = 0;
  let unit = 1;
  for (let i = from; i <= to; i++) {
    const c = walk.getCountAtIndex(i);
    if (c === 0) continue;
    const b = Math.floor(i / half);
    if (b !== block) {
      block = b;
      base = walk.valueFromIndex(b * half);
      unit = walk.valueFromIndex(b * half + 1) - base;
    }
    const lo = base + (i - b * half) * unit;
    fn(lo, lo + Math.floor(unit / 2), c);
  }
}
