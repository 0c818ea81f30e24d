import assert from 'node:assert/strict';
import { test } from 'node:test';
import {
  C_TEMPLATE,
  distribution,
  PAD_TEMPLATE,
  randomString,
  seededRandom,
  uniqueSequence,
} from '../src/index.ts';

const N = 200_000;

function draws(type: Parameters<typeof distribution>[1], a: number, b: number, n = N): number[] {
  const pick = distribution(seededRandom(42), type);
  return Array.from({ length: n }, () => pick(a, b));
}

test('every distribution stays inside [a, b]', () => {
  for (const type of ['uniform', 'gaussian', 'special', 'pareto', 'zipfian'] as const) {
    const xs = draws({ type }, 5, 104, 20_000);
    assert.ok(
      xs.every((x) => Number.isInteger(x) && x >= 5 && x <= 104),
      `${type} left [5, 104]`,
    );
  }
});

test('uniform: flat, mean in the middle', () => {
  const xs = draws({ type: 'uniform' }, 1, 100);
  const counts = new Array(101).fill(0);
  for (const x of xs) counts[x]++;
  for (let v = 1; v <= 100; v++)
    assert.ok(Math.abs(counts[v] / N - 0.01) < 0.002, `value ${v}: ${counts[v]}`);
});

test('special with defaults puts about 75% of draws in the middle 1% of the range', () => {
  const xs = draws({ type: 'special' }, 1, 100_000);
  // sysbench's hot window: [t/2 - t*pct/200, t/2 - t*pct/200 + t*pct/100] around the middle
  const inMiddle = xs.filter((x) => x >= 49_500 && x <= 50_500).length / N;
  assert.ok(inMiddle > 0.74 && inMiddle < 0.79, `middle 1%: ${inMiddle}`);
  // and the rest is gaussian-like around the middle, not in the tails
  const tails = xs.filter((x) => x < 20_000 || x > 80_000).length / N;
  assert.ok(tails < 0.02, `tails: ${tails}`);
});

test('special follows --rand-spec-pct and --rand-spec-res', () => {
  const xs = draws({ type: 'special', specPct: 10, specRes: 50 }, 1, 100_000);
  const inWindow = xs.filter((x) => x >= 45_000 && x <= 55_000).length / N;
  // 50% in the window, plus the gaussian half's share of it (≈ 0.5 × 0.59)
  assert.ok(inWindow > 0.7 && inWindow < 0.85, `window: ${inWindow}`);
});

test('gaussian: an Irwin–Hall bell around the middle', () => {
  const xs = draws({ type: 'gaussian' }, 1, 1000);
  const mean = xs.reduce((a, b) => a + b, 0) / N;
  assert.ok(Math.abs(mean - 500) < 5, `mean ${mean}`);
  const sd = Math.sqrt(xs.reduce((a, x) => a + (x - mean) ** 2, 0) / N);
  // sum of 12 uniforms / 12 over a width of 1000: sd = 1000 / sqrt(12 × 12) ≈ 83
  assert.ok(Math.abs(sd - 83.3) < 3, `sd ${sd}`);
});

test('pareto: values pile up near a (h = 0.2 gives 80% of draws in the first 20%)', () => {
  const xs = draws({ type: 'pareto' }, 1, 1000);
  const low = xs.filter((x) => x <= 200).length / N;
  assert.ok(low > 0.77 && low < 0.83, `first 20%: ${low}`);
});

test('zipfian: rank 1 is the most frequent and frequencies fall as k^-exp', () => {
  const xs = draws({ type: 'zipfian', zipfianExp: 1.1 }, 1, 1000);
  const counts = new Array(1001).fill(0);
  for (const x of xs) counts[x]++;
  for (let k = 2; k <= 50; k++) assert.ok(counts[1] >= counts[k], `rank ${k} above rank 1`);
  const ratio = counts[1] / counts[2];
  assert.ok(Math.abs(ratio - 2 ** 1.1) < 0.15, `p(1)/p(2) = ${ratio}, expected ${2 ** 1.1}`);
  // exponent 0 is uniform
  const flat = draws({ type: 'zipfian', zipfianExp: 0 }, 1, 10);
  const c1 = flat.filter((x) => x === 1).length / N;
  assert.ok(Math.abs(c1 - 0.1) < 0.01, `exp 0, value 1: ${c1}`);
});

test('sysbench random strings: # is a digit, @ a letter, the rest copied', () => {
  const r = seededRandom(7);
  const s = randomString(r, 'ab-###-@@@-#@');
  assert.match(s, /^ab-\d{3}-[a-z]{3}-\d[a-z]$/);
  const c = randomString(r, C_TEMPLATE);
  assert.equal(c.length, 119);
  assert.match(c, /^(\d{11}-){9}\d{11}$/);
  assert.equal(randomString(r, PAD_TEMPLATE).length, 59);
  // characters beyond Latin-1 are copied too, and each # and @ draws once, in order, as before them
  const a = seededRandom(11);
  const b = seededRandom(11);
  const wide = randomString(a, 'é#-€@-😀#');
  assert.match(wide, /^é\d-€[a-z]-😀\d$/u);
  const digit = (x: number): string => String(Math.floor(x * 10));
  const letter = (x: number): string => String.fromCharCode(97 + Math.floor(x * 26));
  assert.equal(wide, `é${digit(b.next())}-€${letter(b.next())}-😀${digit(b.next())}`);
  assert.equal(a.next(), b.next());
  // the same digits whatever the template's length (the buffer grows for a long one)
  const long = randomString(seededRandom(3), '#'.repeat(1000));
  assert.equal(long.slice(0, 11), randomString(seededRandom(3), '#'.repeat(11)));
  assert.match(long, /^\d{1000}$/);
});

test('unique sequence: no value repeats across clients', () => {
  const seen = new Set<number>();
  for (let client = 0; client < 4; client++) {
    const next = uniqueSequence(client, 4, 12345);
    for (let i = 0; i < 5000; i++) {
      const v = next();
      assert.ok(v >= 0 && v < 2 ** 32);
      assert.ok(!seen.has(v), `repeated ${v}`);
      seen.add(v);
    }
  }
});
