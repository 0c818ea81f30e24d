/** byName orders names as localeCompare does and grouped writes integers as toLocaleString does, without ICU. */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { byName } from '../src/collate.ts';
import { grouped } from '../src/numbers.ts';
import { SeededRandom } from '../src/seeded-random.ts';

test('byName gives the sign localeCompare gives, on random ASCII names and on others', () => {
  const rng = new SeededRandom(42);
  const alphabet = 'aAbBzZ019 _-.:/$~|"\'`';
  const name = (): string => {
    let s = '';
    const n = rng.int(0, 5);
    for (let i = 0; i < n; i++) s += alphabet[rng.int(0, alphabet.length - 1)];
    return s;
  };
  for (let i = 0; i < 30_000; i++) {
    const a = name();
    const b = rng.int(0, 3) === 0 ? a.toUpperCase() : name();
    assert.equal(
      Math.sign(byName(a, b)),
      Math.sign(a.localeCompare(b)),
      `${JSON.stringify(a)} vs ${JSON.stringify(b)}`,
    );
  }
  // the names dbsmack sorts, and what localeCompare alone handles
  const names = [
    'point_selects',
    'non_index_updates',
    'index_updates',
    'Select',
    'select',
    'q10',
    'q1_x',
    'q_x',
  ];
  for (const x of [...names, 'é', 'e\u0001f', 'ef', 'Ä']) {
    for (const y of [...names, 'é', 'e\u0001f', 'ef', 'Ä'])
      assert.equal(Math.sign(byName(x, y)), Math.sign(x.localeCompare(y)), `${x} vs ${y}`);
  }
});

test('grouped writes integers as toLocaleString("en-US") does', () => {
  const rng = new SeededRandom(7);
  const cases = [
    0,
    -0,
    1,
    -1,
    999,
    1000,
    -1000,
    12_345,
    999_999,
    1_000_000,
    -987_654_321,
    2 ** 53,
    1e20,
    1e21,
    1.5e22,
  ];
  for (let i = 0; i < 5000; i++) cases.push(Math.round((rng.next() - 0.5) * 10 ** rng.int(0, 18)));
  for (const v of cases) assert.equal(grouped(v), v.toLocaleString('en-US'), String(v));
  assert.equal(grouped(1234.5), '1,234.5', 'not an integer: through toLocaleString');
});
