import assert from 'node:assert/strict';
import { test } from 'node:test';
import { bootstrapRatioOfMedians } from '../src/analysis/bootstrap.ts';
import { mannWhitney, minimumP } from '../src/analysis/mann-whitney.ts';
import { coefficientOfVariation, mad, median, normalCdf, quantile } from '../src/analysis/stats.ts';
import { studentTwoSided, welchTTest } from '../src/analysis/welch.ts';
import { seededRandom } from '../src/seeded-random.ts';

const close = (a: number, b: number, tol = 1e-9): void =>
  assert.ok(Math.abs(a - b) <= tol, `${a} is not within ${tol} of ${b}`);

test('descriptive statistics against known values', () => {
  assert.equal(median([3, 1, 2]), 2);
  assert.equal(median([4, 1, 3, 2]), 2.5);
  assert.ok(Number.isNaN(median([])));
  assert.equal(mad([1, 1, 2, 2, 4, 6, 9]), 1);
  close(quantile([1, 2, 3, 4], 0.25), 1.75);
  // the story's series: sample sd / mean (NumPy: 1.113083062142125)
  close(coefficientOfVariation([60, 3167, 32, 757, 2988]), 1.113083062142125, 1e-12);
  close(normalCdf(1.959964), 0.975, 1e-6);
  close(normalCdf(-1), 0.158655254, 1e-6);
  close(normalCdf(0), 0.5, 1e-9);
});

test('seeded generator repeats its sequence', () => {
  const a = seededRandom(42);
  const b = seededRandom(42);
  const xs = Array.from({ length: 5 }, () => a.next());
  assert.deepEqual(
    xs,
    Array.from({ length: 5 }, () => b.next()),
  );
  assert.ok(xs.every((x) => x >= 0 && x < 1));
  const c = seededRandom(43);
  assert.notDeepEqual(
    xs,
    Array.from({ length: 5 }, () => c.next()),
  );
});

test('Mann–Whitney exact p-values match SciPy (method=exact)', () => {
  let r = mannWhitney([1, 2, 3], [4, 5, 6]);
  assert.equal(r.u, 0);
  close(r.p, 0.1);
  assert.equal(r.method, 'exact');
  r = mannWhitney([1, 2, 3, 4, 5], [6, 7, 8, 9, 10]);
  close(r.p, 0.007936507936507936);
  r = mannWhitney([1.1, 2.2, 3.3, 4.4, 5.5, 6.6], [3.0, 7.7, 8.8, 9.9, 10.1]);
  assert.equal(r.u, 4);
  close(r.p, 0.05194805194805195);
  // unequal sizes, first sample larger
  r = mannWhitney([60, 3167, 32, 757, 2988], [1, 2, 3]);
  assert.equal(r.u, 15);
  close(r.p, 0.03571428571428571);
});

test('Mann–Whitney exact with ties counts the midrank distribution', () => {
  // enumerated over all C(9,4) splits of the midranks (computed with SciPy's rankdata)
  const r = mannWhitney([1, 2, 2, 3], [2, 3, 3, 4, 5]);
  close(r.p, 0.15873015873015872);
  // identical samples: no evidence at all
  close(mannWhitney([5, 5, 5], [5, 5, 5]).p, 1);
  close(mannWhitney([1, 2, 3], [1, 2, 3]).p, 1);
});

test('Mann–Whitney normal approximation with tie and continuity corrections matches SciPy', () => {
  const x = Array.from({ length: 30 }, (_, i) => i + 1);
  const y = x.map((v) => v + 10.5);
  let r = mannWhitney(x, y);
  assert.equal(r.method, 'normal');
  assert.equal(r.u, 190);
  close(r.p, 0.00012477053789099933, 2e-7);
  const a = [1, 2, 2, 3, 3, 3, 4, 5, 5, 6, 1, 2, 2, 3, 3, 3, 4, 5, 5, 6, 1, 2, 2, 3, 3, 3, 4, 5, 5, 6];
  const b = [3, 4, 4, 5, 5, 6, 6, 7, 8, 8, 3, 4, 4, 5, 5, 6, 6, 7, 8, 8, 3, 4, 4, 5, 5, 6, 6, 7, 8, 8];
  r = mannWhitney(a, b);
  assert.equal(r.u, 157.5);
  close(r.p, 1.2342894292973169e-5, 2e-7);
});

test('the smallest reachable p tells when there are too few repeats', () => {
  close(minimumP(3, 3), 0.1);
  close(minimumP(4, 4), 2 / 70);
  close(minimumP(5, 5), 2 / 252);
  assert.equal(minimumP(1, 1), 1);
});

test('bootstrap of the ratio of medians is seeded and brackets the ratio', () => {
  const base = [1000, 1010, 990, 1005, 995];
  const cand = [600, 610, 590, 605, 595];
  const a = bootstrapRatioOfMedians(base, cand, { seed: 7 });
  const b = bootstrapRatioOfMedians(base, cand, { seed: 7 });
  assert.deepEqual(a, b);
  close(a.ratio, 0.6);
  assert.ok(a.low <= a.ratio && a.ratio <= a.high);
  assert.ok(a.high < 1, 'a 40% drop with 1% noise excludes 1');
  const same = bootstrapRatioOfMedians(base, base, { seed: 7 });
  close(same.ratio, 1);
  assert.ok(same.low <= 1 && same.high >= 1);
});

test('the bootstrap draws its resamples from the seeded generator of the clients', () => {
  // golden: these follow from SeededRandom(7) (seeded-random.ts); another generator gives other bounds
  const base = [100, 102, 98, 101, 99, 103, 97, 100];
  const cand = [110, 108, 112, 109, 111, 107, 113, 110];
  assert.deepEqual(bootstrapRatioOfMedians(base, cand, { seed: 7 }), {
    ratio: 1.1,
    low: 1.0742574257425743,
    high: 1.1269035532994924,
  });
});

test("Welch's t-test and Student's t tail match SciPy", () => {
  close(studentTwoSided(2.5, 3.7), 0.07182202291182678, 1e-9);
  close(studentTwoSided(1.0, 10) / 2, 0.17044656615103, 1e-9);
  close(1 - studentTwoSided(0.3, 1.5) / 2, 0.5997639015982075, 1e-9);
  let r = welchTTest([1, 2, 3, 4], [2, 4, 6, 8, 10]);
  close(r.t, -2.2514363231593695, 1e-9);
  close(r.df, 5.520787746170677, 1e-9);
  close(r.p, 0.06913359319239237, 1e-9);
  r = welchTTest([1000, 1010, 990].map(Math.log), [500, 505, 495].map(Math.log));
  close(r.t, 84.88966189607572, 1e-6);
  close(r.p, 1.1543310195430855e-7, 1e-12);
  assert.equal(welchTTest([5, 5, 5], [5, 5, 5]).p, 1);
  assert.equal(welchTTest([1], [2, 3]).p, 1);
});
