/**
 * MySQL client/server protocol, the server's side read: packet framing over socket reads and pure decoders
 * of the packets the lean client (`mysql-lean.ts`) and the native I/O core (`native/dbsmack_io.cc`, which
 * mirrors `MysqlPacketReader` and the end-of-response rules here) need. Nothing here touches a socket;
 * every function takes bytes and returns fields, so each is unit-tested on buffers
 * (`test/mysql-wire.test.ts`).
 *
 * Packet: 3-byte little-endian payload length, 1-byte sequence id, payload. A payload of 0xFFFFFF bytes
 * continues in the next packet (a value of 16 MiB or more); the reader joins those pieces.
 */
import type { Row } from './types.ts';

/** Longest payload of one wire packet; a packet this long is continued by the next one. */
export const MAX_PAYLOAD = 0xffffff;

/** First byte of a payload that names the packet. */
export const OK_PACKET = 0x00;
export const ERR_PACKET = 0xff;
/** EOF packet; also the header of the OK packet that ends a result set under CLIENT_DEPRECATE_EOF. */
export const EOF_PACKET = 0xfe;
export const LOCAL_INFILE_REQUEST = 0xfb;
/** AuthMoreData (caching_sha2_password's fast-auth result or public key). */
export const AUTH_MORE_DATA = 0x01;
/** AuthSwitchRequest shares the EOF header during authentication. */
export const AUTH_SWITCH_REQUEST = 0xfe;

/** Status flag: another result set follows this one. */
export const SERVER_MORE_RESULTS_EXISTS = 0x8;

/**
 * Splits socket reads into packets. Reads land in `rb` (the `onread` buffer); a packet wholly inside a
 * read is handed over in place (`b[s..e)` is its payload), and only one that spans reads is copied out,
 * into a buffer of its full size. Subclasses receive whole packets, pieces of 16 MiB+ packets joined.
 */
export abstract class MysqlPacketReader {
  /** The static buffer every read lands in. */
  protected readonly rb: Buffer;
  /** A packet that spans reads: its header and payload so far (`spanningLen` bytes filled). */
  private spanning: Buffer | null = null;
  private spanningLen = 0;
  /** Payload pieces of a packet of 16 MiB or more, until its last piece arrives. */
  private big: Buffer[] | null = null;

  constructor(readBuffer: Buffer) {
    this.rb = readBuffer;
  }

  /** One whole packet: payload `b[s..e)`, sequence id `seq`. */
  protected abstract onPacket(b: Buffer, s: number, e: number, seq: number): void;

  /** `n` new bytes at the start of `rb`. */
  protected onRead(n: number): boolean {
    const b = this.rb;
    let o = 0;
    if (this.spanning !== null) {
      o = this.fillPart(b, n);
      if (this.spanning !== null) return true;
    }
    while (n - o >= 4) {
      const len = (b[o] as number) | ((b[o + 1] as number) << 8) | ((b[o + 2] as number) << 16);
      const end = o + 4 + len;
      if (end > n) break;
      this.wirePacket(b, o + 4, end, b[o + 3] as number, len);
      o = end;
    }
    if (o < n) {
      // Copy the start of a packet that continues in the next read.
      const have = n - o;
      if (have >= 4) {
        const len = (b[o] as number) | ((b[o + 1] as number) << 8) | ((b[o + 2] as number) << 16);
        this.spanning = Buffer.allocUnsafe(4 + len);
      } else this.spanning = Buffer.allocUnsafe(4);
      b.copy(this.spanning, 0, o, n);
      this.spanningLen = have;
    }
    return true;
  }

  /** Continue the packet that spans reads; returns how much of the read it used. */
  private fillPart(b: Buffer, n: number): number {
    let part = this.spanning as Buffer;
    let o = 0;
    if (this.spanningLen < 4) {
      const take = Math.min(4 - this.spanningLen, n);
      b.copy(part, this.spanningLen, 0, take);
      this.spanningLen += take;
      o = take;
      if (this.spanningLen < 4) return o;
      const len = (part[0] as number) | ((part[1] as number) << 8) | ((part[2] as number) << 16);
      const grown = Buffer.allocUnsafe(4 + len);
      part.copy(grown, 0, 0, 4);
      part = grown;
      this.spanning = grown;
    }
    const take = Math.min(part.length - this.spanningLen, n - o);
    b.copy(part, this.spanningLen, o, o + take);
    this.spanningLen += take;
    o += take;
    if (this.spanningLen === part.length) {
      this.spanning = null;
      this.wirePacket(part, 4, part.length, part[3] as number, part.length - 4);
    }
    return o;
  }

