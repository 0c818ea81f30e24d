/**
 * pgbench's expression language: parsing (precedence, errors with their position) and evaluation
 * (integer and double arithmetic, overflow, NULLs, coercions, every function). Expected values are what
 * pgbench 15 prints for the same expressions (`\set x debug(…)`); the live comparison with the real
 * pgbench is in pgbench-compat.test.ts.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { makeSource } from '../src/workload/pgbench/errors.ts';
import { compileExpr, type EvalEnv } from '../src/workload/pgbench/evaluate.ts';
import { parseExpr } from '../src/workload/pgbench/expr.ts';
import { PgPrng } from '../src/workload/pgbench/prng.ts';
import { cG15, EvalFailure, int, parseValue, type Value, valueText } from '../src/workload/pgbench/value.ts';
import { Variables } from '../src/workload/pgbench/variables.ts';

function env(vars: Record<string, string | Value> = {}): EvalEnv & { printed: string[] } {
  const v = new Variables();
  for (const [k, x] of Object.entries(vars)) {
    if (typeof x === 'string') v.setText('test', k, x);
    else v.set('test', k, x);
  }
  const printed: string[] = [];
  return { vars: v, rng: new PgPrng(1n), debug: (t) => printed.push(t), printed };
}

/** The value of an expression as pgbench prints it with debug(): `int 5`, `double 0.3`, `null`, `boolean true`. */
function ev(src: string, e = env()): string {
  const text = `\\set x ${src}\n`;
  const s = makeSource('t.sql', text);
  const v = compileExpr(parseExpr(text, 7, text.length - 1, { src: s, command: 'set' }))(e);
  if (v.t === 'null') return 'null';
  if (v.t === 'bool') return `boolean ${v.v}`;
  return `${v.t} ${valueText(v)}`;
}

function evError(src: string, e = env()): string {
  try {
    return `no error: ${ev(src, e)}`;
  } catch (err) {
    return (err as Error).message;
  }
}

test('operators bind as in pgbench (SQL precedence; ~ takes a whole sum)', () => {
  assert.equal(ev('1 + 2 * 3'), 'int 7');
  assert.equal(ev('(1 + 2) * 3'), 'int 9');
  assert.equal(ev('-2 * 3'), 'int -6');
  assert.equal(ev('~ 1 + 1'), 'int -3');
  assert.equal(ev('~ 1 | 2'), 'int -2');
  assert.equal(ev('1 + 2 | 4'), 'int 7');
  assert.equal(ev('not 1 = 2'), 'boolean true');
  assert.equal(ev('1 < 2 and 2 < 3 or false'), 'boolean true');
  assert.equal(ev('not true or true'), 'boolean true');
  assert.equal(ev('1 = 1 is true'), 'boolean true');
  assert.equal(ev('1 > 2'), 'boolean false');
  assert.match(evError('1 > 2 = false'), /syntax error/, 'comparisons do not chain');
  assert.equal(ev('- - 3'), 'int 3');
  assert.equal(ev('+ 3'), 'int 3');
  assert.equal(ev('-9223372036854775808'), 'int -9223372036854775808');
});

test('integer arithmetic truncates and checks int64 overflow', () => {
  assert.equal(ev('5 % -3'), 'int 2');
  assert.equal(ev('-5 / 2'), 'int -2');
  assert.equal(ev('-5 % 2'), 'int -1');
  assert.equal(ev('7 / -1'), 'int -7');
  assert.equal(ev('-9223372036854775808 % -1'), 'int 0');
  assert.equal(ev('9223372036854775807 - 1'), 'int 9223372036854775806');
  assert.equal(ev('3037000499 * 3037000499'), 'int 9223372030926249001');
  assert.equal(evError('9223372036854775807 + 1'), 'bigint add out of range');
  assert.equal(evError('-9223372036854775808 - 1'), 'bigint sub out of range');
  assert.equal(evError('3037000500 * 3037000500'), 'bigint mul out of range');
  assert.equal(evError('-9223372036854775808 / -1'), 'bigint div out of range');
  assert.equal(evError('1 / 0'), 'division by zero');
  assert.equal(evError('1 % 0'), 'division by zero');
  assert.equal(ev('123456789012345678'), 'int 123456789012345678');
});

test('a double operand makes the operation double, printed as %.15g', () => {
  assert.equal(ev('double(1) / 3'), 'double 0.333333333333333');
  assert.equal(ev('0.1 + 0.2'), 'double 0.3');
  assert.equal(ev('1e-5'), 'double 1e-05');
  assert.equal(ev('1.0 / 0'), 'double Infinity');
  assert.equal(ev('0.0 / 0'), 'double NaN');
  assert.equal(ev('1e300 * 1e300'), 'double Infinity');
  assert.equal(ev('5 % 2.9'), 'int 2', 'modulo is on integers: 2.9 rounds to 3');
  assert.equal(ev('3 - 2.0'), 'double 1');
  assert.equal(ev('.5 * 2'), 'double 1');
  assert.equal(ev('1.'), 'double 1');
  assert.equal(cG15(123456789012345680), '1.23456789012346e+17');
  assert.equal(cG15(-0.00001234), '-1.234e-05');
  assert.equal(cG15(100000), '100000');
});

