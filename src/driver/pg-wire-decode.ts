/**
 * PostgreSQL frontend/backend protocol 3.0, the server's side read: message framing over socket reads and
 * pure decoders of the backend messages the lean client (`pg-lean.ts`) and the native I/O core
 * (`native/dbsmack_io.cc`, which mirrors `PgMessageReader` and `tagCount`) need. Nothing here touches a
 * socket; every function takes bytes and returns fields (`test/pg-wire.test.ts`).
 *
 * Message: 1 type byte, a 4-byte big-endian length that counts itself and the body, then the body.
 */
import type { Row } from './types.ts';

// Backend message types.
export const AUTHENTICATION = 0x52; // R
export const PARAMETER_STATUS = 0x53; // S
export const BACKEND_KEY_DATA = 0x4b; // K
export const READY_FOR_QUERY = 0x5a; // Z
export const ROW_DESCRIPTION = 0x54; // T
export const DATA_ROW = 0x44; // D
export const COMMAND_COMPLETE = 0x43; // C
export const ERROR_RESPONSE = 0x45; // E
export const COPY_IN_RESPONSE = 0x47; // G

/**
 * Splits socket reads into messages. A message wholly inside a read is handed over in place (`b[s..e)`
 * is its body); only one that spans reads is copied, into a carry buffer grown to its size (and dropped
 * after it when it grew past 1 MiB).
 */
export abstract class PgMessageReader {
  /** A message that spans reads, gathered here (`carryLen` bytes of it so far). */
  private carry: Buffer;
  private carryLen = 0;
  private readonly readBuffer: Buffer;

  constructor(readBuffer: Buffer) {
    this.readBuffer = readBuffer;
    this.carry = readBuffer;
  }

  /** One whole backend message: its type byte and body `b[s..e)`. */
  protected abstract onMessage(type: number, b: Buffer, s: number, e: number): void;

  /** `n` new bytes at the start of `buf`. */
  protected onRead(n: number, buf: Buffer): boolean {
    let off = 0;
    if (this.carryLen > 0) {
      off = this.fillCarry(buf, n);
      if (off < 0) return true;
    }
    while (n - off >= 5) {
      const len =
        (((buf[off + 1] as number) << 24) |
          ((buf[off + 2] as number) << 16) |
          ((buf[off + 3] as number) << 8) |
          (buf[off + 4] as number)) >>>
        0;
      const end = off + 1 + len;
      if (end > n) break;
      this.onMessage(buf[off] as number, buf, off + 5, end);
      off = end;
    }
    if (off < n) {
      const rest = n - off;
      if (this.carry === this.readBuffer || this.carry.length < Math.max(rest, 5)) {
        this.carry = Buffer.allocUnsafe(Math.max(8192, rest));
      }
      buf.copy(this.carry, 0, off, n);
      this.carryLen = rest;
    }
    return true;
  }

  /** Complete the message begun in an earlier read; returns the offset in `buf` after it, or -1 if still short. */
  private fillCarry(buf: Buffer, n: number): number {
    let off = 0;
    let carry = this.carry;
    if (this.carryLen < 5) {
      const take = Math.min(5 - this.carryLen, n);
      buf.copy(carry, this.carryLen, 0, take);
      this.carryLen += take;
      off = take;
      if (this.carryLen < 5) return -1;
    }
    const total = 1 + carry.readUInt32BE(1);
    if (carry.length < total) {
      const bigger = Buffer.allocUnsafe(total);
      carry.copy(bigger, 0, 0, this.carryLen);
      this.carry = carry = bigger;
    }
    const take = Math.min(total - this.carryLen, n - off);
    buf.copy(carry, this.carryLen, off, off + take);
    this.carryLen += take;
    off += take;
    if (this.carryLen < total) return -1;
    this.carryLen = 0;
    this.onMessage(carry[0] as number, carry, 5, total);
    // Do not keep a buffer grown for one huge value.
    if (carry.length > 1024 * 1024) this.carry = this.readBuffer;
    return off;
  }
}