  /** One wire packet; pieces of a 16 MiB+ packet are joined first. */
  private wirePacket(b: Buffer, s: number, e: number, seq: number, len: number): void {
    if (len === MAX_PAYLOAD || this.big !== null) {
      if (this.big === null) this.big = [];
      this.big.push(Buffer.from(b.subarray(s, e)));
      if (len === MAX_PAYLOAD) return;
      const whole = Buffer.concat(this.big);
      this.big = null;
      this.onPacket(whole, 0, whole.length, seq);
      return;
    }
    this.onPacket(b, s, e, seq);
  }
}

// ---- length-encoded integers and strings -----------------------------------------------------------------

/** Where the last `readLenenc` ended: one shared cursor, so that the hot path allocates nothing. */
export const cursor = { at: 0 };

/** A length-encoded integer at `b[o]`; `cursor.at` is then the offset after it. */
export function readLenenc(b: Buffer, o: number): number {
  const h = b[o] as number;
  if (h < 0xfb) {
    cursor.at = o + 1;
    return h;
  }
  if (h === 0xfc) {
    cursor.at = o + 3;
    return (b[o + 1] as number) | ((b[o + 2] as number) << 8);
  }
  if (h === 0xfd) {
    cursor.at = o + 4;
    return (b[o + 1] as number) | ((b[o + 2] as number) << 8) | ((b[o + 3] as number) << 16);
  }
  cursor.at = o + 9;
  return b.readUInt32LE(o + 1) + b.readUInt32LE(o + 5) * 0x100000000;
}

/** The offset after the length-encoded string at `o`. */
export function skipLenencString(b: Buffer, o: number): number {
  const n = readLenenc(b, o);
  return cursor.at + n;
}

// ---- response packets -----------------------------------------------------------------------------------

/** ERR_Packet: error number, SQLSTATE (when the server sent the `#` marker) and message. */
export interface ErrFields {
  errno: number;
  sqlState: string | undefined;
  message: string;
}

export function decodeErrPacket(b: Buffer, s: number, e: number): ErrFields {
  const errno = (b[s + 1] as number) | ((b[s + 2] as number) << 8);
  let sqlState: string | undefined;
  let m = s + 3;
  if (b[m] === 0x23) {
    sqlState = b.toString('latin1', m + 1, m + 6);
    m += 6;
  }
  return { errno, sqlState, message: b.toString('utf8', m, e) };
}

/** The fields of the last OK packet decoded (one shared record: the hot path allocates nothing). */
export const okFields = { affectedRows: 0, lastInsertId: 0, status: 0 };

/** OK_Packet (header 0x00, or 0xFE ending a result set under DEPRECATE_EOF) at `s`: fills `okFields`. */
export function decodeOkPacket(b: Buffer, s: number): typeof okFields {
  okFields.affectedRows = readLenenc(b, s + 1);
  okFields.lastInsertId = readLenenc(b, cursor.at);
  const o = cursor.at;
  okFields.status = (b[o] as number) | ((b[o + 1] as number) << 8);
  return okFields;
}

/** Status flags of an EOF_Packet (header at `s`: warnings, then status). */
export function eofStatus(b: Buffer, s: number): number {
  return (b[s + 3] as number) | ((b[s + 4] as number) << 8);
}

/**
 * True when the packet at `b[s..e)` ends a result set's rows: an EOF packet, or the OK packet with the
 * 0xFE header under DEPRECATE_EOF. A row can start with 0xFE too, but only when its first value is at
 * least 2^24 bytes long, which makes the payload MAX_PAYLOAD long (then joined above it).
 */
export function isEndOfRows(b: Buffer, s: number, e: number): boolean {
  return b[s] === EOF_PACKET && e - s < MAX_PAYLOAD;
}

/** Status flags of the packet that ends a result set's rows (EOF, or OK under DEPRECATE_EOF). */
export function endOfRowsStatus(b: Buffer, s: number, deprecateEof: boolean): number {
  return deprecateEof ? decodeOkPacket(b, s).status : eofStatus(b, s);
}

