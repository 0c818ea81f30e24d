/**
 * Workloads write `?` placeholders, as sysbench and the MySQL protocol do. PostgreSQL wants `$1, $2 …`.
 * Rewrite the `?` that stand outside string literals, quoted identifiers and comments.
 */
const cache = new Map<string, string>();

export function questionToDollar(sql: string): string {
  const hit = cache.get(sql);
  if (hit !== undefined) return hit;
  let out = '';
  let n = 0;
  let i = 0;
  while (i < sql.length) {
    const c = sql[i] as string;
    if (c === "'" || c === '"' || c === '`') {
      const end = skipQuoted(sql, i, c);
      out += sql.slice(i, end);
      i = end;
    } else if (c === '-' && sql[i + 1] === '-') {
      const nl = sql.indexOf('\n', i);
      const end = nl < 0 ? sql.length : nl;
      out += sql.slice(i, end);
      i = end;
    } else if (c === '/' && sql[i + 1] === '*') {
      const close = sql.indexOf('*/', i + 2);
      const end = close < 0 ? sql.length : close + 2;
      out += sql.slice(i, end);
      i = end;
    } else if (c === '?') {
      n++;
      out += `$${n}`;
      i++;
    } else {
      out += c;
      i++;
    }
  }
  if (cache.size > 10000) cache.clear();
  cache.set(sql, out);
  return out;
}

function skipQuoted(sql: string, start: number, q: string): number {
  let i = start + 1;
  while (i < sql.length) {
    if (sql[i] === q) {
      if (sql[i + 1] === q) {
        i += 2;
        continue;
      }
      return i + 1;
    }
    if (sql[i] === '\\' && q === "'") {
      i += 2;
      continue;
    }
    i++;
  }
  return sql.length;
}
