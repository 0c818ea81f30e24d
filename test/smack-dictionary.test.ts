import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import Database from 'better-sqlite3';
import { SeededRandom } from '../src/seeded-random.ts';
import {
  compileUniqueTemplate,
  type DictionaryDef,
  instantiate,
  readFileWords,
  splitList,
} from '../src/workload/smack/dictionary.ts';
import { SmackError } from '../src/workload/smack/errors.ts';
import { escapeWord } from '../src/workload/smack/escape.ts';
import { parseGenDataFormat, rowGenerator } from '../src/workload/smack/gen-data.ts';
import { parseGenDataCommand } from '../src/workload/smack/tables.ts';
import { compileTemplate } from '../src/workload/smack/template.ts';
import { tmpDir } from './helpers/cli.ts';

const pos = { line: 1, col: 1 };
const def = (over: Partial<DictionaryDef>): DictionaryDef => ({
  name: 'd',
  pos,
  type: 'seq',
  sourceType: 'list',
  source: '',
  delim: '',
  fileSizeEquiv: 0,
  sourcePos: pos,
  ...over,
});

test('list: the last item is kept, a trailing comma adds nothing, \\, is a comma', () => {
  assert.deepEqual(splitList('a,b,c'), ['a', 'b', 'c']);
  assert.deepEqual(splitList('a,b,c,'), ['a', 'b', 'c']);
  assert.deepEqual(splitList('x\\,y,z'), ['x,y', 'z']);
  assert.deepEqual(splitList('solo'), ['solo']);
});

test('seq walks the words in order and wraps; rand stays inside the list', () => {
  const seq = instantiate(def({ type: 'seq' }), ['a', 'b', 'c'], 'f', new SeededRandom(1), 0, 1);
  assert.deepEqual(
    [1, 2, 3, 4, 5].map(() => seq.next()),
    ['a', 'b', 'c', 'a', 'b'],
  );
  const rand = instantiate(def({ type: 'rand' }), ['a', 'b', 'c'], 'f', new SeededRandom(1), 0, 1);
  const seen = new Set(Array.from({ length: 200 }, () => rand.next()));
  assert.deepEqual([...seen].sort(), ['a', 'b', 'c']);
});

test('an empty dictionary is a positioned error, not a crash', () => {
  assert.throws(
    () => instantiate(def({ type: 'rand', name: 'empty' }), [], 'f.smack', new SeededRandom(1), 0, 1),
    (e: unknown) => e instanceof SmackError && /^f\.smack:1:1: dictionary "empty" is empty/.test(e.message),
  );
});

test('unique values are unique across all clients of a run', () => {
  const d = def({ type: 'unique', sourceType: 'template', source: 'k%03d' });
  const all: string[] = [];
  for (let c = 0; c < 4; c++) {
    const u = instantiate(d, [], 'f', new SeededRandom(c), c, 4);
    for (let k = 0; k < 50; k++) all.push(u.next());
  }
  assert.equal(new Set(all).size, 200);
  assert.ok(all.includes('k000') && all.includes('k199'));
});

test('templates: one integer conversion with flags; %% is a literal percent', () => {
  assert.equal(compileUniqueTemplate('user_%05d_x', 'f', pos)(42), 'user_00042_x');
  assert.equal(compileUniqueTemplate('%x', 'f', pos)(255), 'ff');
  assert.equal(compileUniqueTemplate('100%% %d', 'f', pos)(7), '100% 7');
  assert.throws(() => compileUniqueTemplate('%d-%d', 'f', pos), SmackError);
  assert.throws(() => compileUniqueTemplate('%s', 'f', pos), SmackError);
});

test('file source: every step-th line cut at the delimiter, the last line kept without a newline', () => {
  const dir = tmpDir();
  const f = path.join(dir, 'w.dat');
  writeFileSync(f, 'a1,x\nb2,y\nc3,z\nd4,w');
  assert.deepEqual(readFileWords(f, ',', 0), ['a1', 'b2', 'c3', 'd4']);
  // 19 bytes / 9 = step 2: lines 2 and 4
  assert.deepEqual(readFileWords(f, ',x', 9), ['b2', 'd4']);
  assert.deepEqual(readFileWords(f, '', 0), ['a1,x', 'b2,y', 'c3,z', 'd4,w']);
});

test('$name substitution: at the end, adjacent, after a backslash, and \\$ stays literal', () => {
  const parts = compileTemplate("select '$a$b' from t where x=\\$c and y=$a");
  const words: Record<string, string> = { a: 'A', b: 'B' };
  const out = parts.map((p) => ('text' in p ? p.text : words[p.dict])).join('');
  assert.equal(out, "select 'AB' from t where x=$c and y=A");
  const q = compileTemplate(`a '$x' b "$y" c $z d '\\'$w'`);
  assert.deepEqual(
    q.flatMap((p) => ('dict' in p ? [[p.dict, p.quote]] : [])),
    [
      ['x', "'"],
      ['y', '"'],
      ['z', ''],
      ['w', "'"],
    ],
  );
});

test('escaping: quotes and backslashes survive a round trip through SQLite', () => {
  const db = new Database(':memory:');
  const nasty = ["o'brien", 'say "hi"', 'back\\slash', "'); drop table t; --", 'semi;colon', 'x\ny'];
  for (const w of nasty) {
    const sql = `select '${escapeWord(w, "'", 'sqlite')}' as v`;
    assert.equal((db.prepare(sql).get() as { v: string }).v, w);
    const bare = `select ${escapeWord(w, '', 'sqlite')} as v`;
    assert.equal((db.prepare(bare).get() as { v: string }).v, w);
  }
  assert.equal(escapeWord('42', '', 'postgres'), '42');
  assert.equal(escapeWord("it's \\", "'", 'mysql'), "it\\'s \\\\");
  assert.equal(escapeWord("it's \\", "'", 'postgres'), "it''s \\");
});

test('gen-data: %12-12s is exactly 12 letters, %5-10s is 5..10, %n the row, %d an integer', () => {
  const row = rowGenerator('%12-12s%n,%5-10s,%n,%d,%3s,%%', 7);
  for (let n = 1; n <= 200; n++) {
    const f = row(n).split(',');
    assert.match(f[0] as string, new RegExp(`^[a-z]{12}${n}$`));
    assert.ok((f[1] as string).length >= 5 && (f[1] as string).length <= 10);
    assert.equal(f[2], String(n));
    assert.match(f[3] as string, /^\d+$/);
    assert.match(f[4] as string, /^[a-z]{3}$/);
    assert.equal(f[5], '%');
  }
  assert.equal(rowGenerator('%s', 1)(1).length, 256);
  assert.equal(rowGenerator('%8s', 3)(5), rowGenerator('%8s', 3)(5), 'same seed, same rows');
  assert.throws(() => parseGenDataFormat('%q'), /'q' at position 2/);
});

test('gen_data_file commands: gen-data is recognised, anything else is a shell command', () => {
  assert.deepEqual(parseGenDataCommand('gen-data -n 90000 -f %12-12s%n,%25-25s,%n,%d'), {
    rows: 90000,
    format: '%12-12s%n,%25-25s,%n,%d',
  });
  assert.deepEqual(parseGenDataCommand("/usr/local/bin/gen-data --num-rows=5 --format '%d %d'"), {
    rows: 5,
    format: '%d %d',
  });
  assert.equal(parseGenDataCommand('gen-data -n 5 -f %d | sort'), undefined);
  assert.equal(parseGenDataCommand('seq 1 100'), undefined);
});
