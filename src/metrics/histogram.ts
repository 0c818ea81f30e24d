/**
 * Latency histograms: HdrHistogram with microsecond values, 3 significant digits, 1 µs to 1 hour.
 * Workers record into 32-bit WebAssembly histograms (about 27 ns a value); snapshots travel as the standard
 * compressed base64 encoding, so they can be merged exactly in the main thread and stored in the history.
 */
import type { Histogram as HdrHistogram } from 'hdr-histogram-js';
// The parts, not the package's index: the index also loads its log writer, which creates an
// Intl.NumberFormat at import (ICU set-up, about 90 ms of CPU on this machine) in every thread.
import { decodeFromCompressedBase64, encodeIntoCompressedBase64 } from 'hdr-histogram-js/dist/encoding.js';
import { build } from 'hdr-histogram-js/dist/HistogramBuilder.js';
import { initWebAssemblySync } from 'hdr-histogram-js/dist/wasm/index.js';
import type { LatencySummary } from './run-result.ts';

export type Histogram = HdrHistogram;

/** Highest value tracked, in microseconds (1 hour). Longer latencies are clamped to it. */
export const HIGHEST_US = 3_600_000_000;

let wasmReady = false;

/**
 * Load the WebAssembly histogram implementation; call once per thread before `recordingHistogram`. The
 * synchronous loader: the asynchronous one asks `typeof Response`, which makes Node load its fetch
 * implementation (undici, some 30 ms of CPU) in each load worker.
 */
export async function initHistograms(): Promise<void> {
  if (!wasmReady) {
    initWebAssemblySync();
    wasmReady = true;
  }
}

/** A fast histogram to record into (WebAssembly when loaded). Call `destroy()` when done with it. */
export function recordingHistogram(): Histogram {
  return build({
    bitBucketSize: 32,
    useWebAssembly: wasmReady,
    lowestDiscernibleValue: 1,
    highestTrackableValue: HIGHEST_US,
    numberOfSignificantValueDigits: 3,
    autoResize: false,
  });
}

/** A 64-bit histogram to merge snapshots into (plain JS, no explicit destroy needed). */
export function mergingHistogram(): Histogram {
  return build({
    bitBucketSize: 64,
    useWebAssembly: false,
    lowestDiscernibleValue: 1,
    highestTrackableValue: HIGHEST_US,
    numberOfSignificantValueDigits: 3,
    autoResize: true,
  });
}

export function encodeHistogram(h: Histogram): string {
  return encodeIntoCompressedBase64(h);
}

/** Decode a base64 snapshot into a plain 64-bit histogram. */
export function decodeHistogram(b64: string): Histogram {
  return decodeFromCompressedBase64(b64, 64, false);
}

const r3 = (v: number): number => Math.round(v * 1000) / 1000;

/** Latency summary in milliseconds. An empty histogram gives zeros. */
export function summarize(h: Histogram): LatencySummary {
  if (h.totalCount === 0) {
    return { min: 0, mean: 0, p50: 0, p90: 0, p95: 0, p99: 0, p999: 0, max: 0, stddev: 0 };
  }
  const ms = (us: number): number => r3(us / 1000);
  return {
    min: ms(h.minNonZeroValue),
    mean: ms(h.mean),
    p50: ms(h.getValueAtPercentile(50)),
    p90: ms(h.getValueAtPercentile(90)),
    p95: ms(h.getValueAtPercentile(95)),
    p99: ms(h.getValueAtPercentile(99)),
    p999: ms(h.getValueAtPercentile(99.9)),
    max: ms(h.maxValue),
    stddev: ms(h.stdDeviation),
  };
}

/** Value at a percentile in milliseconds (0 for an empty histogram). */
export function percentileMs(h: Histogram, p: number): number {
  return h.totalCount === 0 ? 0 : r3(h.getValueAtPercentile(p) / 1000);
}

/** The internals of hdr-histogram-js's JS histograms that let us walk the recorded values. */
interface CountsWalk {
  countsArrayLength: number;
  getCountAtIndex(i: number): number;
  valueFromIndex(i: number): number;
  medianEquivalentValue(v: number): number;
}

/**
 * Call `fn` for every bucket of `h` that holds values: its lowest equivalent value and its median
 * equivalent value (µs), and its count. Works on decoded (plain JS) histograms, whose counts can be walked.
 */
export function forEachRecorded(
  h: Histogram,
  fn: (lowestUs: number, medianUs: number, count: number) => void,
): void {
  const walk = h as unknown as CountsWalk;
  if (typeof walk.getCountAtIndex !== 'function')
    throw new Error('histogram implementation cannot be walked');
  for (let i = 0; i < walk.countsArrayLength; i++) {
    const c = walk.getCountAtIndex(i);
    if (c === 0) continue;
    const lo = walk.valueFromIndex(i);
    fn(lo, walk.medianEquivalentValue(lo), c);
  }
}
