/**
 * pgbench scripts: how a file splits into commands (pgbench's psql scanner), how commands compile, and
 * that every malformed script in test/fixtures/pgbench/bad stops with the FILE:LINE:COLUMN error its
 * first line expects.
 */
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import { scanScript } from '../src/workload/pgbench/scan.ts';
import {
  compileScript,
  placeholderSql,
  type SqlCommand,
  sqlTemplate,
} from '../src/workload/pgbench/script.ts';

const BAD = path.join(import.meta.dirname, 'fixtures', 'pgbench', 'bad');

const sqlOf = (text: string): string[] =>
  scanScript(text).map((c) => (c.kind === 'sql' ? c.text : `\\${c.words.map((w) => w.text).join(' ')}`));

test('SQL commands end at a semicolon outside quotes, comments, dollar quotes and parentheses', () => {
  assert.deepEqual(sqlOf('SELECT 1;\nSELECT\n  2;\n'), ['SELECT 1;', 'SELECT\n  2;']);
  assert.deepEqual(sqlOf("SELECT ';' || 'it''s;';SELECT 2;"), ["SELECT ';' || 'it''s;';", 'SELECT 2;']);
  assert.deepEqual(sqlOf('SELECT "a;b" FROM t;'), ['SELECT "a;b" FROM t;']);
  assert.deepEqual(sqlOf("SELECT E'\\';' ;"), ["SELECT E'\\';' ;"]);
  assert.deepEqual(sqlOf('SELECT $$;$$, $x$ ; $x$;'), ['SELECT $$;$$, $x$ ; $x$;']);
  assert.deepEqual(sqlOf('SELECT f(1; 2);'), ['SELECT f(1; 2);']);
  assert.deepEqual(sqlOf('SELECT 1 /* ; /* nested ; */ */;'), ['SELECT 1 /* ; /* nested ; */ */;']);
  assert.deepEqual(sqlOf('-- a comment; still a comment\nSELECT 1; -- and ; this\n'), ['SELECT 1;']);
  assert.deepEqual(sqlOf('SELECT 1'), ['SELECT 1'], 'the last command needs no semicolon');
});

test('backslashes: \\; makes a compound command, \\: a literal colon, other ones start meta-commands', () => {
  assert.deepEqual(sqlOf('SELECT 1 \\; SELECT 2;'), ['SELECT 1 ; SELECT 2;']);
  const [c] = scanScript('SELECT 1 \\; SELECT 2;');
  assert.ok(c?.kind === 'sql' && c.compound);
  assert.deepEqual(sqlOf('SELECT 1 AS a \\gset p_\nSELECT 2;'), ['SELECT 1 AS a ', '\\gset p_', 'SELECT 2;']);
  assert.deepEqual(sqlOf('\\set x 1 + \\\n 2\nSELECT :x;'), ['\\set x', 'SELECT :x;']);
  assert.deepEqual(sqlOf("SELECT '\\set';"), ["SELECT '\\set';"], 'no meta-command inside a string');
  assert.deepEqual(sqlOf('\\sleep 10 ms\n\\SLEEP 1'), ['\\sleep 10 ms', '\\SLEEP 1']);
});

test(':variables are found as pgbench finds them: anywhere, not after a second colon', () => {
  const t = sqlTemplate("SELECT :a, :b_2::int, '::x', ':c', :\"d\", :'e', a::text FROM t WHERE x = :a");
  assert.deepEqual(t.vars, ['a', 'b_2', 'c', 'a']);
  assert.equal(
    placeholderSql(t, 'postgres'),
    "SELECT $1, $2::int, '::x', '$3', :\"d\", :'e', a::text FROM t WHERE x = $4",
  );
  assert.equal(placeholderSql(sqlTemplate('SELECT :x, :y'), 'mysql'), 'SELECT ?, ?');
});

test('compiled commands: types named after the script and line, gset merged, \\if chains linked', () => {
  const s = compileScript(
    'a.sql',
    'a.sql',
    '\\set n random(1, 3)\n\\if :n = 1\nSELECT 1;\n\\elif :n = 2\nSELECT 2; SELECT 22;\n\\else\nSELECT 3 AS x \\gset p_\n\\endif\nBEGIN;\nEND;\n',
    5,
    { mode: 'simple', allowShell: false },
  );
  assert.equal(s.weight, 5);
  assert.deepEqual(
    s.commands.map((c) => `${c.index} ${c.type} ${c.kind === 'sql' ? 'sql' : c.name}`),
    [
      '0 a.sql:1 set',
      '1 a.sql:2 if',
      '2 a.sql:3 sql',
      '3 a.sql:4 elif',
      '4 a.sql:5 sql',
      '5 a.sql:5:11 sql',
      '6 a.sql:6 else',
      '7 a.sql:7 sql',
      '8 a.sql:8 endif',
      '9 a.sql:9 sql',
      '10 a.sql:10 sql',
    ],
  );
  const meta = (i: number) => s.commands[i] as { onFalse?: number; toEnd?: number };
  assert.equal(meta(1).onFalse, 3);
  assert.equal(meta(3).onFalse, 6);
  assert.equal(meta(3).toEnd, 8);
  assert.equal(meta(6).toEnd, 8);
  const gset = s.commands[7] as SqlCommand;
  assert.equal(gset.store, 'gset');
  assert.equal(gset.prefix, 'p_');
  assert.equal((s.commands[9] as SqlCommand).tx, 'begin');
  assert.equal((s.commands[10] as SqlCommand).tx, 'end');
  assert.equal(s.commands[0]?.firstLine, '\\set n random(1, 3)');
});

test('\\sleep takes a number with or without a unit, or a :variable', () => {
  const s = compileScript('s.sql', 's.sql', '\\sleep 10ms\n\\sleep 2\n\\sleep :t us\n\\sleep +5 s\n', 1, {
    mode: 'simple',
    allowShell: false,
  });
  assert.deepEqual(
    s.commands.map((c) => (c.kind === 'meta' ? c.sleep : undefined)),
    [
      { value: 10, factor: 1000 },
      { value: 2, factor: 1_000_000 },
      { value: 't', factor: 1 },
      { value: 5, factor: 1_000_000 },
    ],
  );
});

for (const f of readdirSync(BAD).filter((x) => x.endsWith('.sql'))) {
  test(`malformed script ${f} stops with the error its first line expects`, () => {
    const text = readFileSync(path.join(BAD, f), 'utf8');
    const m = /^-- expect (\d+):(\d+) (.*)$/m.exec(text);
    assert.ok(m, `${f} has no "-- expect" line`);
    assert.throws(
      () => compileScript(f, f, text, 1, { mode: 'simple', allowShell: false }),
      (e: Error) => {
        assert.equal(e.message, `${f}:${m[1]}:${m[2]}: ${m[3]}`);
        assert.equal(e.name, 'InputError');
        return true;
      },
    );
  });
}
