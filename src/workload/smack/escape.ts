/**
 * Escaping of dictionary words substituted into `parsed` queries. The original escaped with a backslash
 * before quotes, which is wrong for PostgreSQL and SQLite (there a quote is doubled and a backslash is an
 * ordinary character). Here the escaping depends on the back-end and on the quote the `$name` stands in.
 */
import type { DriverName } from '../../driver/types.ts';

/** The quote character around a `$name` in the query text, or '' when it stands bare. */
export type QuoteContext = "'" | '"' | '`' | '';

/** Escape `word` for use inside `quote` (or bare) in SQL for `driver`. */
export function escapeWord(word: string, quote: QuoteContext, driver: DriverName): string {
  if (quote === '') {
    // A bare value is meant as a number or a name; anything else becomes a string literal so that it cannot
    // inject SQL.
    if (/^[A-Za-z0-9_.+-]*$/.test(word) && word !== '') return word;
    return `'${escapeWord(word, "'", driver)}'`;
  }
  if (driver === 'mysql') {
    // MySQL reads backslash escapes inside both kinds of string literal (and `\` is literal in backticks).
    if (quote === '`') return word.replace(/`/g, '``');
    let out = '';
    for (const c of word) out += MYSQL_ESC[c] ?? c;
    return out;
  }
  return word
    .replace(/\0/g, '')
    .split(quote)
    .join(quote + quote);
}

const MYSQL_ESC: Record<string, string> = {
  '\0': '\\0',
  '\n': '\\n',
  '\r': '\\r',
  '\\': '\\\\',
  "'": "\\'",
  '"': '\\"',
  '\x1a': '\\Z',
};
