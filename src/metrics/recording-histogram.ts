/**
 * The load threads' histograms: HdrHistogram's bucket layout for 1 µs to 1 hour at 3 significant digits
 * (23,552 buckets), recorded into a plain `Float64Array` by the index arithmetic HdrHistogram uses, so
 * that every value lands in the bucket where the main thread's 64-bit histograms (histogram.ts:
 * hdr-histogram-js's JavaScript ones, the same layout) would record it. A snapshot is the buckets that
 * hold values as (index, count) pairs: a few hundred numbers that a thread posts as they are and the main
 * thread adds straight into its histograms (`addSnapshot`).
 *
 * Why not hdr-histogram-js's own recording histograms: its 32-bit WebAssembly one cost every load thread
 * 10–15 ms of CPU to instantiate at each run, every value a call across into WebAssembly, and every
 * snapshot a V2 encoding and a deflate in the thread and an inflate and a decoding in the main thread.
 * This file loads nothing: the load threads no longer load zlib or any of that package.
 */

/** Highest value tracked, in microseconds (1 hour). Longer latencies are clamped to it. */
export const HIGHEST_US = 3_600_000_000;
/** The recording layout's lowest discernible value and significant digits (HIGHEST_US is its highest). */
export const LOWEST_US = 1;
export const DIGITS = 3;

// HdrHistogram's layout for lowest 1, 3 digits: sub-buckets of 2048 (the power of two above 2 × 10³),
// the lower half of each bucket after the first shared with the one below; unit magnitude 0. Bucket b
// holds values below 2048 × 2^b at a step of 2^b; 22 buckets reach past HIGHEST_US, and the counts array
// is (22 + 1) × 1024 long. A value v < 2^32 is in bucket b = 21 − clz32(v | 2047) (HdrHistogram's
// 64 − 11 − clz64(v | mask)) at sub-bucket v >> b, whose index ((b + 1) << 10) + (v >> b) − 1024 is
// (b << 10) + (v >> b). HIGHEST_US is below 2^32, so every value recorded fits.
const SUB_BUCKET_MASK = 2047;
/** The length of the layout's counts array (`countsArrayLength` of the same histogram in hdr-histogram-js). */
export const COUNTS_LENGTH = 23 * 1024;

/** The counts-array index of a value in [0, HIGHEST_US] (an integer), as HdrHistogram computes it. */
export function countsIndex(v: number): number {
  const b = 21 - Math.clz32(v | SUB_BUCKET_MASK);
  return (b << 10) + (v >>> b);
}

/**
 * The buckets of a recording that hold values, lowest index first, as pairs: `[index, count, index,
 * count, …]`. Counts are exact to 2^53, as the main thread's 64-bit histograms count: a snapshot's
 * interval can be as long as the run (`--report-interval`), and 32 bits would wrap after 4.3 billion.
 */
export type HistogramCounts = Float64Array;

/** What the load threads do with a histogram. */
export interface RecordingHistogram {
  readonly totalCount: number;
  /** Record a value in µs: an integer from 0 to HIGHEST_US (the recorder clamps and rounds). */
  recordValue(value: number): void;
  /** The counts since the last reset, as (index, count) pairs. */
  counts(): HistogramCounts;
  reset(): void;
}

class Recording implements RecordingHistogram {
  private readonly buckets = new Float64Array(COUNTS_LENGTH);
  private total = 0;
  /** The lowest and highest index recorded into since the last reset (lo > hi when none). */
  private lo = COUNTS_LENGTH;
  private hi = -1;

  get totalCount(): number {
    return this.total;
  }

  recordValue(value: number): void {
    const i = countsIndex(value);
    this.buckets[i] = (this.buckets[i] as number) + 1;
    this.total++;
    if (i > this.hi) this.hi = i;
    if (i < this.lo) this.lo = i;
  }

  counts(): HistogramCounts {
    const { buckets, lo, hi } = this;
    let n = 0;
    for (let i = lo; i <= hi; i++) if (buckets[i] !== 0) n++;
    const out = new Float64Array(2 * n);
    let at = 0;
    for (let i = lo; i <= hi; i++) {
      const c = buckets[i] as number;
      if (c === 0) continue;
      out[at++] = i;
      out[at++] = c;
    }
    return out;
  }

  reset(): void {
    if (this.hi >= this.lo) this.buckets.fill(0, this.lo, this.hi + 1);
    this.lo = COUNTS_LENGTH;
    this.hi = -1;
    this.total = 0;
  }
}

/** A histogram of 1 µs to 1 hour at 3 significant digits in HdrHistogram's layout. */
export function recordingHistogram(): RecordingHistogram {
  return new Recording();
}
