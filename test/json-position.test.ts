import assert from 'node:assert/strict';
import { test } from 'node:test';
import { jsonErrorOffset, lineColumn } from '../src/store/json-position.ts';

test('finds where JSON first goes wrong', () => {
  for (const ok of ['{}', '[]', ' {"a": [1, -2.5e3, true, false, null, "x\\n\\u00e9"]} ', '"s"', '0']) {
    assert.equal(jsonErrorOffset(ok), undefined, ok);
    JSON.parse(ok);
  }
  const cases: [string, string][] = [
    ['{\n  "a": [1, 2,,]\n}', '2:14'],
    ['{"a": 1,}', '1:9'],
    ['{"a" 1}', '1:6'],
    ['[1, 2', '1:6'],
    ['', '1:1'],
    ['{"a": tru}', '1:10'],
    ['{"a": "x\ny"}', '1:9'],
    ['{} x', '1:4'],
  ];
  for (const [text, where] of cases) {
    assert.throws(() => JSON.parse(text));
    assert.equal(lineColumn(text, jsonErrorOffset(text) ?? -1), where, JSON.stringify(text));
  }
});
