/**
 * Splits a pgbench script into its commands the way pgbench's scanner (psql's lexer) does: an SQL command
 * runs up to a `;` outside quotes, comments, dollar quotes and parentheses (and may span lines); `\;` and
 * `\:` put a literal `;` or `:` into the SQL (so `\;` makes a compound command); any other backslash ends
 * the SQL and starts a meta-command, which runs to the end of its line (backslash-newline continues it)
 * and is split into words.
 */

export interface Word {
  text: string;
  /** Offset of its first character in the file. */
  at: number;
}

export type ScannedCommand =
  | {
      kind: 'sql';
      /** The SQL as pgbench sends it: `\;` and `\:` already turned into `;` and `:`. */
      text: string;
      /** Offset of its first character in the file. */
      at: number;
      /** It held a `\;`: several queries sent as one. */
      compound: boolean;
    }
  | {
      kind: 'meta';
      /** Offset of the backslash. */
      at: number;
      /** The command name and its arguments (for \set, \if and \elif: only the name and \set's variable). */
      words: Word[];
      /** For \set, \if, \elif: where the expression starts and where the line ends. */
      exprStart: number;
      end: number;
    };

const isSpace = (c: string | undefined): boolean =>
  c === ' ' || c === '\t' || c === '\r' || c === '\f' || c === '\v';
const isIdent = (c: string | undefined): boolean =>
  c !== undefined && (/[A-Za-z0-9_$]/.test(c) || c.charCodeAt(0) > 127);

const EXPR_COMMANDS = new Set(['set', 'if', 'elif']);

export function scanScript(s: string): ScannedCommand[] {
  const out: ScannedCommand[] = [];
  let buf = '';
  let bufAt = -1;
  let depth = 0;
  let compound = false;
  let i = 0;
  const n = s.length;
  const put = (text: string, at: number): void => {
    if (buf === '') bufAt = at;
    buf += text;
  };
  const flush = (): void => {
    const text = skipLeadingComments(buf);
    if (text !== '') out.push({ kind: 'sql', text, at: bufAt + (buf.length - text.length), compound });
    buf = '';
    bufAt = -1;
    depth = 0;
    compound = false;
  };
  while (i < n) {
    const c = s[i] as string;
    const d = s[i + 1];
    if (c === '-' && d === '-') {
      const nl = s.indexOf('\n', i);
      const end = nl < 0 ? n : nl;
      if (buf !== '') put(s.slice(i, end), i);
      i = end;
    } else if (c === '/' && d === '*') {
      let j = i + 2;
      let nest = 1;
      while (j < n && nest > 0) {
        if (s[j] === '/' && s[j + 1] === '*') {
          nest++;
          j += 2;
        } else if (s[j] === '*' && s[j + 1] === '/') {
          nest--;
          j += 2;
        } else j++;
      }
      put(s.slice(i, j), i);
      i = j;
    } else if (c === "'") {
      const escapes = (s[i - 1] === 'e' || s[i - 1] === 'E') && !isIdent(s[i - 2]);
      const j = endOfQuoted(s, i, "'", escapes);
      put(s.slice(i, j), i);
      i = j;
    } else if (c === '"') {
      const j = endOfQuoted(s, i, '"', false);
      put(s.slice(i, j), i);
      i = j;
    } else if (c === '$' && !isIdent(s[i - 1])) {
      const m = /^\$([A-Za-z_\u0080-\uffff][A-Za-z0-9_\u0080-\uffff]*)?\$/.exec(s.slice(i, i + 64));
      if (m !== null) {
        const tag = m[0];
        const close = s.indexOf(tag, i + tag.length);
        const j = close < 0 ? n : close + tag.length;
        put(s.slice(i, j), i);
        i = j;
      } else {
        put(c, i);
        i++;
      }
    } else if (c === '(') {
      depth++;
      put(c, i);
      i++;
    } else if (c === ')') {
      if (depth > 0) depth--;
      put(c, i);
      i++;
    } else if (c === ';') {
      put(c, i);
      i++;
      if (depth === 0) flush();
    } else if (c === '\\') {
      if (d === ';' || d === ':') {
        if (d === ';') compound = true;
        put(d, i);
        i += 2;
        continue;
      }
      flush();
      const meta = scanMeta(s, i);
      if (meta !== undefined) out.push(meta.command);
      i = meta === undefined ? skipLine(s, i + 1) : meta.next;
    } else if (buf === '' && (isSpace(c) || c === '\n')) {
      i++;
    } else {
      put(c, i);
      i++;
    }
  }
  flush();
  return out;
}

