/**
 * Evaluation of pgbench expressions. The tree is compiled once into closures; each evaluation then walks
 * no tree and allocates little. Semantics as pgbench's `evaluateExpr`: AND, OR and CASE are lazy; any other
 * function returns NULL when an argument is NULL (except IS and debug); integer operators check int64
 * overflow; a double operand makes the operation double (not for %); errors carry pgbench's message.
 */
import type { Expr } from './expr.ts';
import {
  exponentialRand,
  gaussianRand,
  hashFnv1a,
  hashMurmur2,
  MAX_ZIPFIAN_PARAM,
  MIN_GAUSSIAN_PARAM,
  MIN_ZIPFIAN_PARAM,
  permute,
  uniformRand,
  zipfianRand,
} from './functions.ts';
import type { PgPrng } from './prng.ts';
import {
  big,
  bool,
  cFixed,
  cG15,
  checked,
  double,
  EvalFailure,
  INT64_MIN,
  type Int,
  int,
  NULL,
  normInt,
  toBool,
  toDouble,
  toInt,
  truth,
  type Value,
  wrap,
} from './value.ts';
import type { Variables } from './variables.ts';

export interface EvalEnv {
  vars: Variables;
  rng: PgPrng;
  /** debug(): print one line the way pgbench does (`debug(script=0,command=1): int 5`). */
  debug(text: string): void;
}

export type Compiled = (env: EvalEnv) => Value;

const SAFE = 9007199254740991;
const MAX_FARGS = 16;

export function compileExpr(e: Expr): Compiled {
  switch (e.k) {
    case 'const': {
      const v = e.v;
      return () => v;
    }
    case 'var': {
      const name = e.name;
      return (env) => env.vars.value(name);
    }
    case 'and': {
      const a = compileExpr(e.a);
      const b = compileExpr(e.b);
      return (env) => {
        const x = a(env);
        if (x.t === 'null') return NULL;
        if (!toBool(x)) return bool(false);
        const y = b(env);
        if (y.t === 'null') return NULL;
        return bool(toBool(y));
      };
    }
    case 'or': {
      const a = compileExpr(e.a);
      const b = compileExpr(e.b);
      return (env) => {
        const x = a(env);
        if (x.t === 'null') return NULL;
        if (toBool(x)) return bool(true);
        const y = b(env);
        if (y.t === 'null') return NULL;
        return bool(toBool(y));
      };
    }
    case 'case': {
      const whens = e.whens.map(([c, r]) => [compileExpr(c), compileExpr(r)] as const);
      const otherwise = compileExpr(e.otherwise);
      return (env) => {
        for (const [c, r] of whens) if (truth(c(env))) return r(env);
        return otherwise(env);
      };
    }
    case 'fn':
      return compileCall(e.f, e.args.map(compileExpr));
  }
}

function compileCall(f: string, args: Compiled[]): Compiled {
  if (args.length > MAX_FARGS) {
    return () => {
      throw new EvalFailure(`too many function arguments, maximum is ${MAX_FARGS}`);
    };
  }
  const apply = FUNCS[f] as (v: Value[], env: EvalEnv) => Value;
  const keepsNull = f === 'is' || f === 'debug';
  if (args.length === 2) {
    const [a, b] = args as [Compiled, Compiled];
    // the common cases without an argument array: integer + - * on safe numbers, and random()
    if (f === '+' || f === '-' || f === '*') {
      return (env) => {
        const x = a(env);
        const y = b(env);
        if (x.t === 'int' && y.t === 'int' && typeof x.v === 'number' && typeof y.v === 'number') {
          const r = f === '+' ? x.v + y.v : f === '-' ? x.v - y.v : x.v * y.v;
          if (r >= -SAFE && r <= SAFE) return int(r === 0 ? 0 : r);
        }
        if (x.t === 'null' || y.t === 'null') return NULL;
        return arith(f, [x, y]);
      };
    }
    if (f === 'random') {
      return (env) => {
        const x = a(env);
        const y = b(env);
        if (
          x.t === 'int' &&
          y.t === 'int' &&
          typeof x.v === 'number' &&
          typeof y.v === 'number' &&
          x.v <= y.v
        ) {
          return int(uniformRand(env.rng, x.v, y.v));
        }
        if (x.t === 'null' || y.t === 'null') return NULL;
        return apply([x, y], env);
      };
    }
    const vs: Value[] = [NULL, NULL];
    return (env) => {
      const x = a(env);
      const y = b(env);
      if (!keepsNull && (x.t === 'null' || y.t === 'null')) return NULL;
      vs[0] = x;
      vs[1] = y;
      return apply(vs, env);
    };
  }
  return (env) => {
    const vs = args.map((a) => a(env));
    if (!keepsNull && vs.some((v) => v.t === 'null')) return NULL;
    return apply(vs, env);
  };
}

