/**
 * The README as a new user reads it: its tables render (no row with more cells than its header, as an
 * unescaped `|` makes), `dbsmack` is put on the PATH (or run through npx) before the first bare
 * `dbsmack …`, and it says how long the test suite takes.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import { ROOT } from './helpers/cli.ts';

const read = (f: string): string => readFileSync(path.join(ROOT, f), 'utf8');

/** Cells of a Markdown table row: split at every `|` not escaped as `\|` (GitHub splits inside code too). */
const cells = (row: string): number => row.trim().replace(/\\\|/g, '').split('|').length - 2;

for (const file of ['README.md', 'DEVELOPERS.md']) {
  test(`${file}: every table row has as many cells as its header`, () => {
    const lines = read(file).split('\n');
    let inCode = false;
    for (let i = 0; i < lines.length; i++) {
      const line = lines[i] as string;
      if (line.startsWith('```')) inCode = !inCode;
      if (inCode || !line.startsWith('|') || !/^\|[\s:|-]+\|$/.test(lines[i + 1] ?? '')) continue;
      const want = cells(line);
      for (let j = i + 1; j < lines.length && (lines[j] as string).startsWith('|'); j++) {
        assert.equal(
          cells(lines[j] as string),
          want,
          `${file}:${j + 1}: ${(lines[j] as string).slice(0, 100)}`,
        );
      }
    }
  });
}

test('README: dbsmack is on the PATH (npx or npm link) before the first bare dbsmack command', () => {
  const text = read('README.md');
  // a command line that starts with dbsmack, in a code block or in `backticks`
  const bare = /(^|`)dbsmack (run|prepare|cleanup|sweep|compare|report|history|show|list|gen-data)\b/m.exec(
    text,
  );
  assert.ok(bare, 'the README shows dbsmack commands');
  const before = text.slice(0, bare.index);
  assert.match(before, /npm link/, 'how to link it comes first');
  assert.match(before, /npx dbsmack/, 'and the npx form');
});

test('README: says how long the test suite takes', () => {
  assert.match(read('README.md'), /every test, in about \d+ minutes/);
});
