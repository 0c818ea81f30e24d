/**
 * MySQL client/server protocol, the client's side written: command packets, the handshake response and
 * COM_STMT_EXECUTE with binary parameters. Pure: each function returns the bytes to send (unit-tested in
 * `test/mysql-wire.test.ts`); `mysql-lean.ts` and the native I/O core send them.
 */
import { localDateTime } from './mysql-lean-text.ts';
import {
  MAX_PAYLOAD,
  T_BLOB,
  T_DOUBLE,
  T_LONGLONG,
  T_NULL,
  T_TINY,
  T_VAR_STRING,
} from './mysql-wire-decode.ts';

// Capability flags.
export const CLIENT_LONG_PASSWORD = 0x1;
export const CLIENT_FOUND_ROWS = 0x2;
export const CLIENT_LONG_FLAG = 0x4;
export const CLIENT_CONNECT_WITH_DB = 0x8;
export const CLIENT_PROTOCOL_41 = 0x200;
export const CLIENT_TRANSACTIONS = 0x2000;
export const CLIENT_SECURE_CONNECTION = 0x8000;
export const CLIENT_MULTI_RESULTS = 0x20000;
export const CLIENT_PS_MULTI_RESULTS = 0x40000;
export const CLIENT_PLUGIN_AUTH = 0x80000;
export const CLIENT_PLUGIN_AUTH_LENENC_CLIENT_DATA = 0x200000;
export const CLIENT_DEPRECATE_EOF = 0x1000000;
/**
 * Bit 0 as MariaDB reads it: set by MySQL servers and clients. A MariaDB server leaves it clear and offers
 * its extended capabilities (below) in the handshake; a client that leaves it clear may ask for them.
 */
export const CLIENT_MYSQL = CLIENT_LONG_PASSWORD;

// MariaDB's extended capability flags (bits 32..63 of the capabilities, sent as a separate 32-bit field).
/**
 * MARIADB_CLIENT_CACHE_METADATA (bit 36, MariaDB 10.6+): the server leaves a prepared statement's column
 * definitions out of its result sets while they are unchanged since it last sent them; every column count
 * packet then carries one byte more saying whether they follow. MariaDB's client library (so sysbench)
 * asks for it; a point select's answer is then 143 bytes instead of 194 (`strace`, MariaDB 10.11).
 */
export const MARIADB_CACHE_METADATA = 1 << 4;
/** The extended capabilities the lean client asks for. */
export const MARIADB_WANTED = MARIADB_CACHE_METADATA;

/** What the lean client asks for; the session gets the part the server offers too. */
export const CLIENT_WANTED =
  CLIENT_LONG_PASSWORD |
  CLIENT_FOUND_ROWS |
  CLIENT_LONG_FLAG |
  CLIENT_PROTOCOL_41 |
  CLIENT_TRANSACTIONS |
  CLIENT_SECURE_CONNECTION |
  CLIENT_MULTI_RESULTS |
  CLIENT_PS_MULTI_RESULTS |
  CLIENT_PLUGIN_AUTH |
  CLIENT_PLUGIN_AUTH_LENENC_CLIENT_DATA |
  CLIENT_DEPRECATE_EOF;

/** utf8mb4_unicode_ci, the mysql2 connector's default. */
export const CHARSET_UTF8MB4 = 224;

export const COM_QUIT = 0x01;
export const COM_QUERY = 0x03;
export const COM_STMT_PREPARE = 0x16;
export const COM_STMT_EXECUTE = 0x17;
export const COM_STMT_CLOSE = 0x19;

export function writeHeader(b: Buffer, at: number, len: number, seq: number): void {
  b[at] = len;
  b[at + 1] = len >>> 8;
  b[at + 2] = len >>> 16;
  b[at + 3] = seq;
}

/** A packet with the payload given (sequence id `seq`), split into 16 MiB - 1 pieces when it needs it. */
export function commandPacket(payload: Buffer, seq = 0): Buffer {
  if (payload.length < MAX_PAYLOAD) {
    const b = Buffer.allocUnsafe(4 + payload.length);
    writeHeader(b, 0, payload.length, seq);
    payload.copy(b, 4);
    return b;
  }
  const parts: Buffer[] = [];
  let o = 0;
  for (;;) {
    const n = Math.min(MAX_PAYLOAD, payload.length - o);
    const h = Buffer.allocUnsafe(4);
    writeHeader(h, 0, n, seq++ & 0xff);
    parts.push(h, payload.subarray(o, o + n));
    o += n;
    if (n < MAX_PAYLOAD) break;
  }
  return Buffer.concat(parts);
}

export function lenencSize(n: number): number {
  return n < 251 ? 1 : n < 0x10000 ? 3 : n < 0x1000000 ? 4 : 9;
}

