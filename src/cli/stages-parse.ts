/**
 * `--stages 30s:8,60s:64,30s:8` and `--rate-stages 30s:1000,60s:5000`: a list of DURATION:NUMBER. A
 * malformed list names the column of the first character that does not fit.
 */

import { UsageError } from '../errors.ts';
import type { StagePlan } from '../metrics/outcome.ts';

/** A bad character of a one-line expression: the message names its column (from 1), the hint points at it. */
export function columnError(option: string, text: string, index: number, what: string): UsageError {
  const col = index + 1;
  const found = index < text.length ? `'${text[index]}'` : 'the end';
  return new UsageError(
    `${option} '${text}': column ${col} (${found}): ${what}`,
    `${text}\n${' '.repeat(Math.min(index, text.length) + 6)}^`,
  );
}

const UNITS: Record<string, number> = { ms: 0.001, s: 1, m: 60, h: 3600 };

/** A small scanner over one option value. */
export class Scanner {
  i = 0;
  constructor(
    readonly option: string,
    readonly text: string,
  ) {}

  get done(): boolean {
    return this.i >= this.text.length;
  }
  peek(): string {
    return this.text[this.i] ?? '';
  }
  skipSpaces(): void {
    while (this.peek() === ' ') this.i++;
  }
  fail(what: string, at = this.i): never {
    throw columnError(this.option, this.text, at, what);
  }
  /** A decimal number (digits, an optional fraction). */
  number(what: string): number {
    const m = /^\d+(?:\.\d+)?|^\.\d+/.exec(this.text.slice(this.i));
    if (m === null) this.fail(`expected ${what}`);
    this.i += m[0].length;
    return Number(m[0]);
  }
  /** Letters (a unit or a name). */
  word(): string {
    const m = /^[A-Za-zµ_][A-Za-z0-9µ_.-]*/.exec(this.text.slice(this.i));
    if (m === null) return '';
    this.i += m[0].length;
    return m[0];
  }
}

/** A duration: a number with ms, s, m or h (seconds without a unit), in seconds. */
function duration(sc: Scanner): number {
  const start = sc.i;
  const n = sc.number('a duration such as 30s, 2m or 500ms');
  const at = sc.i;
  const unit = /^[a-z]+/.exec(sc.text.slice(sc.i))?.[0] ?? '';
  sc.i += unit.length;
  const f = unit === '' ? 1 : UNITS[unit];
  if (f === undefined) sc.fail(`unknown unit '${unit}' of a duration (ms, s, m, h)`, at);
  const s = n * f;
  if (!(s > 0)) sc.fail('a stage must last more than 0 s', start);
  return Math.round(s * 1e6) / 1e6;
}

/**
 * Parse a stage list. `kind` says what the number after the colon is: a client count (a positive integer)
 * or a rate (events per second, ≥ 0).
 */
export function parseStages(option: string, text: string, kind: 'clients' | 'rate'): StagePlan[] {
  const sc: Scanner = new Scanner(option, text);
  const out: StagePlan[] = [];
  sc.skipSpaces();
  if (sc.done) sc.fail(`expected a list like ${kind === 'clients' ? '30s:8,60s:64' : '30s:1000,60s:5000'}`);
  for (;;) {
    sc.skipSpaces();
    const durationS = duration(sc);
    if (sc.peek() !== ':') sc.fail(`expected ':' and the ${kind === 'clients' ? 'client count' : 'rate'}`);
    sc.i++;
    const at = sc.i;
    const n = sc.number(kind === 'clients' ? 'a number of clients' : 'a rate in events per second');
    if (kind === 'clients') {
      if (!Number.isInteger(n) || n < 1) sc.fail('a stage needs a whole number of clients, 1 or more', at);
      out.push({ durationS, clients: n });
    } else {
      if (sc.text.slice(sc.i, sc.i + 2) === '/s') sc.i += 2;
      out.push({ durationS, rate: n });
    }
    sc.skipSpaces();
    if (sc.done) break;
    if (sc.peek() !== ',') sc.fail("expected ',' before the next stage, or the end");
    sc.i++;
  }
  return out;
}