test('NULL: functions return NULL on NULL input, except IS and debug; AND/OR/CASE are lazy', () => {
  assert.equal(ev('1 + null'), 'null');
  assert.equal(ev('null is null'), 'boolean true');
  assert.equal(ev('1 is null'), 'boolean false');
  assert.equal(ev('1 isnull'), 'boolean false');
  assert.equal(ev('1 notnull'), 'boolean true');
  assert.equal(ev('null is not null'), 'boolean false');
  assert.equal(ev('true is true'), 'boolean true');
  assert.equal(ev('5 is true'), 'boolean false');
  assert.equal(ev('null and false'), 'null');
  assert.equal(ev('false and null'), 'boolean false');
  assert.equal(ev('true or 1 / 0 = 1'), 'boolean true');
  assert.equal(ev('case when 0 then 1 when 2 then 3 else 4 end'), 'int 3');
  assert.equal(ev('case when 0 then 1 end'), 'null');
  assert.equal(ev('least(1, 2.5, null)'), 'null');
  const e = env();
  assert.equal(ev('debug(null)', e), 'null');
  assert.deepEqual(e.printed, ['null']);
});

test('coercions: booleans are not numbers; doubles round half to even into integers', () => {
  assert.equal(evError('not 1'), 'cannot coerce int to boolean');
  assert.equal(evError('true + 1'), 'cannot coerce boolean to int');
  assert.equal(evError('true + 1.5'), 'cannot coerce boolean to double');
  assert.equal(evError('1 and true'), 'cannot coerce int to boolean');
  assert.equal(ev('int(2.5)'), 'int 2');
  assert.equal(ev('int(3.5)'), 'int 4');
  assert.equal(ev('int(-2.5)'), 'int -2');
  assert.equal(evError('int(1e30)'), 'double to int overflow for 1000000000000000019884624838656.000000');
  assert.equal(evError('int(0.0/0)'), 'double to int overflow for NaN');
  // pgbench reads a boolean's storage as a double in abs()
  assert.equal(ev('abs(true)'), 'double 4.94065645841247e-324');
  assert.equal(ev('abs(-9223372036854775808)'), 'int -9223372036854775808');
});

test('bitwise operators work on int64; shift counts are taken modulo 64', () => {
  assert.equal(ev('1 << 65'), 'int 2');
  assert.equal(ev('1 << 63'), 'int -9223372036854775808');
  assert.equal(ev('8 >> 2'), 'int 2');
  assert.equal(ev('-1 >> 1'), 'int -1');
  assert.equal(ev('1 # 3'), 'int 2');
  assert.equal(ev('6 & 3'), 'int 2');
  assert.equal(ev('~ 1'), 'int -2');
  assert.equal(ev('1.6 | 0'), 'int 2');
});

test('functions: values as pgbench 15 computes them', () => {
  assert.equal(ev('least(1, 2.5)'), 'double 1');
  assert.equal(ev('greatest(3, 2.5)'), 'double 3');
  assert.equal(ev('greatest(3, 7, -2)'), 'int 7');
  assert.equal(ev('pow(2, 10)'), 'double 1024');
  assert.equal(ev('power(1, 0.0/0)'), 'double 1');
  assert.equal(ev('sqrt(2)'), 'double 1.4142135623731');
  assert.equal(ev('ln(exp(1))'), 'double 1');
  assert.equal(ev('pi()'), 'double 3.14159265358979');
  assert.equal(ev('mod(7, 3)'), 'int 1');
  assert.equal(ev('abs(-17)'), 'int 17');
  assert.equal(ev('double(5432)'), 'double 5432');
  assert.equal(ev('hash_fnv1a(5, 0)'), 'int 1000385178204227360');
  assert.equal(ev('hash_murmur2(5, 0)'), 'int -208465272938114760');
  assert.equal(ev('hash_fnv1a(-1, 123456789)'), 'int 2241095511684530344');
  assert.equal(ev('hash_murmur2(9223372036854775807, -5)'), 'int -6669132614653716215');
  assert.equal(ev('hash(5)', env({ default_seed: int(0) })), 'int -208465272938114760');
  assert.equal(ev('permute(0, 1000000, 42)'), 'int 443945');
  assert.equal(ev('permute(999999, 1000000, 42)'), 'int 298376');
  assert.equal(ev('permute(-7, 100, 1)'), 'int 8');
  assert.equal(ev('permute(5, 2, 3)'), 'int 1');
  assert.equal(ev('permute(5, 1, 3)'), 'int 0');
  assert.equal(ev('permute(12345678901234, 98765432109876, 555)'), 'int 14286919770235');
  assert.equal(
    evError('permute(1, 0)', env({ default_seed: int(1) })),
    'permute size parameter must be greater than zero',
  );
});

