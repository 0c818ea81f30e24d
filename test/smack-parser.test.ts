import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { type TestContext, test } from 'node:test';
import { InputError } from '../src/errors.ts';
import { compileSmack } from '../src/workload/smack/compile.ts';
import { SmackError } from '../src/workload/smack/errors.ts';
import { parseSmack } from '../src/workload/smack/parser.ts';
import { ROOT } from './helpers/cli.ts';
import { needFile } from './helpers/preconditions.ts';

/** The files shipped with super-smack, from the project's shared fixtures beside the checkout. */
const SHIPPED = path.resolve(ROOT, '..', 'shared', 'fixtures', 'super-smack');
const needShipped = (t: TestContext, name: string): boolean =>
  needFile(t, path.join(SHIPPED, name), `super-smack's shipped ${name} (../shared/fixtures/super-smack)`);
const FIX = path.join(ROOT, 'test', 'fixtures', 'smack');

test('the shipped select-key.smack compiles: one client type, 2 shots of select_index per round', (t) => {
  if (!needShipped(t, 'select-key.smack')) return;
  const src = readFileSync(path.join(SHIPPED, 'select-key.smack'), 'utf8');
  const m = compileSmack(parseSmack(src, 'select-key.smack'), ['10', '1000']);
  assert.equal(m.groups.length, 1);
  const g = m.groups[0]!;
  assert.equal(g.client.name, 'smacker1');
  assert.equal(g.threads, 10);
  assert.equal(g.rounds, 1000);
  assert.deepEqual(
    g.client.barrel.map((a) => (a.kind === 'query' ? [a.count, a.query.type] : a.kind)),
    [[2, 'select_index']],
  );
  assert.equal(m.tables[0]?.minRows, 90000);
  assert.equal(m.tables[0]?.client.user, 'root');
  assert.equal(m.dictionaries.get('word')?.delim, ',');
  assert.equal(m.dictionaries.get('word')?.fileSizeEquiv, 45000);
  assert.match(m.tables[0]?.create ?? '', /create table http_auth\n/);
});

test('the shipped update-select.smack compiles: set_num_rounds twice does not double the rounds', (t) => {
  if (!needShipped(t, 'update-select.smack')) return;
  const src = readFileSync(path.join(SHIPPED, 'update-select.smack'), 'utf8');
  const m = compileSmack(parseSmack(src, 'update-select.smack'), ['30', '10000']);
  const g = m.groups[0]!;
  assert.equal(g.threads, 30);
  assert.equal(g.rounds, 10000);
  assert.deepEqual([...g.typeNames.keys()].sort(), ['select_index', 'update_index']);
});

test('several client types get ranges of client ids and prefixed type names', () => {
  const src = readFileSync(path.join(FIX, 'every-part.smack'), 'utf8');
  const m = compileSmack(parseSmack(src, 'every-part.smack'), ['3', '4']);
  assert.deepEqual(
    m.groups.map((g) => [g.client.name, g.start, g.threads, g.rounds]),
    [
      ['reader', 0, 3, 4],
      ['writer', 3, 2, 5],
    ],
  );
  assert.equal(m.groups[1]!.typeNames.get('insert_new'), 'writer::insert_new');
  // any whitespace separates barrel entries; -0.001 is a sleep
  assert.deepEqual(
    m.groups[0]!.client.barrel.map((a) =>
      a.kind === 'sleep' ? `sleep ${a.ms}` : `${a.count} ${a.query.name}`,
    ),
    ['2 get', 'sleep 1', '1 count'],
  );
  assert.equal(m.dictionaries.get('color')?.source, 'red,gr\'een,o"k,back\\slash,semi;colon\\, comma,');
  assert.deepEqual(m.groups[1]!.threadSetup, [{ kind: 'sleep', ms: 5 }]);
});

test('sleep between two unloads becomes the set-up of the second segment', () => {
  const src = readFileSync(path.join(FIX, 'sleeps.smack'), 'utf8');
  const g = compileSmack(parseSmack(src, 'sleeps.smack'), []).groups[0]!;
  assert.equal(g.rounds, 3);
  assert.deepEqual(
    g.segments.map((s) => [s.rounds, s.before]),
    [
      [2, []],
      [1, [{ kind: 'sleep', ms: 100 }]],
    ],
  );
  assert.equal(g.threadSetup[0]?.kind, 'query');
});

