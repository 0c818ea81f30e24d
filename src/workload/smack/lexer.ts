/**
 * Tokens of the smack language. Unlike the original flex scanner this one rejects characters it does not
 * know (the original dropped them silently, so a typo changed the meaning of a file without a word), and a
 * string keeps `\x` sequences other than `\\`, `\"` and backslash-newline as written (the original dropped
 * every character up to the next backslash, quote or newline).
 */
import type { Pos } from './ast.ts';
import { SmackError } from './errors.ts';

export type TokenKind = 'word' | 'number' | 'string' | 'punct' | 'eof';

export interface Token {
  kind: TokenKind;
  /** The word, the digits, the punctuation, or the decoded string value. */
  text: string;
  pos: Pos;
}

const PUNCT = new Set(['{', '}', '(', ')', ';', '.', ',', '$', '=']);

/** Show a token the way it was written, for "near …" in error messages. */
export function describeToken(t: Token): string {
  if (t.kind === 'eof') return 'end of file';
  if (t.kind === 'string') {
    const s = t.text.length > 30 ? `${t.text.slice(0, 27)}...` : t.text;
    return `"${s.replace(/\n/g, '\\n')}"`;
  }
  return `'${t.text}'`;
}

export function tokenize(src: string, file: string): Token[] {
  const out: Token[] = [];
  // A byte-order mark from a Windows editor is not part of the program.
  let i = src.charCodeAt(0) === 0xfeff ? 1 : 0;
  let line = 1;
  let lineStart = i;
  const n = src.length;
  const pos = (): Pos => ({ line, col: i - lineStart + 1 });
  while (i < n) {
    const c = src[i] as string;
    if (c === '\n') {
      i++;
      line++;
      lineStart = i;
      continue;
    }
    if (c === ' ' || c === '\t' || c === '\r' || c === '\f' || c === '\v') {
      i++;
      continue;
    }
    if (c === '#' || (c === '/' && src[i + 1] === '/')) {
      while (i < n && src[i] !== '\n') i++;
      continue;
    }
    if (/[A-Za-z_]/.test(c)) {
      const p = pos();
      const start = i;
      while (i < n && /[A-Za-z0-9_]/.test(src[i] as string)) i++;
      out.push({ kind: 'word', text: src.slice(start, i), pos: p });
      continue;
    }
    if (c >= '0' && c <= '9') {
      const p = pos();
      const start = i;
      while (i < n && src[i]! >= '0' && src[i]! <= '9') i++;
      out.push({ kind: 'number', text: src.slice(start, i), pos: p });
      continue;
    }
    if (c === '"') {
      const p = pos();
      i++;
      let value = '';
      for (;;) {
        if (i >= n) {
          throw new SmackError(
            file,
            p,
            'unterminated string',
            'a string runs from one " to the next; write \\" for a quote inside it',
          );
        }
        const d = src[i] as string;
        if (d === '"') {
          i++;
          break;
        }
        if (d === '\\' && i + 1 < n) {
          const e = src[i + 1] as string;
          if (e === '"' || e === '\\') value += e;
          else if (e === '\n') value += '\n';
          else value += d + e;
          i += 2;
          if (e === '\n') {
            line++;
            lineStart = i;
          }
          continue;
        }
        value += d;
        i++;
        if (d === '\n') {
          line++;
          lineStart = i;
        }
      }
      out.push({ kind: 'string', text: value, pos: p });
      continue;
    }
    if (c === ':' && src[i + 1] === ':') {
      out.push({ kind: 'punct', text: '::', pos: pos() });
      i += 2;
      continue;
    }
    if (PUNCT.has(c)) {
      out.push({ kind: 'punct', text: c, pos: pos() });
      i++;
      continue;
    }
    const code = c.charCodeAt(0);
    const shown = code < 0x20 || code === 0x7f ? `\\x${code.toString(16).padStart(2, '0')}` : c;
    throw new SmackError(
      file,
      pos(),
      `unexpected character '${shown}'`,
      'comments start with # or //; every property value is a double-quoted string',
    );
  }
  out.push({ kind: 'eof', text: '', pos: pos() });
  return out;
}
