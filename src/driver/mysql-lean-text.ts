/**
 * Client-side parameter binding of the lean MySQL/MariaDB client's text protocol (`query`, `all`): every
 * `?` outside string literals, quoted identifiers and comments becomes an escaped SQL literal, with the
 * same literal forms the mysql2 connector produces (quoted strings with backslash escapes, bare numbers,
 * true/false, NULL, X'..' for bytes, quoted local date-times, comma lists for arrays).
 */

const ESCAPES: Record<string, string> = {
  '\0': '\\0',
  '\b': '\\b',
  '\t': '\\t',
  '\n': '\\n',
  '\r': '\\r',
  '\x1a': '\\Z',
  '"': '\\"',
  "'": "\\'",
  '\\': '\\\\',
};
// biome-ignore lint/suspicious/noControlCharactersInRegex: NUL and ^Z are among the characters MySQL needs escaped
const NEEDS_ESCAPE = /[\0\b\t\n\r\x1a"'\\]/g;

/** A string as a single-quoted MySQL literal (backslash escapes, as with the default sql_mode). */
export function quoteString(s: string): string {
  NEEDS_ESCAPE.lastIndex = 0;
  if (!NEEDS_ESCAPE.test(s)) return `'${s}'`;
  return `'${s.replace(NEEDS_ESCAPE, (c) => ESCAPES[c] as string)}'`;
}

function pad(n: number, width = 2): string {
  return String(n).padStart(width, '0');
}

/** A Date as `YYYY-MM-DD HH:MM:SS.mmm` in local time (mysql2's default `timezone: 'local'`). */
export function localDateTime(d: Date): string {
  return (
    `${pad(d.getFullYear(), 4)}-${pad(d.getMonth() + 1)}-${pad(d.getDate())} ` +
    `${pad(d.getHours())}:${pad(d.getMinutes())}:${pad(d.getSeconds())}.${pad(d.getMilliseconds(), 3)}`
  );
}

/** One value as a SQL literal. */
export function literal(v: unknown): string {
  if (v === null || v === undefined) return 'NULL';
  switch (typeof v) {
    case 'number':
      return Number.isFinite(v) ? String(v) : 'NULL';
    case 'bigint':
      return v.toString();
    case 'boolean':
      return v ? 'true' : 'false';
    case 'string':
      return quoteString(v);
  }
  if (v instanceof Date) return Number.isNaN(v.getTime()) ? 'NULL' : `'${localDateTime(v)}'`;
  if (Buffer.isBuffer(v) || v instanceof Uint8Array) return `X'${Buffer.from(v).toString('hex')}'`;
  if (Array.isArray(v)) return v.map((x) => (Array.isArray(x) ? `(${literal(x)})` : literal(x))).join(', ');
  return quoteString(JSON.stringify(v) ?? String(v));
}

/** `sql` with each `?` placeholder (outside literals, quoted identifiers and comments) bound to `params`. */
export function interpolate(sql: string, params: readonly unknown[]): string {
  if (params.length === 0) return sql;
  let out = '';
  let from = 0;
  let k = 0;
  let i = 0;
  const n = sql.length;
  while (i < n) {
    const c = sql.charCodeAt(i);
    if (c === 39 || c === 34 || c === 96) {
      // ' " `: skip to the closing quote (doubled quotes and backslash escapes stay inside).
      i++;
      while (i < n) {
        const d = sql.charCodeAt(i);
        if (d === 92 && c !== 96) i += 2;
        else if (d === c) {
          if (sql.charCodeAt(i + 1) === c) i += 2;
          else break;
        } else i++;
      }
      i++;
    } else if ((c === 45 && sql.charCodeAt(i + 1) === 45 && sql.charCodeAt(i + 2) <= 32) || c === 35) {
      const nl = sql.indexOf('\n', i);
      i = nl < 0 ? n : nl;
    } else if (c === 47 && sql.charCodeAt(i + 1) === 42) {
      const close = sql.indexOf('*/', i + 2);
      i = close < 0 ? n : close + 2;
    } else if (c === 63) {
      if (k >= params.length) break;
      out += sql.slice(from, i) + literal(params[k++]);
      from = ++i;
    } else i++;
  }
  return out + sql.slice(from);
}
