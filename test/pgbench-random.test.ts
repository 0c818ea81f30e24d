/**
 * pgbench's generator and random functions: the same seed gives the values pgbench 15 gives (golden values
 * from `pgbench --random-seed=7` with `\set x debug(random…)`), and each distribution has the shape
 * pgbench's documentation gives it (chi-square goodness of fit on 100,000 draws). The live comparison
 * with the real pgbench is in pgbench-compat.test.ts.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { normalCdf } from '../src/analysis/stats.ts';
import {
  exponentialRand,
  gaussianRand,
  uniformRand,
  zipfianRand,
} from '../src/workload/pgbench/functions.ts';
import { PgPrng } from '../src/workload/pgbench/prng.ts';
import { chiSquareFit } from './helpers/chi-square.ts';

test("seeded as pgbench seeds client 0, the draws are pgbench 15's, value for value", () => {
  // pgbench seeds a base generator with --random-seed, then each client's from it, in order
  const base = new PgPrng(7n);
  const rng = new PgPrng(base.uint64());
  const got: (number | bigint)[] = [];
  for (let i = 0; i < 4; i++) {
    got.push(uniformRand(rng, 1, 1000000));
    got.push(exponentialRand(rng, 1, 1000, 2.5));
    got.push(gaussianRand(rng, -100, 100, 2.5));
    got.push(zipfianRand(rng, 1, 1000, 1.07));
    got.push(uniformRand(rng, -4000000000000000000n, 4000000000000000000n));
  }
  assert.deepEqual(
    got.map(String),
    '869439 158 4 6 540083028197200672 444207 398 6 4 -3584545665994146407 330054 399 -34 1 -1962571416977807704 183575 311 -57 556 1982105239665087443'.split(
      ' ',
    ),
  );
});

test('save and restore give the same draws again (a retried transaction)', () => {
  const rng = new PgPrng(123n);
  rng.double();
  const saved = rng.save();
  const a = [rng.rangeUpTo(1000), rng.rangeUpTo(1000), rng.double()];
  rng.restore(saved);
  assert.deepEqual([rng.rangeUpTo(1000), rng.rangeUpTo(1000), rng.double()], a);
});

const N = 100_000;

function histogram(draw: () => number | bigint, min: number, n: number): number[] {
  const counts = new Array<number>(n).fill(0);
  for (let i = 0; i < N; i++) {
    const v = Number(draw());
    assert.ok(v >= min && v < min + n, `draw ${v} outside [${min}, ${min + n - 1}]`);
    counts[v - min] = (counts[v - min] as number) + 1;
  }
  return counts;
}

test('random: uniform over [min, max]', () => {
  const rng = new PgPrng(1n);
  const fit = chiSquareFit(
    histogram(() => uniformRand(rng, 5, 54), 5, 50),
    new Array(50).fill(1 / 50),
  );
  assert.ok(fit.p > 0.001, `chi-square ${fit.stat.toFixed(1)} on ${fit.df} df, p = ${fit.p}`);
});

test('random_exponential: density falls to exp(-parameter) at max', () => {
  const rng = new PgPrng(2n);
  const n = 40;
  const p = 3.0;
  const probs = Array.from(
    { length: n },
    (_, k) => (Math.exp((-p * k) / n) - Math.exp((-p * (k + 1)) / n)) / (1 - Math.exp(-p)),
  );
  const fit = chiSquareFit(
    histogram(() => exponentialRand(rng, 1, n, p), 1, n),
    probs,
  );
  assert.ok(fit.p > 0.001, `chi-square ${fit.stat.toFixed(1)} on ${fit.df} df, p = ${fit.p}`);
});

test('random_gaussian: a normal cut at ±parameter standard deviations', () => {
  const rng = new PgPrng(3n);
  const n = 40;
  const p = 2.5;
  const z = (k: number): number => -p + (2 * p * k) / n;
  const mass = normalCdf(p) - normalCdf(-p);
  const probs = Array.from({ length: n }, (_, k) => (normalCdf(z(k + 1)) - normalCdf(z(k))) / mass);
  const fit = chiSquareFit(
    histogram(() => gaussianRand(rng, 1, n, p), 1, n),
    probs,
  );
  assert.ok(fit.p > 0.001, `chi-square ${fit.stat.toFixed(1)} on ${fit.df} df, p = ${fit.p}`);
});

test('random_zipfian: P(k) proportional to 1/k^s over [1, n]', () => {
  for (const s of [1.07, 2.5]) {
    const rng = new PgPrng(4n);
    const n = 50;
    const w = Array.from({ length: n }, (_, k) => (k + 1) ** -s);
    const h = w.reduce((a, b) => a + b, 0);
    const fit = chiSquareFit(
      histogram(() => zipfianRand(rng, 1, n, s), 1, n),
      w.map((x) => x / h),
    );
    assert.ok(fit.p > 0.001, `s = ${s}: chi-square ${fit.stat.toFixed(1)} on ${fit.df} df, p = ${fit.p}`);
  }
});

test('a wrong shape fails the check (the test can fail)', () => {
  const rng = new PgPrng(5n);
  const n = 40;
  // exponential draws tested against a gaussian's probabilities
  const z = (k: number): number => -2.5 + (5 * k) / n;
  const mass = normalCdf(2.5) - normalCdf(-2.5);
  const probs = Array.from({ length: n }, (_, k) => (normalCdf(z(k + 1)) - normalCdf(z(k))) / mass);
  const fit = chiSquareFit(
    histogram(() => exponentialRand(rng, 1, n, 3), 1, n),
    probs,
  );
  assert.ok(fit.p < 1e-6);
});
