/**
 * The workers' WebAssembly histograms (loaded by recording-histogram.ts without hdr-histogram-js's wrapper)
 * and the main thread's merging ones (without its builder) give, byte for byte, the encodings the
 * package's own wrapper and builder give: snapshots, merged totals and stored histograms are unchanged.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { decodeFromCompressedBase64, encodeIntoCompressedBase64 } from 'hdr-histogram-js/dist/encoding.js';
import { build } from 'hdr-histogram-js/dist/HistogramBuilder.js';
import { initWebAssemblySync } from 'hdr-histogram-js/dist/wasm/index.js';
import {
  decodeHistogram,
  encodeHistogram,
  HIGHEST_US,
  meanAndDeviation as meanAndDeviationForTest,
  mergingHistogram,
  recordingHistogram,
  summarize,
} from '../src/metrics/histogram.ts';
import { round3 } from '../src/numbers.ts';

const VALUES = [0, 1, 7, 999, 1000, 1001, 2047, 2048, 99_999, 1_234_567, 3_599_999_999, HIGHEST_US];

test('a recording histogram encodes as the package wrapper does, and decodes to the same counts', () => {
  initWebAssemblySync();
  const theirs = build({
    bitBucketSize: 32,
    useWebAssembly: true,
    lowestDiscernibleValue: 1,
    highestTrackableValue: HIGHEST_US,
    numberOfSignificantValueDigits: 3,
    autoResize: false,
  });
  const ours = recordingHistogram();
  for (let i = 0; i < 5000; i++) {
    const v = VALUES[i % VALUES.length] as number;
    const w = (i * 7919) % 100_000;
    for (const h of [theirs, ours]) {
      h.recordValue(v);
      h.recordValue(w);
    }
  }
  assert.equal(ours.totalCount, theirs.totalCount);
  const snapshot = encodeHistogram(ours);
  assert.equal(snapshot, encodeIntoCompressedBase64(theirs));
  // reset and record again: the same again
  ours.reset();
  theirs.reset();
  assert.equal(ours.totalCount, 0);
  for (const h of [theirs, ours]) for (const v of VALUES) h.recordValue(v);
  assert.equal(encodeHistogram(ours), encodeIntoCompressedBase64(theirs));
  ours.destroy();
  theirs.destroy();
  assert.throws(() => ours.recordValue(1), /destroyed/);
  // decoding: the same histogram as the package's decoder gives
  const mine = decodeHistogram(snapshot);
  const pkg = decodeFromCompressedBase64(snapshot, 64, false);
  assert.equal(mine.totalCount, 10_000);
  assert.equal(encodeIntoCompressedBase64(mine), encodeIntoCompressedBase64(pkg));
  for (const p of [0, 50, 90, 99, 99.9, 100]) {
    assert.equal(mine.getValueAtPercentile(p), pkg.getValueAtPercentile(p), `p${p}`);
  }
});

test('a merging histogram is the 64-bit resizing histogram the package builder makes', () => {
  const theirs = build({
    bitBucketSize: 64,
    useWebAssembly: false,
    lowestDiscernibleValue: 1,
    highestTrackableValue: HIGHEST_US,
    numberOfSignificantValueDigits: 3,
    autoResize: true,
  });
  const ours = mergingHistogram();
  assert.equal(ours.constructor, theirs.constructor);
  assert.equal(ours.autoResize, true);
  for (const h of [theirs, ours]) for (const v of [...VALUES, 2 * HIGHEST_US]) h.recordValue(v);
  assert.equal(encodeHistogram(ours), encodeIntoCompressedBase64(theirs));
  assert.equal(ours.maxValue, theirs.maxValue);
});

test('the summary of a merged histogram gives the mean and deviation hdr-histogram-js gives, to the bit', () => {
  // Several shapes: one value, a narrow band, a wide spread over decades, a long tail.
  const shapes: ((i: number) => number)[] = [
    () => 150,
    (i) => 100 + (i % 37),
    (i) => 1 + ((i * 7919) % 5_000_000),
    (i) => (i % 100 === 0 ? 2_000_000 + i : 200 + ((i * 31) % 900)),
  ];
  for (const [k, shape] of shapes.entries()) {
    const h = mergingHistogram();
    for (let i = 0; i < 20_000; i++) h.recordValue(shape(i));
    const s = summarize(h);
    assert.equal(s.mean, round3(h.mean / 1000), `shape ${k}: mean`);
    assert.equal(s.stddev, round3(h.stdDeviation / 1000), `shape ${k}: stddev`);
    assert.equal(s.p99, round3(h.getValueAtPercentile(99) / 1000), `shape ${k}: p99`);
    // and the unrounded figures, through a histogram decoded from its encoding as stored runs are
    const d = decodeHistogram(encodeHistogram(h));
    const exact = meanAndDeviationForTest(d);
    assert.equal(exact.mean, h.mean, `shape ${k}: exact mean`);
    assert.equal(exact.stddev, h.stdDeviation, `shape ${k}: exact stddev`);
  }
});
