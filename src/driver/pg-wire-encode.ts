/**
 * PostgreSQL frontend/backend protocol 3.0, the client's side written: the startup message, Parse, Bind
 * (text parameters written straight into a shared scratch buffer), Execute, Sync, Query, Close, password
 * messages, and the text of every JavaScript value a workload may bind. Pure: each function returns the
 * bytes to send (`test/pg-wire.test.ts`); `pg-lean.ts` and the native I/O core send them.
 */

/** A message: type byte, length, then the parts (a string part is written with its NUL). */
export function frame(type: string, ...parts: (Buffer | string)[]): Buffer {
  const body = Buffer.concat(parts.map((p) => (typeof p === 'string' ? Buffer.from(`${p}\0`, 'utf8') : p)));
  const b = Buffer.allocUnsafe(5 + body.length);
  b[0] = type.charCodeAt(0);
  b.writeInt32BE(4 + body.length, 1);
  body.copy(b, 5);
  return b;
}
export const int16 = (n: number): Buffer => {
  const b = Buffer.alloc(2);
  b.writeInt16BE(n);
  return b;
};
export const int32 = (n: number): Buffer => {
  const b = Buffer.alloc(4);
  b.writeInt32BE(n);
  return b;
};

/** Execute the unnamed portal (all rows), then Sync. */
export const EXEC_SYNC: Buffer = Buffer.concat([frame('E', '', int32(0)), frame('S')]);
/**
 * Describe the unnamed portal, Execute, Sync: what follows every Bind dbsmack sends. libpq sends a Describe
 * of the portal with every execution (PQsendQueryGuts: Bind, Describe, Execute, Sync), so pgbench and
 * sysbench's pgsql driver make the server describe every statement's result (a RowDescription, or NoData),
 * and dbsmack does too: the same messages, the same work for the server per statement. Without it the
 * server did less for dbsmack than for its peers (a point select's answer: 37 bytes against pgbench's 71).
 */
export const DESCRIBE_EXEC_SYNC: Buffer = Buffer.concat([
  frame('D', Buffer.from('P\0', 'latin1')),
  EXEC_SYNC,
]);
export const SYNC: Buffer = frame('S');
export const TERMINATE: Buffer = frame('X');
export const Q_BEGIN: Buffer = frame('Q', 'BEGIN');
export const Q_COMMIT: Buffer = frame('Q', 'COMMIT');
export const Q_ROLLBACK: Buffer = frame('Q', 'ROLLBACK');
/** Bind header of the unnamed portal and unnamed statement, all parameters as text. */
export const UNNAMED_BIND_HEAD: Buffer = Buffer.from([0, 0, 0, 0]);

/** StartupMessage of protocol 3.0 with its parameters. */
export function startupMessage(params: readonly (readonly [string, string])[]): Buffer {
  const body = Buffer.concat([
    int32(196608),
    ...params.map(([k, v]) => Buffer.from(`${k}\0${v}\0`, 'utf8')),
    Buffer.from([0]),
  ]);
  return Buffer.concat([int32(4 + body.length), body]);
}

/**
 * The parameter types a statement may declare (`StatementOptions.paramTypes`) and their OIDs: the one list
 * of them (the workload's `ParamType` and `PARAM_TYPES` are its keys), in the order errors list them.
 */
export const PARAM_TYPE_OIDS = {
  int2: 21,
  int4: 23,
  int8: 20,
  float4: 700,
  float8: 701,
  numeric: 1700,
  bool: 16,
  text: 25,
  varchar: 1043,
  bpchar: 1042,
  bytea: 17,
  date: 1082,
  timestamp: 1114,
  timestamptz: 1184,
  json: 114,
  jsonb: 3802,
  uuid: 2950,
} as const;

/**
 * Parse of a statement (`name` '' for the unnamed one), then nothing else: with the OIDs of `types` as its
 * parameters' types (none given: the server infers them), as libpq's PQprepare sends them.
 */
export function parseMessage(name: string, sql: string, types: readonly string[] = []): Buffer {
  const oids = Buffer.alloc(2 + 4 * types.length);
  oids.writeInt16BE(types.length, 0);
  types.forEach((t, i) => {
    const oid = (PARAM_TYPE_OIDS as Readonly<Record<string, number>>)[t];
    if (oid === undefined) throw new Error(`unknown parameter type ${t}`);
    oids.writeInt32BE(oid, 2 + 4 * i);
  });
  return frame('P', name, sql, oids);
}

/** Close of a named statement, then Sync. */
export function closeStatementSync(name: string): Buffer {
  return Buffer.concat([frame('C', Buffer.from(`S${name}\0`, 'utf8')), SYNC]);
}

/** Bind's fixed start for a named statement: unnamed portal, the statement's name, no parameter formats. */
export function bindHead(statement: string): Buffer {
  return Buffer.from(`\0${statement}\0\0\0`, 'utf8');
}

// ---- the shared write buffer --------------------------------------------------------------------------------

/**
 * Scratch buffer for outgoing statements, shared by every connection of the thread. The caller that hands
 * its bytes to a socket which keeps a reference (a write the kernel did not take at once) calls
 * `releaseWriteBuffer()`, and the next statement gets a fresh buffer.
 */
let wbuf = Buffer.allocUnsafe(16 * 1024);