/**
 * How many column definition packets follow the column count packet at `s` that opens a result set: the
 * column count, or 0 when the session has MARIADB_CLIENT_CACHE_METADATA (`cacheMetadata`) and the packet's
 * extra byte says the server left them out (a prepared statement's columns, unchanged since last sent).
 */
export function columnDefinitionsFollowing(b: Buffer, s: number, cacheMetadata: boolean): number {
  const n = readLenenc(b, s);
  return cacheMetadata && b[cursor.at] === 0 ? 0 : n;
}

/** A column's name and type from a ColumnDefinition41 packet. */
export interface ColumnDef {
  name: string;
  type: number;
}

export function decodeColumnDefinition(b: Buffer, s: number): ColumnDef {
  let o = s;
  for (let i = 0; i < 4; i++) o = skipLenencString(b, o); // catalog, schema, table, org_table
  const nameLen = readLenenc(b, o);
  const nameAt = cursor.at;
  const name = b.toString('utf8', nameAt, nameAt + nameLen);
  o = skipLenencString(b, nameAt + nameLen); // org_name
  readLenenc(b, o); // length of the fixed fields: charset (2), column length (4), type (1), ...
  return { name, type: b[cursor.at + 6] as number };
}

// Column types of the binary protocol.
export const T_TINY = 0x01;
export const T_DOUBLE = 0x05;
export const T_NULL = 0x06;
export const T_LONGLONG = 0x08;
export const T_BLOB = 0xfc;
export const T_VAR_STRING = 0xfd;
/** TINY SHORT LONG FLOAT DOUBLE LONGLONG INT24 YEAR: text rows give these as numbers. */
const NUMERIC_TYPES = new Set([0x01, 0x02, 0x03, 0x04, 0x05, 0x08, 0x09, 0x0d]);

/**
 * A text-protocol row (ProtocolText::ResultsetRow): NULL as 0xFB, other values as length-encoded
 * strings; numeric types become numbers (a BIGINT beyond 2^53 stays text).
 */
export function decodeTextRow(b: Buffer, s: number, columns: readonly ColumnDef[]): Row {
  const row: Row = {};
  let o = s;
  for (const c of columns) {
    if (b[o] === 0xfb) {
      row[c.name] = null;
      o++;
      continue;
    }
    const n = readLenenc(b, o);
    o = cursor.at;
    const text = b.toString('utf8', o, o + n);
    o += n;
    if (NUMERIC_TYPES.has(c.type)) {
      const v = Number(text);
      row[c.name] = c.type === T_LONGLONG && !Number.isSafeInteger(v) ? text : v;
    } else row[c.name] = text;
  }
  return row;
}

/** COM_STMT_PREPARE_OK: the statement id and how many columns and parameters the statement has. */
export interface PrepareOk {
  statementId: number;
  columns: number;
  params: number;
}

export function decodePrepareOk(b: Buffer, s: number): PrepareOk {
  return {
    statementId: b.readUInt32LE(s + 1),
    columns: b.readUInt16LE(s + 5),
    params: b.readUInt16LE(s + 7),
  };
}

/** Initial handshake packet (protocol version 10). */
export interface HandshakeV10 {
  serverVersion: string;
  connectionId: number;
  capabilities: number;
  /**
   * MariaDB's extended capabilities (bits 32..63), in the last 4 of the 10 reserved bytes; 0 when the
   * server sets CLIENT_MYSQL (bit 0: a MySQL server, for which those bytes mean nothing).
   */
  mariadbCapabilities: number;
  /** auth-plugin-data, parts 1 and 2 joined (the scramble before trimming). */
  authData: Buffer;
  /** Authentication plugin the server starts with (mysql_native_password when it names none). */
  plugin: string | undefined;
}

