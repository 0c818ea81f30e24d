/**
 * Parameters of the lean PostgreSQL client go as text (format 0) and the server casts them to the column's
 * type. This is the text of every JavaScript value a workload may bind, other than the hot-path primitives
 * that `pg-lean.ts` writes straight into its buffer.
 */

/** The text of a value for PostgreSQL, or null for SQL NULL. */
export function paramText(v: unknown): string | null {
  if (v === null || v === undefined) return null;
  switch (typeof v) {
    case 'string':
      return v;
    case 'number':
    case 'bigint':
      return String(v);
    case 'boolean':
      return v ? 't' : 'f';
    default:
      break;
  }
  if (v instanceof Uint8Array)
    return `\\x${Buffer.from(v.buffer, v.byteOffset, v.byteLength).toString('hex')}`;
  if (v instanceof Date) return v.toISOString();
  if (Array.isArray(v)) return arrayLiteral(v);
  const json = JSON.stringify(v) as string | undefined;
  return json === undefined ? String(v) : json;
}

/** A PostgreSQL array literal: `{1,NULL,"a \"b\""}`, nested arrays as nested braces. */
function arrayLiteral(a: readonly unknown[]): string {
  let out = '{';
  for (let i = 0; i < a.length; i++) {
    if (i > 0) out += ',';
    const v = a[i];
    if (Array.isArray(v)) {
      out += arrayLiteral(v);
      continue;
    }
    const t = paramText(v);
    out += t === null ? 'NULL' : `"${t.replace(/\\/g, '\\\\').replace(/"/g, '\\"')}"`;
  }
  return `${out}}`;
}
