/**
 * The expression language of `\set`, `\if` and `\elif`: lexer and parser, with pgbench's operators,
 * precedence (SQL's: OR < AND < NOT < IS < comparisons < bitwise < + - < * / % < unary), constants,
 * `:variables`, `CASE` and function calls with their argument counts checked here, at parse time, as
 * pgbench does. The tree keeps each node's position in the file for error messages.
 */
import { errorAt, type Source } from './errors.ts';
import { double, FALSE, INT64_MIN, int, NULL, normInt, TRUE, type Value } from './value.ts';

export type FuncName =
  | 'abs'
  | 'debug'
  | 'double'
  | 'exp'
  | 'greatest'
  | 'hash_fnv1a'
  | 'hash_murmur2'
  | 'int'
  | 'least'
  | 'ln'
  | 'mod'
  | 'permute'
  | 'pi'
  | 'pow'
  | 'random'
  | 'random_exponential'
  | 'random_gaussian'
  | 'random_zipfian'
  | 'sqrt';

/** Operators, evaluated like functions. */
export type OpName =
  | '+'
  | '-'
  | '*'
  | '/'
  | '%'
  | '='
  | '<>'
  | '<'
  | '<='
  | '&'
  | '|'
  | '#'
  | '<<'
  | '>>'
  | 'not'
  | 'is';

export type Expr =
  | { k: 'const'; v: Value; at: number }
  | { k: 'var'; name: string; at: number }
  | { k: 'fn'; f: FuncName | OpName; args: Expr[]; at: number }
  | { k: 'and' | 'or'; a: Expr; b: Expr; at: number }
  | { k: 'case'; whens: [Expr, Expr][]; otherwise: Expr; at: number };

/** Argument counts: a number, or a range for variadic ones and those with an optional seed. */
const FUNCTIONS: Record<string, { f: FuncName; min: number; max: number }> = {
  abs: { f: 'abs', min: 1, max: 1 },
  least: { f: 'least', min: 1, max: Number.POSITIVE_INFINITY },
  greatest: { f: 'greatest', min: 1, max: Number.POSITIVE_INFINITY },
  debug: { f: 'debug', min: 1, max: 1 },
  pi: { f: 'pi', min: 0, max: 0 },
  sqrt: { f: 'sqrt', min: 1, max: 1 },
  ln: { f: 'ln', min: 1, max: 1 },
  exp: { f: 'exp', min: 1, max: 1 },
  int: { f: 'int', min: 1, max: 1 },
  double: { f: 'double', min: 1, max: 1 },
  random: { f: 'random', min: 2, max: 2 },
  random_gaussian: { f: 'random_gaussian', min: 3, max: 3 },
  random_exponential: { f: 'random_exponential', min: 3, max: 3 },
  random_zipfian: { f: 'random_zipfian', min: 3, max: 3 },
  pow: { f: 'pow', min: 2, max: 2 },
  power: { f: 'pow', min: 2, max: 2 },
  mod: { f: 'mod', min: 2, max: 2 },
  hash: { f: 'hash_murmur2', min: 1, max: 2 },
  hash_murmur2: { f: 'hash_murmur2', min: 1, max: 2 },
  hash_fnv1a: { f: 'hash_fnv1a', min: 1, max: 2 },
  permute: { f: 'permute', min: 2, max: 3 },
};

/** The names a user can call, for hints. */
export const FUNCTION_NAMES: readonly string[] = Object.keys(FUNCTIONS).sort();

type TokType = 'int' | 'maxint1' | 'double' | 'var' | 'ident' | 'op' | 'kw' | 'eof';

interface Tok {
  type: TokType;
  /** Operator or keyword (lower case), identifier, or variable name. */
  text: string;
  value?: Value;
  start: number;
  end: number;
}

const KEYWORDS = new Set([
  'and',
  'or',
  'not',
  'is',
  'isnull',
  'notnull',
  'true',
  'false',
  'null',
  'case',
  'when',
  'then',
  'else',
  'end',
]);

