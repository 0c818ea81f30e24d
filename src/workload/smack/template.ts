/**
 * `$name` substitution in `parsed` queries, compiled once per query. Fixed from the original: a `$name`
 * at the end of the query is substituted, `$a$b` substitutes both, and a backslash no longer turns off
 * every later substitution (`\$` writes a literal `$`; any other backslash is kept as written).
 */
import type { QuoteContext } from './escape.ts';

export type TemplatePart = { text: string } | { dict: string; quote: QuoteContext; offset: number };

export function compileTemplate(sql: string): TemplatePart[] {
  const parts: TemplatePart[] = [];
  let text = '';
  let quote: QuoteContext = '';
  for (let i = 0; i < sql.length; i++) {
    const c = sql[i] as string;
    if (c === '\\' && sql[i + 1] === '$') {
      text += '$';
      i++;
      continue;
    }
    if (c === '$' && /[A-Za-z0-9_]/.test(sql[i + 1] ?? '')) {
      let j = i + 1;
      while (j < sql.length && /[A-Za-z0-9_]/.test(sql[j] as string)) j++;
      if (text) parts.push({ text });
      text = '';
      parts.push({ dict: sql.slice(i + 1, j), quote, offset: i });
      i = j - 1;
      continue;
    }
    text += c;
    // Track which quote the next $name stands in; a doubled quote closes and reopens, which comes out right.
    if (quote === '') {
      if (c === "'" || c === '"' || c === '`') quote = c;
    } else if (c === '\\' && quote !== '`') {
      text += sql[i + 1] ?? '';
      i++;
    } else if (c === quote) {
      quote = '';
    }
  }
  if (text) parts.push({ text });
  return parts;
}