/** Leading whitespace and `--` comments do not start a command (pgbench's skip_sql_comments). */
function skipLeadingComments(t: string): string {
  let p = 0;
  for (;;) {
    while (p < t.length && /\s/.test(t[p] as string)) p++;
    if (t.startsWith('--', p)) {
      const nl = t.indexOf('\n', p);
      if (nl < 0) return '';
      p = nl + 1;
    } else break;
  }
  return t.slice(p);
}

function endOfQuoted(s: string, start: number, q: string, escapes: boolean): number {
  let i = start + 1;
  while (i < s.length) {
    const c = s[i];
    if (escapes && c === '\\') {
      i += 2;
      continue;
    }
    if (c === q) {
      if (s[i + 1] === q) {
        i += 2;
        continue;
      }
      return i + 1;
    }
    i++;
  }
  return s.length;
}

/** The offset after the end of this (continued) line, and where the line's content ends. */
function lineEnd(s: string, from: number): { end: number; next: number } {
  let i = from;
  while (i < s.length) {
    if (s[i] === '\\' && (s[i + 1] === '\n' || (s[i + 1] === '\r' && s[i + 2] === '\n'))) {
      i += s[i + 1] === '\n' ? 2 : 3;
    } else if (s[i] === '\n') {
      return { end: i, next: i + 1 };
    } else i++;
  }
  return { end: s.length, next: s.length };
}

function skipLine(s: string, from: number): number {
  return lineEnd(s, from).next;
}

/** Words separated by blanks, up to `end`; a backslash-newline between or right after words is skipped. */
function words(
  s: string,
  from: number,
  end: number,
  max = Number.POSITIVE_INFINITY,
): { words: Word[]; next: number } {
  const out: Word[] = [];
  let i = from;
  while (i < end && out.length < max) {
    const c = s[i];
    if (isSpace(c)) {
      i++;
      continue;
    }
    if (c === '\\' && (s[i + 1] === '\n' || (s[i + 1] === '\r' && s[i + 2] === '\n'))) {
      i += s[i + 1] === '\n' ? 2 : 3;
      continue;
    }
    const at = i;
    let text = '';
    while (i < end && !isSpace(s[i]) && s[i] !== '\n') {
      if (s[i] === '\\' && (s[i + 1] === '\n' || (s[i + 1] === '\r' && s[i + 2] === '\n'))) break;
      text += s[i];
      i++;
    }
    out.push({ text, at });
  }
  return { words: out, next: i };
}

function scanMeta(s: string, backslash: number): { command: ScannedCommand; next: number } | undefined {
  const { end, next } = lineEnd(s, backslash + 1);
  const first = words(s, backslash + 1, end, 1);
  const name = first.words[0];
  if (name === undefined) return undefined;
  const lower = name.text.toLowerCase();
  if (EXPR_COMMANDS.has(lower)) {
    let ws = [name];
    let exprStart = first.next;
    if (lower === 'set') {
      const v = words(s, first.next, end, 1);
      ws = [name, ...v.words];
      exprStart = v.next;
    }
    return { command: { kind: 'meta', at: backslash, words: ws, exprStart, end }, next };
  }
  const rest = words(s, first.next, end);
  return {
    command: { kind: 'meta', at: backslash, words: [name, ...rest.words], exprStart: end, end },
    next,
  };
}