export function decodeHandshakeV10(b: Buffer, s: number, e: number): HandshakeV10 {
  let o = s + 1;
  const nul = b.indexOf(0, o);
  const serverVersion = b.toString('latin1', o, nul);
  o = nul + 1;
  const connectionId = b.readUInt32LE(o);
  o += 4;
  const auth1 = Buffer.from(b.subarray(o, o + 8));
  o += 9;
  let caps = b.readUInt16LE(o);
  o += 2;
  let authLen = 0;
  let mariadbCaps = 0;
  if (o < e) {
    // character set (1), status (2), capabilities' upper half (2), auth data length (1), 6 reserved,
    // MariaDB's extended capabilities (4)
    caps |= b.readUInt16LE(o + 3) << 16;
    authLen = b[o + 5] as number;
    // (read only from a MariaDB server: bit 0, CLIENT_MYSQL, clear)
    if ((caps & 1) === 0 && o + 16 <= e) mariadbCaps = b.readUInt32LE(o + 12);
    o += 16;
  }
  caps >>>= 0;
  let auth2 = Buffer.alloc(0);
  if ((caps & 0x8000) !== 0) {
    // CLIENT_SECURE_CONNECTION
    const n = Math.max(13, authLen - 8);
    auth2 = Buffer.from(b.subarray(o, Math.min(o + n, e)));
    o += n;
  }
  let plugin: string | undefined;
  if ((caps & 0x80000) !== 0 && o < e) {
    // CLIENT_PLUGIN_AUTH
    const end = b.indexOf(0, o);
    plugin = b.toString('latin1', o, end < 0 || end > e ? e : end);
  }
  return {
    serverVersion,
    connectionId,
    capabilities: caps,
    mariadbCapabilities: mariadbCaps,
    authData: Buffer.concat([auth1, auth2]),
    plugin,
  };
}

/** AuthSwitchRequest: the plugin to switch to and its fresh challenge (empty name: the old-password request). */
export function decodeAuthSwitchRequest(b: Buffer, s: number, e: number): { plugin: string; data: Buffer } {
  if (e - s === 1) return { plugin: 'mysql_old_password', data: Buffer.alloc(0) };
  const end = b.indexOf(0, s + 1);
  const nameEnd = end < 0 || end > e ? e : end;
  return {
    plugin: b.toString('latin1', s + 1, nameEnd),
    data: Buffer.from(b.subarray(Math.min(nameEnd + 1, e), e)),
  };
}

/** Parts of a text result while `decodeTextResponse` walks it. */
const TR_HEAD = 0;
const TR_COLUMNS = 1;
const TR_COLUMNS_EOF = 2;
const TR_ROWS = 3;

class TextResponse extends MysqlPacketReader {
  readonly rows: Row[] = [];
  private columns: ColumnDef[] = [];
  private section = TR_HEAD;
  private left = 0;
  private readonly deprecateEof: boolean;
  private readonly cacheMetadata: boolean;

  constructor(raw: Buffer, deprecateEof: boolean, cacheMetadata: boolean) {
    super(raw);
    this.deprecateEof = deprecateEof;
    this.cacheMetadata = cacheMetadata;
  }

  run(n: number): Row[] {
    this.onRead(n);
    return this.rows;
  }

  protected onPacket(b: Buffer, s: number, e: number): void {
    switch (this.section) {
      case TR_HEAD:
        if (b[s] !== OK_PACKET && b[s] !== ERR_PACKET) {
          // A text result always carries its columns; were they left out, the last ones would stand.
          this.left = columnDefinitionsFollowing(b, s, this.cacheMetadata);
          if (this.left > 0) {
            this.columns = [];
            this.section = TR_COLUMNS;
          } else this.section = this.deprecateEof ? TR_ROWS : TR_COLUMNS_EOF;
        }
        return;
      case TR_COLUMNS:
        this.columns.push(decodeColumnDefinition(b, s));
        if (--this.left === 0) this.section = this.deprecateEof ? TR_ROWS : TR_COLUMNS_EOF;
        return;
      case TR_COLUMNS_EOF:
        this.section = TR_ROWS;
        return;
      default:
        if (isEndOfRows(b, s, e)) this.section = TR_HEAD;
        else this.rows.push(decodeTextRow(b, s, this.columns));
    }
  }
}

/**
 * The rows of a whole text-protocol response, packets with their headers as they came off the wire (the
 * native I/O core hands `all()` its response so): the rows of every result set, in order. The flags are
 * the session's CLIENT_DEPRECATE_EOF and MARIADB_CLIENT_CACHE_METADATA.
 */
export function decodeTextResponse(raw: Buffer, deprecateEof: boolean, cacheMetadata: boolean): Row[] {
  return new TextResponse(raw, deprecateEof, cacheMetadata).run(raw.length);
}