/** Write `n` as a length-encoded integer at `o`; returns the offset after it. */
export function writeLenenc(b: Buffer, o: number, n: number): number {
  if (n < 251) {
    b[o] = n;
    return o + 1;
  }
  if (n < 0x10000) {
    b[o] = 0xfc;
    b[o + 1] = n;
    b[o + 2] = n >>> 8;
    return o + 3;
  }
  if (n < 0x1000000) {
    b[o] = 0xfd;
    b[o + 1] = n;
    b[o + 2] = n >>> 8;
    b[o + 3] = n >>> 16;
    return o + 4;
  }
  b[o] = 0xfe;
  b.writeUInt32LE(n >>> 0, o + 1);
  b.writeUInt32LE(Math.floor(n / 0x100000000), o + 5);
  return o + 9;
}

/** COM_QUERY or COM_STMT_PREPARE with its SQL text. */
export function textCommand(command: number, text: string): Buffer {
  const len = 1 + Buffer.byteLength(text, 'utf8');
  if (len >= MAX_PAYLOAD) {
    const payload = Buffer.allocUnsafe(len);
    payload[0] = command;
    payload.write(text, 1, 'utf8');
    return commandPacket(payload);
  }
  const b = Buffer.allocUnsafe(4 + len);
  writeHeader(b, 0, len, 0);
  b[4] = command;
  b.write(text, 5, 'utf8');
  return b;
}

export const QUIT_PACKET: Buffer = Buffer.from([1, 0, 0, 0, COM_QUIT]);

/** COM_STMT_CLOSE of a statement (the server sends no reply). */
export function stmtClosePacket(statementId: number): Buffer {
  const b = Buffer.allocUnsafe(9);
  writeHeader(b, 0, 5, 0);
  b[4] = COM_STMT_CLOSE;
  b.writeUInt32LE(statementId, 5);
  return b;
}

/** An empty packet: the end of the (empty) file after a LOCAL INFILE request. */
export function emptyPacket(seq: number): Buffer {
  const b = Buffer.allocUnsafe(4);
  writeHeader(b, 0, 0, seq & 0xff);
  return b;
}

/** HandshakeResponse41: who logs in, with which capabilities, plugin and answer to the challenge. */
export interface HandshakeResponse {
  capabilities: number;
  /** MariaDB's extended capabilities (bits 32..63); sent only with CLIENT_MYSQL clear. */
  mariadbCapabilities?: number;
  user: string;
  authResponse: Buffer;
  database: string | undefined;
  plugin: string;
  seq: number;
}

export function handshakeResponsePacket(r: HandshakeResponse): Buffer {
  const user = Buffer.from(r.user, 'utf8');
  const db = r.database ? Buffer.from(r.database, 'utf8') : undefined;
  const plugin = Buffer.from(r.plugin, 'latin1');
  const auth = r.authResponse;
  const payload = Buffer.alloc(
    32 + user.length + 1 + 9 + auth.length + (db ? db.length + 1 : 0) + plugin.length + 1,
  );
  const caps = r.capabilities;
  payload.writeUInt32LE(caps >>> 0, 0);
  payload.writeUInt32LE(0x40000000, 4); // max packet size
  payload[8] = CHARSET_UTF8MB4;
  // 19 reserved bytes, then MariaDB's extended capabilities in the last 4 of the 23 (zero for MySQL).
  if ((caps & CLIENT_MYSQL) === 0) payload.writeUInt32LE((r.mariadbCapabilities ?? 0) >>> 0, 28);
  let p = 32;
  p += user.copy(payload, p) + 1;
  if ((caps & CLIENT_PLUGIN_AUTH_LENENC_CLIENT_DATA) !== 0) p = writeLenenc(payload, p, auth.length);
  else payload[p++] = auth.length;
  p += auth.copy(payload, p);
  if (db && (caps & CLIENT_CONNECT_WITH_DB) !== 0) p += db.copy(payload, p) + 1;
  if ((caps & CLIENT_PLUGIN_AUTH) !== 0) p += plugin.copy(payload, p) + 1;
  return commandPacket(payload.subarray(0, p), r.seq & 0xff);
}

const INT64_MAX = 0x7fffffffffffffffn;

/**
 * COM_STMT_EXECUTE of one prepared statement, built straight into one buffer with binary parameters. It
 * keeps the parameter types last sent and sends them again only when they change (new-params-bound flag),
 * so it belongs to one statement on one connection. An execution encoded for a statement batch may never
 * be sent (the batch ends at its first error), so it always carries the types, and so does the execution
 * after it: the server then never runs one with types it did not get.
 */
export class ExecuteEncoder {
  readonly statementId: number;
  readonly params: number;
  /** Parameter types (type, flags) last sent to the server; all zero before the first run. */
  private readonly types: Buffer;
  /** Byte lengths of the string and byte parameters of the run being built. */
  private readonly lengths: Int32Array;
  /** The text sent for parameters that go as strings (strings, dates, objects). */
  private readonly texts: string[];
  private bound = false;
  /** The last execution encoded went into a batch: whether the server got its types is not known. */
  private unsure = false;
  /** The whole packet of a statement without parameters. */
  private readonly bare: Buffer | undefined;