function overflow(op: string): never {
  throw new EvalFailure(`bigint ${op} out of range`);
}

function intOp(op: string, a: Int, b: Int): Value {
  if (typeof a === 'number' && typeof b === 'number') {
    let r: number;
    if (op === 'add') r = a + b;
    else if (op === 'sub') r = a - b;
    else r = a * b;
    if (r >= -SAFE && r <= SAFE) return int(r === 0 ? 0 : r);
  }
  const x = big(a);
  const y = big(b);
  const r = checked(op === 'add' ? x + y : op === 'sub' ? x - y : x * y);
  if (r === undefined) overflow(op);
  return int(r);
}

/** + - * / % = <> <= < with pgbench's double-if-any-double rule. */
function arith(f: string, v: Value[]): Value {
  const l = v[0] as Value;
  const r = v[1] as Value;
  if ((l.t === 'double' || r.t === 'double') && f !== '%' && f !== 'mod') {
    const ld = toDouble(l);
    const rd = toDouble(r);
    switch (f) {
      case '+':
        return double(ld + rd);
      case '-':
        return double(ld - rd);
      case '*':
        return double(ld * rd);
      case '/':
        return double(ld / rd);
      case '=':
        return bool(ld === rd);
      case '<>':
        return bool(ld !== rd);
      case '<=':
        return bool(ld <= rd);
      default:
        return bool(ld < rd);
    }
  }
  const li = toInt(l);
  const ri = toInt(r);
  switch (f) {
    case '+':
      return intOp('add', li, ri);
    case '-':
      return intOp('sub', li, ri);
    case '*':
      return intOp('mul', li, ri);
    // an integer has one representation (a number when it is safe), so === compares values
    case '=':
      return bool(li === ri);
    case '<>':
      return bool(li !== ri);
    case '<=':
      return bool(li <= ri);
    case '<':
      return bool(li < ri);
    default: {
      // '/', '%', mod
      if (ri === 0 || ri === 0n) throw new EvalFailure('division by zero');
      const isDiv = f === '/';
      if (ri === -1 || ri === -1n) {
        if (!isDiv) return int(0);
        if (li === INT64_MIN) overflow('div');
        return int(typeof li === 'bigint' ? normInt(-li) : li === 0 ? 0 : -li);
      }
      if (typeof li === 'number' && typeof ri === 'number') {
        const m = li % ri;
        if (!isDiv) return int(m === 0 ? 0 : m);
        const q = (li - m) / ri;
        return int(q === 0 ? 0 : q);
      }
      const x = big(li);
      const y = big(ri);
      return int(normInt(isDiv ? x / y : x % y));
    }
  }
}

function bitwise(f: string, v: Value[]): Value {
  const a = big(toInt(v[0] as Value));
  const b = toInt(v[1] as Value);
  switch (f) {
    case '&':
      return int(normInt(a & big(b)));
    case '|':
      return int(normInt(a | big(b)));
    case '#':
      return int(normInt(a ^ big(b)));
    case '<<':
      // C shifts an int64 by the count modulo 64 on the machines pgbench runs on
      return int(wrap(a << (big(b) & 63n)));
    default:
      return int(normInt(a >> (big(b) & 63n)));
  }
}

function extremum(v: Value[], least: boolean): Value {
  if (v.some((x) => x.t === 'double')) {
    let e = toDouble(v[0] as Value);
    for (let i = 1; i < v.length; i++) {
      const d = toDouble(v[i] as Value);
      // C's Min/Max macros, not Math.min/max: they differ on NaN
      // biome-ignore lint/complexity/useMathMinMax: NaN must behave as in pgbench
      e = least ? (e < d ? e : d) : e > d ? e : d;
    }
    return double(e);
  }
  let e = toInt(v[0] as Value);
  for (let i = 1; i < v.length; i++) {
    const d = toInt(v[i] as Value);
    if (least ? d < e : d > e) e = d;
  }
  return int(e);
}

/** Checks shared by the random functions: the range, and that max - min + 1 fits in int64. */
function randomRange(v: Value[]): [Int, Int] {
  const min = toInt(v[0] as Value);
  const max = toInt(v[1] as Value);
  if (min > max) throw new EvalFailure('empty range given to random');
  if (checked(big(max) - big(min) + 1n) === undefined) throw new EvalFailure('random range is too large');
  return [min, max];
}

/** C's pow(): 1 to any power and anything to the power 0 are 1, which `**` does not always give. */
function cPow(x: number, y: number): number {
  if (x === 1 || y === 0) return 1;
  if (x === -1 && !Number.isFinite(y) && !Number.isNaN(y)) return 1;
  return x ** y;
}