for (const f of readdirSync(path.join(FIX, 'bad')).filter((n) => n.endsWith('.smack'))) {
  test(`malformed input: ${f}`, () => {
    const src = readFileSync(path.join(FIX, 'bad', f), 'utf8');
    const m = /^# expect (\d+):(\d+) (.*)$/m.exec(src);
    assert.ok(m, 'the fixture states what it expects');
    const [, line, col, msg] = m;
    assert.throws(
      () => compileSmack(parseSmack(src, f), ['1', '2']),
      (e: unknown) => {
        assert.ok(e instanceof SmackError && e instanceof InputError, String(e));
        assert.equal(e.message.slice(0, `${f}:${line}:${col}: `.length), `${f}:${line}:${col}: `);
        assert.ok(e.message.includes(msg as string), `${e.message} should say ${msg}`);
        assert.ok(e.hint === undefined || e.hint.length > 0);
        return true;
      },
    );
  });
}

test('string escapes: \\" and \\\\ decode, other backslashes stay, strings span lines', () => {
  const p = parseSmack('query "q" { query "a\\"b\\\\c\\td\ne"; }\nmain { c.init(); }', 'x.smack');
  assert.equal(p.blocks[0]?.props[0]?.value, 'a"b\\c\\td\ne');
});

/** A small deterministic generator, so that a failing case can be reproduced from its number. */
function rng(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (Math.imul(s, 1664525) + 1013904223) >>> 0;
    return s / 2 ** 32;
  };
}

const PIECES = [
  '{',
  '}',
  '(',
  ')',
  ';',
  '.',
  ',',
  '$',
  '=',
  '::',
  '"',
  '"x"',
  '$1',
  '$9',
  'main',
  'query',
  'client',
  'table',
  'dictionary',
  '\n',
  '#',
  '//',
  '\\',
  '@',
  '\0',
  'é',
  '-',
  ':',
  'init',
  '99999999999999999999',
];

test('fuzz: thousands of mutated smack files either compile or fail with FILE:LINE:COLUMN', (t) => {
  if (!needShipped(t, 'select-key.smack') || !needShipped(t, 'update-select.smack')) return;
  const bases = [
    readFileSync(path.join(SHIPPED, 'select-key.smack'), 'utf8'),
    readFileSync(path.join(SHIPPED, 'update-select.smack'), 'utf8'),
    readFileSync(path.join(FIX, 'every-part.smack'), 'utf8'),
    readFileSync(path.join(FIX, 'sleeps.smack'), 'utf8'),
  ];
  let ok = 0;
  let failed = 0;
  const kinds = new Set<string>();
  const N = 4000;
  for (let i = 0; i < N; i++) {
    const r = rng(i + 1);
    let src = bases[i % bases.length] as string;
    const edits = 1 + Math.floor(r() * 4);
    for (let k = 0; k < edits; k++) {
      const at = Math.floor(r() * src.length);
      const op = r();
      if (op < 0.3) src = src.slice(0, at) + src.slice(at + 1 + Math.floor(r() * 20));
      else if (op < 0.6) src = src.slice(0, at) + PIECES[Math.floor(r() * PIECES.length)] + src.slice(at);
      else if (op < 0.8) {
        const from = Math.floor(r() * src.length);
        src = src.slice(0, at) + src.slice(from, from + Math.floor(r() * 40)) + src.slice(at);
      } else src = src.slice(0, at);
    }
    try {
      compileSmack(parseSmack(src, 'fuzz.smack'), ['2', '3']);
      ok++;
    } catch (e) {
      if (!(e instanceof SmackError) || !/^fuzz\.smack:\d+:\d+: \S/.test(e.message)) {
        assert.fail(
          `case ${i}: not a positioned error: ${(e as Error)?.stack ?? String(e)}\n--- input ---\n${src}`,
        );
      }
      const lines = src.split('\n');
      assert.ok(
        e.pos.line >= 1 && e.pos.line <= lines.length,
        `case ${i}: line ${e.pos.line} outside 1..${lines.length}`,
      );
      const width = (lines[e.pos.line - 1] ?? '').length + 1;
      assert.ok(
        e.pos.col >= 1 && e.pos.col <= width,
        `case ${i}: column ${e.pos.col} outside 1..${width} of line ${e.pos.line}`,
      );
      kinds.add(e.message.replace(/^fuzz\.smack:\d+:\d+: /, '').replace(/'[^']*'|"[^"]*"|\d+/g, '…'));
      failed++;
    }
  }
  // Both outcomes happen: the mutations reach the compiler with files that still compile, and they break
  // files in many different ways (not one error over and over).
  assert.ok(failed > N / 2, `most mutations break a file (${failed} of ${N})`);
  assert.ok(ok > N / 100, `some mutations still compile (${ok} of ${N})`);
  assert.ok(kinds.size >= 50, `errors of ${kinds.size} kinds: ${[...kinds].join(' | ')}`);
});
