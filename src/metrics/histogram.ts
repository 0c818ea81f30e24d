/**
 * Latency histograms: HdrHistogram with microsecond values, 3 significant digits, 1 µs to 1 hour.
 * Workers record into 32-bit WebAssembly histograms (recording-histogram.ts, about 27 ns a value);
 * snapshots travel as the standard compressed base64 encoding, so they can be merged exactly in the main
 * thread (into the 64-bit JavaScript histograms of this file) and stored in the history.
 */
import type { Histogram as HdrHistogram } from 'hdr-histogram-js';
// The parts, not the package's index: the index also loads its log writer, which creates an
// Intl.NumberFormat at import (ICU set-up, about 90 ms of CPU on this machine) in every thread. Nor its
// builder or `encoding.js`: those load its WebAssembly wrapper (pako and the module's 39 kB of base64),
// which the main thread never uses.
import { decompress, doDecode } from 'hdr-histogram-js/dist/JsHistogram.encoding.js';
import { constructorFromBucketSize } from 'hdr-histogram-js/dist/JsHistogramFactory.js';
import { round3 } from '../numbers.ts';
import {
  encodeRecording,
  HIGHEST_US,
  initHistograms,
  isRecordingHistogram,
  type RecordingHistogram,
  recordingHistogram,
} from './recording-histogram.ts';
import type { LatencySummary } from './run-result.ts';

export type Histogram = HdrHistogram;
export { HIGHEST_US, initHistograms, type RecordingHistogram, recordingHistogram };

/** A 64-bit histogram to merge snapshots into (plain JS, no explicit destroy needed). */
export function mergingHistogram(): Histogram {
  const Ctor = constructorFromBucketSize(64);
  const h = new Ctor(1, HIGHEST_US, 3);
  h.autoResize = true;
  return h as unknown as Histogram;
}

/** The standard compressed base64 encoding, of a merged histogram or of a worker's recording one. */
export function encodeHistogram(h: Histogram | RecordingHistogram): string {
  if (isRecordingHistogram(h)) return encodeRecording(h);
  return (h as unknown as { encodeIntoCompressedBase64(): string }).encodeIntoCompressedBase64();
}

/** Decode a base64 snapshot into a plain 64-bit histogram. */
export function decodeHistogram(b64: string): Histogram {
  return doDecode(
    decompress(Uint8Array.from(Buffer.from(b64.trim(), 'base64'))),
    64,
    0,
  ) as unknown as Histogram;
}

/** Latency summary in milliseconds. An empty histogram gives zeros. */
export function summarize(h: Histogram): LatencySummary {
  if (h.totalCount === 0) {
    return { min: 0, mean: 0, p50: 0, p90: 0, p95: 0, p99: 0, p999: 0, max: 0, stddev: 0 };
  }
  const ms = (us: number): number => round3(us / 1000);
  const { mean, stddev } = meanAndDeviation(h);
  return {
    min: ms(h.minNonZeroValue),
    mean: ms(mean),
    p50: ms(h.getValueAtPercentile(50)),
    p90: ms(h.getValueAtPercentile(90)),
    p95: ms(h.getValueAtPercentile(95)),
    p99: ms(h.getValueAtPercentile(99)),
    p999: ms(h.getValueAtPercentile(99.9)),
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
  let total = 0;
  forEachRecorded(h, (_lo, median, count) => {
    total += median * count;
  });
  const mean = total / h.totalCount;
  let squares = 0;
  forEachRecorded(h, (_lo, median, count) => {
    const d = median - mean;
    squares += d * d * count;
  });
  return { mean, stddev: Math.sqrt(squares / h.totalCount) };
}

/** Value at a percentile in milliseconds (0 for an empty histogram). */
export function percentileMs(h: Histogram, p: number): number {
  return h.totalCount === 0 ? 0 : round3(h.getValueAtPercentile(p) / 1000);
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
