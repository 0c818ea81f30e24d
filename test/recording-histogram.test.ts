/**
 * The load threads' recording histograms (recording-histogram.ts: HdrHistogram's layout in plain counts)
 * and the main thread's merging ones (without hdr-histogram-js's builder) give, byte for byte, the
 * encodings the package's own histograms give: snapshots, merged totals and stored histograms are as the
 * package would have them.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { decodeFromCompressedBase64, encodeIntoCompressedBase64 } from 'hdr-histogram-js/dist/encoding.js';
import { build } from 'hdr-histogram-js/dist/HistogramBuilder.js';
import { initWebAssemblySync } from 'hdr-histogram-js/dist/wasm/index.js';
import {
  addInto,
  addSnapshot,
  decodeHistogram,
  encodeHistogram,
  HIGHEST_US,
  type Histogram,
  histogramOf,
  meanAndDeviation as meanAndDeviationForTest,
  meanOf,
  mergingHistogram,
  percentilesOf,
  recordingHistogram,
  summarize,
} from '../src/metrics/histogram.ts';
import { COUNTS_LENGTH, countsIndex } from '../src/metrics/recording-histogram.ts';
import { round3 } from '../src/numbers.ts';

const VALUES = [0, 1, 7, 999, 1000, 1001, 2047, 2048, 99_999, 1_234_567, 3_599_999_999, HIGHEST_US];

/**
 * What the codec and merging tests fill histograms with: empty, zeros, single values at the bottom and in
 * the middle, narrow and wide bands, the top of the range, counts beyond 32 bits.
 */
const FILLS: [string, (h: Histogram) => void][] = [
  ['empty', () => {}],
  ['zeros only', (h) => h.recordValueWithCount(0, 3)],
  [
    'zero and one value',
    (h) => {
      h.recordValue(0);
      h.recordValue(4321);
    },
  ],
  ['lowest value', (h) => h.recordValue(1)],
  ['one value', (h) => h.recordValue(1234)],
  [
    'band',
    (h) => {
      for (let i = 0; i < 5000; i++) h.recordValue(300 + ((i * 131) % 2500));
    },
  ],
  [
    'spread',
    (h) => {
      for (let i = 0; i < 20_000; i++) h.recordValue(1 + ((i * 7919) % 50_000_000));
    },
  ],
  [
    'spread and top',
    (h) => {
      for (let i = 0; i < 3000; i++) h.recordValue(1 + ((i * 7919) % 90_000_000));
      h.recordValue(HIGHEST_US);
    },
  ],
  [
    'huge counts',
    (h) => {
      h.recordValueWithCount(5, 2 ** 40 + 3);
      h.recordValueWithCount(HIGHEST_US, 2 ** 33);
      h.recordValueWithCount(77, 130);
    },
  ],
];

test('a recording histogram counts in the buckets of the package’s, and its snapshot is the package’s histogram', () => {
  // the index arithmetic: every value to 100,000, then both sides of every power of two up to the top
  const layout = mergingHistogram() as unknown as {
    countsArrayIndex(v: number): number;
    countsArrayLength: number;
  };
  assert.equal(layout.countsArrayLength, COUNTS_LENGTH);
  const probes: number[] = [];
  for (let v = 0; v <= 100_000; v++) probes.push(v);
  for (let p = 2 ** 17; p <= HIGHEST_US; p *= 2) probes.push(p - 1, p, p + 1, p + 777);
  for (let i = 0; i < 20_000; i++)
    probes.push(Math.floor(((i * 2654435761) % 4294967296) * (HIGHEST_US / 4294967296)));
  probes.push(HIGHEST_US - 1, HIGHEST_US);
  for (const v of probes) assert.equal(countsIndex(v), layout.countsArrayIndex(v), `index of ${v}`);
  // the counts: a snapshot makes, byte for byte, the encoding of the package's 32-bit WebAssembly histogram
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
  assert.deepEqual([...ours.counts()], [], 'empty');
  for (let i = 0; i < 5000; i++) {
    const v = VALUES[i % VALUES.length] as number;
    const w = (i * 7919) % 100_000;
    for (const h of [theirs, ours]) {
      h.recordValue(v);
      h.recordValue(w);
    }
  }
  assert.equal(ours.totalCount, theirs.totalCount);
  const snapshot = ours.counts();
  assert.equal(encodeHistogram(histogramOf(snapshot)), encodeIntoCompressedBase64(theirs));
  for (let i = 2; i < snapshot.length; i += 2)
    assert.ok((snapshot[i] as number) > (snapshot[i - 2] as number));
  // reset and record again: the same again, nothing of before left
  ours.reset();
  theirs.reset();
  assert.equal(ours.totalCount, 0);
  assert.deepEqual([...ours.counts()], []);
  for (const h of [theirs, ours]) for (const v of [5, 6, 5, 80_000]) h.recordValue(v);
  assert.equal(encodeHistogram(histogramOf(ours.counts())), encodeIntoCompressedBase64(theirs));
  assert.equal(ours.totalCount, 4);
  theirs.destroy();
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
    assert.equal(meanOf(d), h.mean, `shape ${k}: meanOf`);
    assert.equal(meanOf(h), h.mean, `shape ${k}: meanOf, merged`);
    assert.equal(exact.stddev, h.stdDeviation, `shape ${k}: exact stddev`);
  }
});