  constructor(statementId: number, params: number) {
    this.statementId = statementId;
    this.params = params;
    this.types = Buffer.alloc(2 * params);
    this.lengths = new Int32Array(params);
    this.texts = new Array<string>(params).fill('');
    if (params === 0) {
      const b = Buffer.alloc(4 + 10);
      writeHeader(b, 0, 10, 0);
      b[4] = COM_STMT_EXECUTE;
      b.writeUInt32LE(statementId, 5);
      b.writeUInt32LE(1, 10);
      this.bare = b;
    }
  }

  /**
   * The packet of one execution; `params` must hold exactly `this.params` values. `batched`: for a
   * statement batch (Connection.runBatch), where it may not be sent.
   */
  encode(params: readonly unknown[] | undefined, batched = false): Buffer {
    const n = this.params;
    if (this.bare !== undefined) return this.bare;
    const ps = params as readonly unknown[];
    const types = this.types;
    const lengths = this.lengths;
    let changed = !this.bound || batched || this.unsure;
    this.unsure = batched;
    let size = 0;
    for (let i = 0; i < n; i++) {
      const v = ps[i];
      let t: number;
      let flag = 0;
      if (typeof v === 'number') {
        t = Number.isSafeInteger(v) ? T_LONGLONG : T_DOUBLE;
        size += 8;
      } else if (typeof v === 'string') {
        const len = Buffer.byteLength(v);
        lengths[i] = len;
        this.texts[i] = v;
        t = T_VAR_STRING;
        size += lenencSize(len) + len;
      } else if (v === null || v === undefined) {
        // Only the null bitmap matters; keep the type already bound.
        if (types[2 * i] !== 0) continue;
        t = T_NULL;
      } else if (typeof v === 'bigint') {
        t = T_LONGLONG;
        if (v > INT64_MAX) flag = 0x80;
        size += 8;
      } else if (typeof v === 'boolean') {
        t = T_TINY;
        size += 1;
      } else if (v instanceof Uint8Array) {
        lengths[i] = v.length;
        t = T_BLOB;
        size += lenencSize(v.length) + v.length;
      } else {
        const s = v instanceof Date ? localDateTime(v) : (JSON.stringify(v) ?? String(v));
        const len = Buffer.byteLength(s);
        lengths[i] = len;
        this.texts[i] = s;
        t = T_VAR_STRING;
        size += lenencSize(len) + len;
      }
      if (types[2 * i] !== t || types[2 * i + 1] !== flag) {
        types[2 * i] = t;
        types[2 * i + 1] = flag;
        changed = true;
      }
    }
    const nb = (n + 7) >>> 3;
    const payload = 10 + nb + 1 + (changed ? 2 * n : 0) + size;
    // Byte stores and TypedArray#set rather than Buffer#writeUInt32LE, #fill and #copy: those are Node.js's
    // JavaScript with argument checks, inlined into the statement loop each load thread optimises anew in a
    // run's first second (and writeUInt32LE's check deoptimised there: node --trace-deopt); as Bind's
    // int32At in pg-wire-encode.ts.
    const b = Buffer.allocUnsafe(4 + payload);
    writeHeader(b, 0, payload, 0);
    b[4] = COM_STMT_EXECUTE;
    const id = this.statementId;
    b[5] = id;
    b[6] = id >>> 8;
    b[7] = id >>> 16;
    b[8] = id >>> 24;
    b[9] = 0; // no cursor
    b[10] = 1; // iteration count
    b[11] = 0;
    b[12] = 0;
    b[13] = 0;
    let o = 14;
    for (let k = 0; k < nb; k++) b[o + k] = 0;
    o += nb;
    b[o++] = changed ? 1 : 0;
    if (changed) {
      b.set(types, o);
      o += 2 * n;
      this.bound = true;
    }
    for (let i = 0; i < n; i++) {
      const v = ps[i];
      if (typeof v === 'number') {
        if (Number.isSafeInteger(v)) {
          const hi = Math.floor(v / 4294967296);
          const lo = v - hi * 4294967296;
          b[o] = lo;
          b[o + 1] = lo >>> 8;
          b[o + 2] = lo >>> 16;
          b[o + 3] = lo >>> 24;
          b[o + 4] = hi;
          b[o + 5] = hi >> 8;
          b[o + 6] = hi >> 16;
          b[o + 7] = hi >> 24;
        } else b.writeDoubleLE(v, o);
        o += 8;
      } else if (v === null || v === undefined) {
        const at = 14 + (i >>> 3);
        b[at] = (b[at] as number) | (1 << (i & 7));
      } else if (typeof v === 'boolean') {
        b[o++] = v ? 1 : 0;
      } else if (typeof v === 'bigint') {
        if (v > INT64_MAX) b.writeBigUInt64LE(v, o);
        else b.writeBigInt64LE(v, o);
        o += 8;
      } else if (v instanceof Uint8Array) {
        o = writeLenenc(b, o, v.length);
        b.set(v, o);
        o += v.length;
      } else {
        const len = lengths[i] as number;
        o = writeLenenc(b, o, len);
        b.write(this.texts[i] as string, o, len, 'utf8');
        o += len;
      }
    }
    return payload < MAX_PAYLOAD ? b : commandPacket(b.subarray(4));
  }
}