/**
 * Rows of a CommandComplete tag (`b[s..e)`, without its NUL): for SELECT, SHOW, FETCH (and SET, START…,
 * which return none) the DataRows counted, `rows`; for INSERT/UPDATE/DELETE/MERGE/COPY… the tag's last number.
 */
export function tagCount(b: Buffer, s: number, e: number, rows: number): number {
  const first = b[s];
  if (first === 0x53 || first === 0x46) return rows;
  let n = 0;
  let mul = 1;
  for (let p = e - 1; p >= s; p--) {
    const c = b[p] as number;
    if (c < 48 || c > 57) break;
    n += (c - 48) * mul;
    mul *= 10;
  }
  return n;
}

/** The column names of a RowDescription. */
export function decodeRowDescription(b: Buffer, s: number): string[] {
  const n = b.readUInt16BE(s);
  const names: string[] = [];
  let p = s + 2;
  for (let i = 0; i < n; i++) {
    const z = b.indexOf(0, p);
    names.push(b.toString('utf8', p, z));
    p = z + 1 + 18;
  }
  return names;
}

/** A DataRow as text values by column name (NULL as null). */
export function decodeDataRow(b: Buffer, s: number, names: readonly string[]): Row {
  const row: Row = {};
  const n = b.readUInt16BE(s);
  let p = s + 2;
  for (let i = 0; i < n; i++) {
    const len = b.readInt32BE(p);
    p += 4;
    const name = names[i] ?? `?column?${i}`;
    if (len < 0) row[name] = null;
    else {
      row[name] = b.toString('utf8', p, p + len);
      p += len;
    }
  }
  return row;
}

/** The fields of an ErrorResponse that dbsmack keeps. */
export interface ServerError {
  code: string;
  message: string;
  severity: string;
}

export function decodeErrorResponse(b: Buffer, s: number, e: number): ServerError {
  const err: ServerError = { code: 'PG_ERROR', message: 'unknown server error', severity: 'ERROR' };
  let p = s;
  while (p < e && b[p] !== 0) {
    const field = b[p] as number;
    const z = b.indexOf(0, p + 1);
    const value = b.toString('utf8', p + 1, z);
    if (field === 0x43)
      err.code = value; // C
    else if (field === 0x4d)
      err.message = value; // M
    else if (field === 0x53 || field === 0x56) err.severity = value; // S, then V (not localised)
    p = z + 1;
  }
  return err;
}

/** ParameterStatus: name and value. */
export function decodeParameterStatus(b: Buffer, s: number, e: number): { name: string; value: string } {
  const z = b.indexOf(0, s);
  return { name: b.toString('utf8', s, z), value: b.toString('utf8', z + 1, e - 1) };
}

/** BackendKeyData: the backend's process id (and the cancel key, unused). */
export function decodeBackendKeyData(b: Buffer, s: number): { processId: number; secretKey: number } {
  return { processId: b.readInt32BE(s), secretKey: b.readInt32BE(s + 4) };
}

class RowsResponse extends PgMessageReader {
  readonly rows: Row[] = [];
  private names: string[] = [];
  private readonly raw: Buffer;

  constructor(raw: Buffer) {
    super(raw);
    this.raw = raw;
  }

  run(): Row[] {
    this.onRead(this.raw.length, this.raw);
    return this.rows;
  }

  protected onMessage(type: number, b: Buffer, s: number): void {
    if (type === ROW_DESCRIPTION) this.names = decodeRowDescription(b, s);
    else if (type === DATA_ROW) this.rows.push(decodeDataRow(b, s, this.names));
  }
}

/**
 * The rows of a whole response, messages as they came off the wire up to ReadyForQuery (the native I/O
 * core hands `all()` its response so), values as text by column name.
 */
export function decodeRowsResponse(raw: Buffer): Row[] {
  return new RowsResponse(raw).run();
}