test('permute is a bijection of [0, size)', () => {
  for (const size of [2, 3, 7, 100, 1000]) {
    const seen = new Set<string>();
    for (let i = 0; i < size; i++) seen.add(ev(`permute(${i}, ${size}, 99)`));
    assert.equal(seen.size, size, `size ${size}`);
  }
});

test('the random functions check their ranges and parameters as pgbench does', () => {
  assert.equal(evError('random(2, 1)'), 'empty range given to random');
  assert.equal(evError('random(-9223372036854775808, 9223372036854775807)'), 'random range is too large');
  assert.equal(
    evError('random_gaussian(1, 10, 1.5)'),
    'gaussian parameter must be at least 2.000000 (not 1.500000)',
  );
  assert.equal(
    evError('random_zipfian(1, 10, 1)'),
    'zipfian parameter must be in range [1.001, 1000] (not 1.000000)',
  );
  assert.equal(
    evError('random_zipfian(1, 10, 1001)'),
    'zipfian parameter must be in range [1.001, 1000] (not 1001.000000)',
  );
  assert.equal(
    evError('random_exponential(1, 10, 0)'),
    'exponential parameter must be greater than zero (not 0.000000)',
  );
  assert.equal(ev('random(5, 5)'), 'int 5');
  for (let i = 0; i < 200; i++) {
    const v = Number(ev('random(-3, 3)').slice(4));
    assert.ok(v >= -3 && v <= 3);
  }
});

test('variables: strings from -D and \\gset read as pgbench reads them', () => {
  assert.equal(ev(':v + 1', env({ v: '5' })), 'int 6');
  assert.equal(ev(':v', env({ v: ' -12' })), 'int -12');
  assert.equal(ev(':v', env({ v: 'yes' })), 'boolean true');
  assert.equal(ev(':v', env({ v: 'of' })), 'boolean false');
  assert.equal(ev(':v', env({ v: 'NULL' })), 'null');
  assert.equal(ev(':v', env({ v: '1.5' })), 'double 1.5');
  assert.equal(ev(':v', env({ v: '1e3' })), 'double 1000');
  assert.equal(evError(':v', env({ v: 'abc' })), 'malformed variable "v" value: "abc"');
  assert.equal(
    evError(':v', env({ v: '99999999999999999999' })),
    'value "99999999999999999999" is out of range for type bigint',
  );
  assert.equal(evError(':nope'), 'undefined variable "nope"');
  assert.throws(() => parseValue('v', ''), EvalFailure);
});

test('parse errors name the line and column of the offending token', () => {
  const bad = (src: string): string => {
    try {
      ev(src);
      return 'parsed';
    } catch (e) {
      return (e as Error).message;
    }
  };
  assert.equal(bad('1 +'), 't.sql:1:11: syntax error in command "set" at the end of the expression');
  assert.equal(bad('foo(1)'), 't.sql:1:8: unexpected function name (foo) in command "set"');
  assert.equal(bad('random(1)'), 't.sql:1:8: unexpected number of arguments (random) in command "set"');
  assert.equal(bad('least()'), 't.sql:1:8: at least one argument expected (least) in command "set"');
  assert.equal(bad('1 $ 2'), 't.sql:1:10: unexpected character ($) in command "set"');
  assert.equal(
    bad('99999999999999999999'),
    't.sql:1:8: bigint constant overflow (99999999999999999999) in command "set"',
  );
  assert.equal(bad('1e400'), 't.sql:1:8: double constant overflow (1e400) in command "set"');
  assert.equal(
    bad('9223372036854775808'),
    't.sql:1:8: syntax error in command "set" near \'9223372036854775808\'',
  );
  assert.equal(bad('1 < 2 < 3'), 't.sql:1:14: syntax error in command "set" near \'<\'');
  assert.equal(bad('random'), 't.sql:1:14: syntax error in command "set" at the end of the expression');
  assert.equal(bad('case 1 end'), 't.sql:1:13: syntax error in command "set" near \'1\'');
  assert.equal(bad('(1'), 't.sql:1:10: syntax error in command "set" at the end of the expression');
  assert.equal(bad('1 is 2'), 't.sql:1:13: syntax error in command "set" near \'2\'');
  assert.match(
    bad(`${'('.repeat(5000)}1${')'.repeat(5000)}`),
    /^t\.sql:1:\d+: expression too deeply nested in command "set"$/,
  );
  assert.match(bad(`${'- '.repeat(5000)}1`), /expression too deeply nested/);
});
