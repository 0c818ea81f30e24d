import assert from 'node:assert/strict';
import { test } from 'node:test';
import { round, round2, round3 } from '../src/numbers.ts';

test('round3 and round2 round half up to three and two decimals', () => {
  assert.equal(round3(1.2345), 1.235);
  assert.equal(round3(-1.2345), -1.234); // Math.round: half towards +∞
  assert.equal(round3(0.0005), 0.001);
  assert.equal(round2(2.675), 2.68);
  assert.equal(round2(1.005), 1); // 1.005 is 1.00499… as a double
  assert.equal(round2(1234.5678), 1234.57);
  assert.equal(round(7.25681, 1), 7.3);
  assert.equal(round(7.25681, 6), 7.25681);
  assert.equal(round(0.000123456, 4), 0.0001);
});

test('round(v, 2) and round(v, 3) give the same bits as round2 and round3 (the formulas they replaced)', () => {
  let x = 0x9e3779b9;
  for (let i = 0; i < 20_000; i++) {
    x = (Math.imul(x, 1664525) + 1013904223) >>> 0;
    const v = ((x / 2 ** 32) * 2 - 1) * 10 ** ((i % 9) - 3);
    assert.ok(Object.is(round(v, 2), Math.round(v * 100) / 100), `round(${v}, 2)`);
    assert.ok(Object.is(round2(v), Math.round(v * 100) / 100), `round2(${v})`);
    assert.ok(Object.is(round(v, 3), Math.round(v * 1000) / 1000), `round(${v}, 3)`);
    assert.ok(Object.is(round3(v), Math.round(v * 1000) / 1000), `round3(${v})`);
  }
});
