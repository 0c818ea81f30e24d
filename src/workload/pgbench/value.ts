/**
 * pgbench's values: NULL, boolean, 64-bit integer and double, with its coercions and string forms. An
 * integer is a JS number while it is a safe integer and a bigint beyond, so the common case is plain
 * arithmetic and the rare huge one (hash functions, shifts) stays exact; every integer operation checks
 * int64 overflow as pgbench does.
 */

export type Int = number | bigint;

export type Value =
  | { readonly t: 'null' }
  | { readonly t: 'bool'; readonly v: boolean }
  | { readonly t: 'int'; readonly v: Int }
  | { readonly t: 'double'; readonly v: number };

export const NULL: Value = { t: 'null' };
export const TRUE: Value = { t: 'bool', v: true };
export const FALSE: Value = { t: 'bool', v: false };

export const INT64_MIN = -(2n ** 63n);
const TWO63 = 2 ** 63;
export const INT64_MAX = 2n ** 63n - 1n;

/** A failed evaluation: pgbench's message; the client running it is aborted. */
export class EvalFailure extends Error {
  override readonly name = 'EvalFailure';
}

export const bool = (b: boolean): Value => (b ? TRUE : FALSE);
export const double = (d: number): Value => ({ t: 'double', v: d });

/** An integer value from a number (a safe integer) or a bigint already checked to fit in int64. */
export function int(v: Int): Value {
  return { t: 'int', v: typeof v === 'bigint' ? normInt(v) : v };
}

/** A bigint in int64 range as the canonical Int: a number when it is safe. */
export function normInt(b: bigint): Int {
  return b >= -9007199254740991n && b <= 9007199254740991n ? Number(b) : b;
}

export const big = (v: Int): bigint => (typeof v === 'bigint' ? v : BigInt(v));

/** The int64 a result in bigint fits, or undefined when it overflows. */
export function checked(b: bigint): Int | undefined {
  return b < INT64_MIN || b > INT64_MAX ? undefined : normInt(b);
}

/** Two's-complement wrap to int64, as C arithmetic on int64 does where pgbench does not check. */
export const wrap = (b: bigint): Int => normInt(BigInt.asIntN(64, b));

export function typeName(v: Value): string {
  return v.t === 'bool' ? 'boolean' : v.t;
}

/** C rint(): round half to even. */
export function rint(x: number): number {
  if (!Number.isFinite(x) || Math.abs(x) >= 4503599627370496) return x;
  const f = Math.floor(x);
  const d = x - f;
  if (d < 0.5) return f;
  if (d > 0.5) return f + 1;
  return f % 2 === 0 ? f : f + 1;
}

export function toBool(v: Value): boolean {
  if (v.t === 'bool') return v.v;
  throw new EvalFailure(`cannot coerce ${typeName(v)} to boolean`);
}

export function toInt(v: Value): Int {
  if (v.t === 'int') return v.v;
  if (v.t === 'double') {
    const d = rint(v.v);
    if (Number.isNaN(d) || !(d >= -TWO63 && d < TWO63)) {
      throw new EvalFailure(`double to int overflow for ${cFixed(d)}`);
    }
    return Number.isSafeInteger(d) ? d : BigInt(d);
  }
  throw new EvalFailure(`cannot coerce ${typeName(v)} to int`);
}

export function toDouble(v: Value): number {
  if (v.t === 'double') return v.v;
  if (v.t === 'int') return Number(v.v);
  throw new EvalFailure(`cannot coerce ${typeName(v)} to double`);
}

/** Non-zero numbers are true; zero and NULL are false (\if, CASE WHEN). */
export function truth(v: Value): boolean {
  switch (v.t) {
    case 'null':
      return false;
    case 'bool':
      return v.v;
    case 'int':
      return v.v !== 0 && v.v !== 0n;
    case 'double':
      return v.v !== 0;
  }
}

/** `%f` as PostgreSQL's own snprintf prints it (NaN and Infinity spelled out). */
export function cFixed(d: number): string {
  if (Number.isNaN(d)) return 'NaN';
  if (!Number.isFinite(d)) return d > 0 ? 'Infinity' : '-Infinity';
  // toFixed turns to exponents from 1e21; such doubles are whole numbers
  if (Math.abs(d) >= 1e21) return `${BigInt(d)}.000000`;
  return d.toFixed(6);
}