export function releaseWriteBuffer(): void {
  wbuf = Buffer.allocUnsafe(wbuf.length);
}

const utf8Write = (Buffer.prototype as unknown as { utf8Write?: unknown }).utf8Write as
  | ((this: Buffer, s: string, offset: number, length: number) => number)
  | undefined;
const writeUtf8: (b: Buffer, s: string, off: number) => number =
  utf8Write !== undefined
    ? (b, s, off) => utf8Write.call(b, s, off, b.length - off)
    : (b, s, off) => b.write(s, off, 'utf8');

/** Converted values of the statement being written (parameters that are not plain primitives). */
const converted: (string | null)[] = [];

/**
 * A big-endian 32-bit integer at `at`, byte by byte. Why not `Buffer#writeInt32BE` (nor `Buffer#copy` for
 * the fixed parts below, which `TypedArray#set` replaces): Bind is written once a statement, and each load
 * thread's V8 optimises it anew in a run's first second; Node.js's versions are JavaScript that checks its
 * arguments (copy makes a view of the source too), and inlined they made bindMessage's optimised code a third
 * larger to compile (43 ms against 29 of TurboFan's time for the whole chain, node --trace-opt) and 30-80 ns
 * slower a call (147-212 against 180-300 ns, a million calls, three pairs in turn).
 */
function int32At(b: Buffer, at: number, v: number): void {
  b[at] = v >>> 24;
  b[at + 1] = (v >>> 16) & 0xff;
  b[at + 2] = (v >>> 8) & 0xff;
  b[at + 3] = v & 0xff;
}

/** Write a safe integer's decimal digits at `off`; returns the new offset. */
export function writeInteger(b: Buffer, off: number, v: number): number {
  let o = off;
  if (v < 0) {
    b[o++] = 45;
    v = -v;
  }
  let digits = 1;
  for (let t = v; t >= 10; t = Math.floor(t / 10)) digits++;
  let p = o + digits;
  const end = p;
  do {
    b[--p] = 48 + (v % 10);
    v = Math.floor(v / 10);
  } while (v > 0);
  return end;
}

/**
 * `prefix` (a Parse, or nothing), a Bind of the statement named in `head` with `params` as text, then
 * `tail` (Execute + Sync), as one buffer: a view of the shared write buffer, valid until the next call.
 */
export function bindMessage(
  prefix: Buffer | null,
  head: Buffer,
  params: readonly unknown[] | undefined,
  tail: Buffer,
): Buffer {
  const n = params === undefined ? 0 : params.length;
  let size = (prefix === null ? 0 : prefix.length) + 5 + head.length + 2 + 2 + tail.length;
  for (let i = 0; i < n; i++) {
    const v = (params as readonly unknown[])[i];
    size += 4;
    if (typeof v === 'string') size += v.length * 3;
    else if (typeof v === 'number' || typeof v === 'boolean' || v === null || v === undefined) size += 24;
    else {
      const t = paramText(v);
      converted[i] = t;
      if (t !== null) size += t.length * 3;
    }
  }
  if (wbuf.length < size) wbuf = Buffer.allocUnsafe(Math.max(size, wbuf.length * 2));
  const b = wbuf;
  let o = 0;
  if (prefix !== null) {
    b.set(prefix, 0);
    o = prefix.length;
  }
  const start = o;
  b[o] = 0x42; // B
  o += 5;
  b.set(head, o);
  o += head.length;
  b[o++] = n >> 8;
  b[o++] = n & 0xff;
  for (let i = 0; i < n; i++) {
    const v = (params as readonly unknown[])[i];
    const lenAt = o;
    o += 4;
    if (typeof v === 'string') o += writeUtf8(b, v, o);
    else if (typeof v === 'number') {
      if (Number.isSafeInteger(v)) o = writeInteger(b, o, v);
      else o += b.write(String(v), o, 'latin1');
    } else if (typeof v === 'boolean') b[o++] = v ? 0x74 : 0x66;
    else if (v === null || v === undefined) {
      int32At(b, lenAt, -1);
      continue;
    } else {
      const t = converted[i] as string | null;
      converted[i] = null;
      if (t === null) {
        int32At(b, lenAt, -1);
        continue;
      }
      o += writeUtf8(b, t, o);
    }
    int32At(b, lenAt, o - lenAt - 4);
  }
  b[o++] = 0; // result formats: all text
  b[o++] = 0;
  int32At(b, start + 1, o - start - 1);
  b.set(tail, o);
  o += tail.length;
  return b.subarray(0, o);
}

/** A simple-protocol Query, in the shared write buffer (valid until the next call). */
export function queryMessage(sql: string): Buffer {
  const size = 6 + sql.length * 3;
  if (wbuf.length < size) wbuf = Buffer.allocUnsafe(Math.max(size, wbuf.length * 2));
  const b = wbuf;
  b[0] = 0x51; // Q
  let o = 5 + writeUtf8(b, sql, 5);
  b[o++] = 0;
  int32At(b, 1, o - 1);
  return b.subarray(0, o);
}

// ---- parameter text -------------------------------------------------------------------------------------------

/**
 * The text of a value for PostgreSQL, or null for SQL NULL. Parameters go as text (format 0) and the server
 * casts them to the column's type.
 */
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