test('adding snapshots and reading percentiles in one walk give exactly what the package gives', () => {
  // shapes with zeros, one value, narrow and wide bands, a long tail, values near the top of the range
  const shapes: ((i: number) => number)[] = [
    (i) => (i % 5 === 0 ? 0 : 40 + (i % 11)),
    () => 150,
    (i) => 100 + (i % 37),
    (i) => 1 + ((i * 7919) % 5_000_000),
    (i) => (i % 100 === 0 ? 2_000_000 + i : 200 + ((i * 31) % 900)),
    (i) => HIGHEST_US - (i % 1000) * 1_000_000,
  ];
  const ps = [0, 0.1, 1, 25, 50, 90, 95, 99, 99.9, 99.99, 100, 150];
  for (const [k, shape] of shapes.entries()) {
    const ours = mergingHistogram();
    const theirs = mergingHistogram();
    // snapshots as the engine adds them: decoded from each worker's encoding, one an empty one
    for (let part = 0; part < 4; part++) {
      const snap = mergingHistogram();
      for (let i = 0; part < 3 && i < 3000 + part * 1000; i++) snap.recordValue(shape(i * 4 + part));
      const encoded = encodeHistogram(snap);
      addInto(ours, decodeHistogram(encoded));
      theirs.add(decodeHistogram(encoded));
    }
    assert.equal(encodeHistogram(ours), encodeHistogram(theirs), `shape ${k}: merged encoding`);
    for (const key of ['totalCount', 'maxValue', 'minNonZeroValue'] as const) {
      assert.equal(ours[key], theirs[key], `shape ${k}: ${key}`);
    }
    assert.deepEqual(
      percentilesOf(theirs, ps),
      ps.map((p) => theirs.getValueAtPercentile(p)),
      `shape ${k}: percentiles`,
    );
  }
  assert.deepEqual(percentilesOf(mergingHistogram(), [50, 99]), [0, 0], 'empty');
});

test('adding a snapshot straight into a histogram gives what adding a decoded histogram of its counts gives', () => {
  // each snapshot holds one of FILLS (counts beyond 32 bits too); the last two
  // destinations have another layout, where the snapshot goes through a histogram of its counts
  const dests: [string, () => Histogram][] = [
    ['merging', mergingHistogram],
    [
      'merging, values in it',
      () => {
        const h = mergingHistogram();
        for (let i = 0; i < 500; i++) h.recordValue(50 + i * 3);
        h.recordValue(0);
        return h;
      },
    ],
    [
      'smaller range',
      () => {
        const h = build({
          bitBucketSize: 64,
          lowestDiscernibleValue: 1,
          highestTrackableValue: 10_000,
          numberOfSignificantValueDigits: 3,
          autoResize: true,
        });
        h.recordValue(9_000);
        return h as unknown as Histogram;
      },
    ],
    [
      'two digits',
      () =>
        build({
          bitBucketSize: 64,
          lowestDiscernibleValue: 1,
          highestTrackableValue: HIGHEST_US,
          numberOfSignificantValueDigits: 2,
          autoResize: true,
        }) as unknown as Histogram,
    ],
  ];
  for (const [dn, dest] of dests) {
    const ours = dest();
    const theirs = dest();
    for (const [fn, fill] of FILLS) {
      const src = mergingHistogram();
      fill(src);
      const pairs = pairsOf(src);
      addSnapshot(ours, pairs);
      // what the engine did before snapshots were counts: the package's decoding of the encoding, added
      theirs.add(
        decodeFromCompressedBase64(encodeIntoCompressedBase64(src), 64, false) as unknown as Histogram,
      );
      const what = `${dn} + ${fn}`;
      assert.equal(encodeHistogram(ours), encodeHistogram(theirs), `${what}: encoding`);
      for (const key of [
        'totalCount',
        'maxValue',
        'minNonZeroValue',
        'countsArrayLength',
        'startTimeStampMsec',
        'endTimeStampMsec',
      ] as const) {
        assert.equal(
          (ours as unknown as Record<string, number>)[key],
          (theirs as unknown as Record<string, number>)[key],
          `${what}: ${key}`,
        );
      }
    }
  }
});

/** The buckets of a histogram of the recording layout that hold values, as a snapshot's pairs. */
function pairsOf(h: Histogram): Float64Array {
  const c = h as unknown as { countsArrayLength: number; getCountAtIndex(i: number): number };
  const out: number[] = [];
  for (let i = 0; i < c.countsArrayLength; i++) {
    const k = c.getCountAtIndex(i);
    if (k > 0) out.push(i, k);
  }
  return Float64Array.from(out);
}

test('the V2 codec writes and reads what the package writes and reads, large counts and long runs included', () => {
  for (const [name, fill] of FILLS) {
    const h = build({
      bitBucketSize: 64,
      lowestDiscernibleValue: 1,
      highestTrackableValue: HIGHEST_US,
      numberOfSignificantValueDigits: 3,
      autoResize: true,
    });
    fill(h as unknown as Histogram);
    const theirs = encodeIntoCompressedBase64(h);
    assert.equal(encodeHistogram(h as unknown as Histogram), theirs, `${name}: encoding`);
    const mine = decodeHistogram(theirs);
    const pkg = decodeFromCompressedBase64(theirs, 64, false);
    for (const key of [
      'totalCount',
      'maxValue',
      'minNonZeroValue',
      'highestTrackableValue',
      'countsArrayLength',
    ] as const) {
      assert.equal(
        (mine as unknown as Record<string, number>)[key],
        (pkg as unknown as Record<string, number>)[key],
        `${name}: ${key}`,
      );
    }
    assert.equal(
      encodeIntoCompressedBase64(mine),
      encodeIntoCompressedBase64(pkg),
      `${name}: decoded counts`,
    );
  }
  assert.throws(
    () => decodeHistogram('bm90IGEgaGlzdG9ncmFt'),
    /histogram encoding: not the V2 compressed encoding/,
  );
});