/** `%.15g` (DBL_DIG) as PostgreSQL's snprintf prints it: how pgbench turns a double into text. */
export function cG15(d: number): string {
  if (Number.isNaN(d)) return 'NaN';
  if (!Number.isFinite(d)) return d > 0 ? 'Infinity' : '-Infinity';
  if (d === 0) return Object.is(d, -0) ? '-0' : '0';
  const [mant, expStr] = d.toExponential(14).split('e') as [string, string];
  const exp = Number(expStr);
  if (exp < -4 || exp >= 15) {
    const m = mant.includes('.') ? mant.replace(/0+$/, '').replace(/\.$/, '') : mant;
    return `${m}e${exp < 0 ? '-' : '+'}${String(Math.abs(exp)).padStart(2, '0')}`;
  }
  const fixed = d.toFixed(14 - exp);
  return fixed.includes('.') ? fixed.replace(/0+$/, '').replace(/\.$/, '') : fixed;
}

/** The text a value takes in SQL and in \gset'd variables' place (pgbench's getVariable). */
export function valueText(v: Value): string {
  switch (v.t) {
    case 'null':
      return 'NULL';
    case 'bool':
      return v.v ? 'true' : 'false';
    case 'int':
      return String(v.v);
    case 'double':
      return cG15(v.v);
  }
}

/** pgbench's is_an_int: optional spaces, optional sign, digits, nothing after. */
const INT_RE = /^[\s]*[+-]?[0-9]*$/;
const DOUBLE_RE =
  /^\s*[+-]?(?:(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?|inf(?:inity)?|nan|0[xX](?:[0-9a-fA-F]+\.?[0-9a-fA-F]*|\.[0-9a-fA-F]+)(?:[pP][+-]?\d+)?)$/i;

/** strtod on the whole string, or undefined. */
function parseDouble(s: string): number | undefined {
  if (!DOUBLE_RE.test(s)) return undefined;
  const t = s.trim().toLowerCase();
  const neg = t.startsWith('-');
  const body = t.replace(/^[+-]/, '');
  let v: number;
  if (body.startsWith('inf')) v = Number.POSITIVE_INFINITY;
  else if (body === 'nan') v = Number.NaN;
  else if (body.startsWith('0x')) {
    const m = /^0x([0-9a-f]*)(?:\.([0-9a-f]*))?(?:p([+-]?\d+))?$/.exec(body);
    if (m === null) return undefined;
    const frac = m[2] ?? '';
    v = Number.parseInt((m[1] || '0') + frac, 16) * 2 ** (Number(m[3] ?? 0) - 4 * frac.length);
  } else v = Number(body);
  if (!Number.isFinite(v) && !body.startsWith('inf') && body !== 'nan') return undefined; // ERANGE
  return neg ? -v : v;
}

/**
 * A variable's string (from -D, \gset, \setshell) as a value, the way pgbench reads it: NULL, booleans
 * (prefixes of true/yes/false/no, on/off), an integer, else a double. Throws with pgbench's message;
 * the empty string fails without one, as in pgbench.
 */
export function parseValue(name: string, s: string): Value {
  const n = s.length;
  if (n === 0) throw new EvalFailure('');
  const l = s.toLowerCase();
  if (l === 'null') return NULL;
  if ('true'.startsWith(l) || 'yes'.startsWith(l) || l === 'on') return TRUE;
  if ('false'.startsWith(l) || 'no'.startsWith(l) || l === 'off' || l === 'of') return FALSE;
  if (INT_RE.test(s)) {
    const m = /^\s*([+-]?)([0-9]+)$/.exec(s);
    if (m === null) throw new EvalFailure(`invalid input syntax for type bigint: "${s}"`);
    const b = BigInt(`${m[1]}${m[2]}`);
    const v = checked(b);
    if (v === undefined) throw new EvalFailure(`value "${s}" is out of range for type bigint`);
    return int(v);
  }
  const d = parseDouble(s);
  if (d === undefined) throw new EvalFailure(`malformed variable "${name}" value: "${s}"`);
  return double(d);
}