function debugText(v: Value): string {
  switch (v.t) {
    case 'null':
      return 'null';
    case 'bool':
      return `boolean ${v.v ? 'true' : 'false'}`;
    case 'int':
      return `int ${v.v}`;
    case 'double':
      return `double ${cG15(v.v)}`;
  }
}

const FUNCS: Record<string, (v: Value[], env: EvalEnv) => Value> = {
  '+': (v) => arith('+', v),
  '-': (v) => arith('-', v),
  '*': (v) => arith('*', v),
  '/': (v) => arith('/', v),
  '%': (v) => arith('%', v),
  mod: (v) => arith('%', v),
  '=': (v) => arith('=', v),
  '<>': (v) => arith('<>', v),
  '<=': (v) => arith('<=', v),
  '<': (v) => arith('<', v),
  '&': (v) => bitwise('&', v),
  '|': (v) => bitwise('|', v),
  '#': (v) => bitwise('#', v),
  '<<': (v) => bitwise('<<', v),
  '>>': (v) => bitwise('>>', v),
  not: (v) => bool(!toBool(v[0] as Value)),
  is: (v) => {
    const a = v[0] as Value;
    const b = v[1] as Value;
    if (a.t !== b.t) return bool(false);
    return bool(a.t === 'null' || (a.t === 'bool' && b.t === 'bool' && a.v === b.v));
  },
  pi: () => double(Math.PI),
  abs: (v) => {
    const a = v[0] as Value;
    if (a.t === 'int') {
      const i = a.v;
      if (typeof i === 'bigint') return int(i === INT64_MIN ? i : normInt(i < 0n ? -i : i));
      return int(i < 0 ? -i : i);
    }
    // pgbench reads a boolean's storage as a double here: the smallest denormal for true, 0 for false
    if (a.t === 'bool') return double(a.v ? Number.MIN_VALUE : 0);
    const d = toDouble(a);
    return double(d < 0 ? -d : d);
  },
  debug: (v, env) => {
    const a = v[0] as Value;
    env.debug(debugText(a));
    return a;
  },
  double: (v) => double(toDouble(v[0] as Value)),
  sqrt: (v) => double(Math.sqrt(toDouble(v[0] as Value))),
  ln: (v) => double(Math.log(toDouble(v[0] as Value))),
  exp: (v) => double(Math.exp(toDouble(v[0] as Value))),
  int: (v) => int(toInt(v[0] as Value)),
  least: (v) => extremum(v, true),
  greatest: (v) => extremum(v, false),
  random: (v, env) => {
    const [min, max] = randomRange(v);
    return int(uniformRand(env.rng, min, max));
  },
  random_exponential: (v, env) => {
    const [min, max] = randomRange(v);
    const p = toDouble(v[2] as Value);
    if (!(p > 0.0))
      throw new EvalFailure(`exponential parameter must be greater than zero (not ${cFixed(p)})`);
    return int(exponentialRand(env.rng, min, max, p));
  },
  random_gaussian: (v, env) => {
    const [min, max] = randomRange(v);
    const p = toDouble(v[2] as Value);
    if (!(p >= MIN_GAUSSIAN_PARAM)) {
      throw new EvalFailure(
        `gaussian parameter must be at least ${cFixed(MIN_GAUSSIAN_PARAM)} (not ${cFixed(p)})`,
      );
    }
    return int(gaussianRand(env.rng, min, max, p));
  },
  random_zipfian: (v, env) => {
    const [min, max] = randomRange(v);
    const p = toDouble(v[2] as Value);
    if (!(p >= MIN_ZIPFIAN_PARAM && p <= MAX_ZIPFIAN_PARAM)) {
      throw new EvalFailure(
        `zipfian parameter must be in range [${MIN_ZIPFIAN_PARAM.toFixed(3)}, ${MAX_ZIPFIAN_PARAM.toFixed(0)}] (not ${cFixed(p)})`,
      );
    }
    return int(zipfianRand(env.rng, min, max, p));
  },
  pow: (v) => double(cPow(toDouble(v[0] as Value), toDouble(v[1] as Value))),
  hash_murmur2: (v) => int(hashMurmur2(toInt(v[0] as Value), toInt(v[1] as Value))),
  hash_fnv1a: (v) => int(hashFnv1a(toInt(v[0] as Value), toInt(v[1] as Value))),
  permute: (v) => {
    const val = toInt(v[0] as Value);
    const size = toInt(v[1] as Value);
    const seed = toInt(v[2] as Value);
    if (size <= 0) throw new EvalFailure('permute size parameter must be greater than zero');
    return int(permute(val, size, seed));
  },
};