const isDigit = (c: string): boolean => c >= '0' && c <= '9';
const isAlpha = (c: string): boolean =>
  (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c === '_' || c.charCodeAt(0) > 127;
const isAlnum = (c: string): boolean => isAlpha(c) || isDigit(c);
const isSpace = (c: string): boolean => c === ' ' || c === '\t' || c === '\r' || c === '\f' || c === '\v';

/** Where an expression is and what command it belongs to, for messages. */
export interface ExprContext {
  src: Source;
  /** The meta-command (`set`, `if`, `elif`). */
  command: string;
}

class Lexer {
  private pos: number;
  constructor(
    private readonly s: string,
    start: number,
    private readonly end: number,
    private readonly ctx: ExprContext,
  ) {
    this.pos = start;
  }

  private fail(at: number, message: string): never {
    throw errorAt(this.ctx.src, at, `${message} in command "${this.ctx.command}"`);
  }

  next(): Tok {
    const s = this.s;
    for (;;) {
      if (this.pos >= this.end) return { type: 'eof', text: '', start: this.end, end: this.end };
      const c = s[this.pos] as string;
      if (isSpace(c)) this.pos++;
      else if (
        c === '\\' &&
        (s[this.pos + 1] === '\n' || (s[this.pos + 1] === '\r' && s[this.pos + 2] === '\n'))
      ) {
        this.pos += s[this.pos + 1] === '\n' ? 2 : 3;
      } else break;
    }
    const start = this.pos;
    const c = s[start] as string;
    const two = s.slice(start, start + 2);
    if (['<>', '!=', '<=', '>=', '<<', '>>'].includes(two)) {
      this.pos += 2;
      return { type: 'op', text: two === '!=' ? '<>' : two, start, end: this.pos };
    }
    if ('+-*/%(),~&|#<>='.includes(c)) {
      this.pos++;
      return { type: 'op', text: c, start, end: this.pos };
    }
    if (isDigit(c) || (c === '.' && isDigit(s[start + 1] ?? ''))) return this.number(start);
    if (c === ':' && isAlnum(s[start + 1] ?? '')) {
      let p = start + 1;
      while (p < this.end && isAlnum(s[p] as string)) p++;
      this.pos = p;
      return { type: 'var', text: s.slice(start + 1, p), start, end: p };
    }
    if (isAlpha(c)) {
      let p = start + 1;
      while (p < this.end && isAlnum(s[p] as string)) p++;
      this.pos = p;
      const word = s.slice(start, p);
      const lower = word.toLowerCase();
      if (KEYWORDS.has(lower)) return { type: 'kw', text: lower, start, end: p };
      return { type: 'ident', text: word, start, end: p };
    }
    return this.fail(start, `unexpected character (${c})`);
  }

  private number(start: number): Tok {
    const s = this.s;
    let p = start;
    while (p < this.end && isDigit(s[p] as string)) p++;
    let isDouble = false;
    if (s[p] === '.') {
      isDouble = true;
      p++;
      while (p < this.end && isDigit(s[p] as string)) p++;
    }
    if (s[p] === 'e' || s[p] === 'E') {
      let q = p + 1;
      if (s[q] === '+' || s[q] === '-') q++;
      if (q < this.end && isDigit(s[q] as string)) {
        while (q < this.end && isDigit(s[q] as string)) q++;
        p = q;
        isDouble = true;
      }
    }
    this.pos = p;
    const text = s.slice(start, p);
    if (!isDouble) {
      if (text === '9223372036854775808') {
        return { type: 'maxint1', text, start, end: p };
      }
      const b = BigInt(text);
      if (b > 9223372036854775807n) this.fail(start, `bigint constant overflow (${text})`);
      return { type: 'int', text, value: int(normInt(b)), start, end: p };
    }
    const d = Number(text);
    if (!Number.isFinite(d) || (d === 0 && /[1-9]/.test(text.replace(/[eE].*$/, '')))) {
      this.fail(start, `double constant overflow (${text})`);
    }
    return { type: 'double', text, value: double(d), start, end: p };
  }
}

/** Binding levels, lowest first, as in pgbench's grammar. */
const L_OR = 1;
const L_AND = 2;
const L_NOT = 3;
const L_IS = 4;
const L_CMP = 5;
const L_BIT = 6;
const L_ADD = 7;
const L_MUL = 8;
const L_UNARY = 9;

function binaryLevel(t: Tok): number {
  if (t.type === 'kw') {
    if (t.text === 'or') return L_OR;
    if (t.text === 'and') return L_AND;
    if (t.text === 'is' || t.text === 'isnull' || t.text === 'notnull') return L_IS;
    return 0;
  }
  if (t.type !== 'op') return 0;
  switch (t.text) {
    case '<':
    case '>':
    case '=':
    case '<=':
    case '>=':
    case '<>':
      return L_CMP;
    case '|':
    case '#':
    case '&':
    case '<<':
    case '>>':
      return L_BIT;
    case '+':
    case '-':
      return L_ADD;
    case '*':
    case '/':
    case '%':
      return L_MUL;
    default:
      return 0;
  }
}

class Parser {
  private tok: Tok;
  private readonly lex: Lexer;
  constructor(
    s: string,
    start: number,
    end: number,
    private readonly ctx: ExprContext,
  ) {
    this.lex = new Lexer(s, start, end, ctx);
    this.tok = this.lex.next();
  }

  private advance(): Tok {
    const t = this.tok;
    this.tok = this.lex.next();
    return t;
  }

  private syntax(t: Tok = this.tok): never {
    const near =
      t.type === 'eof'
        ? 'at the end of the expression'
        : `near '${t.type === 'var' ? `:${t.text}` : t.text}'`;
    throw errorAt(this.ctx.src, t.start, `syntax error in command "${this.ctx.command}" ${near}`);
  }

  private fail(at: number, message: string): never {
    throw errorAt(this.ctx.src, at, `${message} in command "${this.ctx.command}"`);
  }

  parseAll(): Expr {
    const e = this.expr(0);
    if (this.tok.type !== 'eof') this.syntax();
    return e;
  }

  private isKw(w: string): boolean {
    return this.tok.type === 'kw' && this.tok.text === w;
  }
  private isOp(o: string): boolean {
    return this.tok.type === 'op' && this.tok.text === o;
  }

  /** How deep the parse is: a bound, so that no input can exhaust the stack (bison stops at 10000 too). */
  private depth = 0;

  private expr(min: number): Expr {
    if (++this.depth > 1000) this.fail(this.tok.start, 'expression too deeply nested');
    try {
      return this.exprAt(min);
    } finally {
      this.depth--;
    }
  }

  private exprAt(min: number): Expr {
    let left = this.prefix();
    for (;;) {
      const t = this.tok;
      const level = binaryLevel(t);
      if (level === 0 || level < min) return left;
      this.advance();
      if (level === L_IS) {
        left = this.isTest(t, left);
        continue;
      }
      // left associative, except the comparisons, which do not associate
      const right = this.expr(level + 1);
      left = this.binary(t, left, right);
      if (level === L_CMP && binaryLevel(this.tok) === L_CMP) this.syntax();
    }
  }

  private isTest(t: Tok, left: Expr): Expr {
    const at = t.start;
    const isNull = (e: Expr): Expr => ({ k: 'fn', f: 'is', args: [e, { k: 'const', v: NULL, at }], at });
    const not = (e: Expr): Expr => ({ k: 'fn', f: 'not', args: [e], at });
    if (t.text === 'isnull') return isNull(left);
    if (t.text === 'notnull') return not(isNull(left));
    let negate = false;
    if (this.isKw('not')) {
      this.advance();
      negate = true;
    }
    const w = this.tok;
    let test: Expr;
    if (w.type === 'kw' && w.text === 'null') test = isNull(left);
    else if (w.type === 'kw' && (w.text === 'true' || w.text === 'false')) {
      test = {
        k: 'fn',
        f: 'is',
        args: [left, { k: 'const', v: w.text === 'true' ? TRUE : FALSE, at: w.start }],
        at,
      };
    } else return this.syntax(w);
    this.advance();
    return negate ? not(test) : test;
  }

  private binary(t: Tok, a: Expr, b: Expr): Expr {
    const at = t.start;
    switch (t.text) {
      case 'or':
        return { k: 'or', a, b, at };
      case 'and':
        return { k: 'and', a, b, at };
      case '>':
        return { k: 'fn', f: '<', args: [b, a], at };
      case '>=':
        return { k: 'fn', f: '<=', args: [b, a], at };
      default:
        return { k: 'fn', f: t.text as OpName, args: [a, b], at };
    }
  }

  private prefix(): Expr {
    const t = this.tok;
    const at = t.start;
    if (t.type === 'op') {
      if (t.text === '(') {
        this.advance();
        const e = this.expr(0);
        if (!this.isOp(')')) this.syntax();
        this.advance();
        return e;
      }
      if (t.text === '+') {
        this.advance();
        return this.expr(L_UNARY);
      }
      if (t.text === '-') {
        this.advance();
        if (this.tok.type === 'maxint1') {
          this.advance();
          return { k: 'const', v: int(INT64_MIN), at };
        }
        const e = this.expr(L_UNARY);
        return { k: 'fn', f: '-', args: [{ k: 'const', v: int(0), at }, e], at };
      }
      if (t.text === '~') {
        this.advance();
        const e = this.expr(L_BIT + 1);
        return { k: 'fn', f: '#', args: [{ k: 'const', v: int(-1), at }, e], at };
      }
      return this.syntax();
    }
    if (t.type === 'kw') {
      switch (t.text) {
        case 'not': {
          this.advance();
          const e = this.expr(L_NOT + 1);
          return { k: 'fn', f: 'not', args: [e], at };
        }
        case 'null':
          this.advance();
          return { k: 'const', v: NULL, at };
        case 'true':
          this.advance();
          return { k: 'const', v: TRUE, at };
        case 'false':
          this.advance();
          return { k: 'const', v: FALSE, at };
        case 'case':
          return this.caseExpr();
        default:
          return this.syntax();
      }
    }
    if (t.type === 'int' || t.type === 'double') {
      this.advance();
      return { k: 'const', v: t.value as Value, at };
    }
    if (t.type === 'var') {
      this.advance();
      return { k: 'var', name: t.text, at };
    }
    if (t.type === 'ident') return this.call();
    return this.syntax();
  }

  private caseExpr(): Expr {
    const at = this.advance().start;
    const whens: [Expr, Expr][] = [];
    if (!this.isKw('when')) this.syntax();
    while (this.isKw('when')) {
      this.advance();
      const c = this.expr(0);
      if (!this.isKw('then')) this.syntax();
      this.advance();
      whens.push([c, this.expr(0)]);
    }
    let otherwise: Expr = { k: 'const', v: NULL, at };
    if (this.isKw('else')) {
      this.advance();
      otherwise = this.expr(0);
    }
    if (!this.isKw('end')) this.syntax();
    this.advance();
    return { k: 'case', whens, otherwise, at };
  }

  private call(): Expr {
    const name = this.advance();
    const def = FUNCTIONS[name.text.toLowerCase()];
    if (def === undefined) this.fail(name.start, `unexpected function name (${name.text})`);
    if (!this.isOp('(')) this.syntax();
    this.advance();
    const args: Expr[] = [];
    if (!this.isOp(')')) {
      for (;;) {
        args.push(this.expr(0));
        if (this.isOp(',')) {
          this.advance();
          continue;
        }
        break;
      }
    }
    if (!this.isOp(')')) this.syntax();
    this.advance();
    if (args.length < def.min || args.length > def.max) {
      this.fail(
        name.start,
        def.max === Number.POSITIVE_INFINITY
          ? `at least one argument expected (${name.text})`
          : `unexpected number of arguments (${name.text})`,
      );
    }
    // hash and permute take :default_seed when their seed is left out
    if ((def.f === 'hash_murmur2' || def.f === 'hash_fnv1a') && args.length === 1) {
      args.push({ k: 'var', name: 'default_seed', at: name.start });
    }
    if (def.f === 'permute' && args.length === 2)
      args.push({ k: 'var', name: 'default_seed', at: name.start });
    return { k: 'fn', f: def.f, args, at: name.start };
  }
}

/** Parse the expression in `s[start, end)`. */
export function parseExpr(s: string, start: number, end: number, ctx: ExprContext): Expr {
  return new Parser(s, start, end, ctx).parseAll();
}

/**
 * What an expression depends on beyond the random state: the variables it reads, and whether it calls
 * `debug()` (which prints). The runner uses it to know whether a `\set` can be evaluated again with the
 * same result (see run-script.ts, batchable scripts).
 */
export function exprUses(e: Expr, out: { reads: Set<string>; prints: boolean }): void {
  switch (e.k) {
    case 'const':
      return;
    case 'var':
      out.reads.add(e.name);
      return;
    case 'fn':
      if (e.f === 'debug') out.prints = true;
      for (const a of e.args) exprUses(a, out);
      return;
    case 'and':
    case 'or':
      exprUses(e.a, out);
      exprUses(e.b, out);
      return;
    case 'case':
      for (const [w, t] of e.whens) {
        exprUses(w, out);
        exprUses(t, out);
      }
      exprUses(e.otherwise, out);
      return;
  }
}
