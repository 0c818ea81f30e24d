/**
 * The README as a new user reads it: its tables render (no row with more cells than its header, as an
 * unescaped `|` makes), its links to other files of the repository and to headings find them, `dbsmack` is
 * put on the PATH (or run through npx) before the first bare `dbsmack …`, and it says how long the test
 * suite takes. The same for DEVELOPERS.md and docs/performance.md (the measurements, session by session).
 */
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import { ROOT } from './helpers/cli.ts';

const read = (f: string): string => readFileSync(path.join(ROOT, f), 'utf8');

/** Cells of a Markdown table row: split at every `|` not escaped as `\|` (GitHub splits inside code too). */
const cells = (row: string): number => row.trim().replace(/\\\|/g, '').split('|').length - 2;

const DOCS = ['README.md', 'DEVELOPERS.md', 'docs/performance.md'];

for (const file of DOCS) {
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

/** GitHub's anchor of a heading: lower case, punctuation but `-` and `_` dropped, each space a `-`. */
const slug = (heading: string): string =>
  heading
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{N}\s_-]/gu, '')
    .replace(/\s/g, '-');

/** The anchors of a Markdown file's headings (outside code blocks); a repeated one gets `-1`, `-2`, … */
function anchors(file: string): Set<string> {
  const seen = new Map<string, number>();
  let inCode = false;
  for (const line of read(file).split('\n')) {
    if (line.startsWith('```')) inCode = !inCode;
    const m = inCode ? null : /^#{1,6} (.*)$/.exec(line);
    if (m === null) continue;
    const base = slug(m[1] as string);
    const n = seen.get(base) ?? 0;
    seen.set(n === 0 ? base : `${base}-${n}`, 0);
    seen.set(base, n + 1);
  }
  return new Set(seen.keys());
}

for (const file of DOCS) {
  test(`${file}: its links to the repository's files and headings find them`, () => {
    let inCode = false;
    const lines = read(file).split('\n');
    let links = 0;
    for (let i = 0; i < lines.length; i++) {
      const line = lines[i] as string;
      if (line.startsWith('```')) inCode = !inCode;
      if (inCode) continue;
      for (const m of line.matchAll(/\]\(([^)\s]+)\)/g)) {
        const target = m[1] as string;
        if (/^[a-z]+:/.test(target)) continue; // https:, mailto:
        links++;
        const [where = '', anchor] = target.split('#');
        const linked =
          where === '' ? file : path.posix.normalize(path.posix.join(path.posix.dirname(file), where));
        assert.ok(existsSync(path.join(ROOT, linked)), `${file}:${i + 1}: ${target}: no ${linked}`);
        if (anchor !== undefined && linked.endsWith('.md'))
          assert.ok(
            anchors(linked).has(anchor),
            `${file}:${i + 1}: ${target}: no heading #${anchor} in ${linked}`,
          );
      }
    }
    if (file !== 'DEVELOPERS.md') assert.ok(links > 0, `${file} links somewhere`);
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
