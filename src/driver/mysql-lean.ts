/**
 * dbsmack's own MySQL/MariaDB wire-protocol client (`?connector=dbsmack`), written from the protocol
 * documentation for the load clients, whose client CPU per statement is part of what a benchmark measures.
 *
 * Design, for the hot path (a prepared statement re-executed thousands of times a second):
 * - One socket write per statement: COM_STMT_EXECUTE is built straight into one buffer with binary
 *   parameters; their types are sent again only when they change (new-params-bound flag).
 * - Reads land in one static buffer per connection (`net.connect({ onread })`, no 'data' events); packets
 *   are parsed in place and only a packet that spans reads is copied out (into a buffer of its full size).
 * - A result is counted, not decoded: column definitions are skipped and rows counted; an OK packet gives
 *   the affected rows (CLIENT_FOUND_ROWS: matched rows, as with the mysql2 connector).
 * - Requests run one at a time in FIFO order; the state of the one in flight lives in fields of the
 *   connection (no per-request objects or closures unless a request has to wait in the queue).
 * Only `all()` (set-up, probes) decodes rows: text protocol, numbers for the integer and float types.
 * Not supported: TLS, compression, LOCAL INFILE (refused with an empty file), plugins other than
 * mysql_native_password and caching_sha2_password (the library connectors handle those).
 */
import net from 'node:net';
import { DbError } from './errors.ts';
import { classifyMysql, formatMysqlVersion } from './mysql-classify.ts';
import {
  authResponse,
  CACHING_SHA2,
  NATIVE_PASSWORD,
  rsaEncryptedPassword,
  scrambleOf,
} from './mysql-lean-auth.ts';
import { interpolate, localDateTime } from './mysql-lean-text.ts';
import { StatementTransactions } from './statement-transactions.ts';
import type { Connection, ConnectOptions, PreparedStatement, Row, Target } from './types.ts';

// Capability flags.
const CLIENT_LONG_PASSWORD = 0x1;
const CLIENT_FOUND_ROWS = 0x2;
const CLIENT_LONG_FLAG = 0x4;
const CLIENT_CONNECT_WITH_DB = 0x8;
const CLIENT_PROTOCOL_41 = 0x200;
const CLIENT_TRANSACTIONS = 0x2000;
const CLIENT_SECURE_CONNECTION = 0x8000;
const CLIENT_MULTI_RESULTS = 0x20000;
const CLIENT_PS_MULTI_RESULTS = 0x40000;
const CLIENT_PLUGIN_AUTH = 0x80000;
const CLIENT_PLUGIN_AUTH_LENENC_CLIENT_DATA = 0x200000;
const CLIENT_DEPRECATE_EOF = 0x1000000;

const SERVER_MORE_RESULTS_EXISTS = 0x8;
/** utf8mb4_unicode_ci, the mysql2 connector's default. */
const CHARSET_UTF8MB4 = 224;
const MAX_PAYLOAD = 0xffffff;

const COM_QUIT = 0x01;
const COM_QUERY = 0x03;
const COM_STMT_PREPARE = 0x16;
const COM_STMT_EXECUTE = 0x17;
const COM_STMT_CLOSE = 0x19;

// Binary protocol column types used for parameters and for `all()` conversions.
const T_TINY = 0x01;
const T_DOUBLE = 0x05;
const T_NULL = 0x06;
const T_LONGLONG = 0x08;
const T_BLOB = 0xfc;
const T_VAR_STRING = 0xfd;
/** TINY SHORT LONG FLOAT DOUBLE LONGLONG INT24 YEAR: `all()` returns these as numbers. */
const NUMERIC_TYPES = new Set([0x01, 0x02, 0x03, 0x04, 0x05, 0x08, 0x09, 0x0d]);

// What the connection is waiting for.
const IDLE = 0;
const HANDSHAKE = 1;
const AUTH = 2;
/** A statement's result: resolves to rows of the result set(s) or affected rows. */
const COUNT = 3;
/** A text query whose rows `all()` decodes. */
const ROWS = 4;
const PREPARE = 5;
/** A command without a reply (COM_STMT_CLOSE, COM_QUIT). */
const NO_REPLY = 6;

type Settle = (v: unknown) => void;

interface Waiting {
  packet: Buffer;
  mode: number;
  resolve: Settle;
  reject: Settle;
}

interface Column {
  name: string;
  type: number;
}

const noop: Settle = () => {};

/** Connect, authenticate and return a ready connection; failures are classified DbErrors. */
export function connectMysqlLean(target: Target, options: ConnectOptions): Promise<Connection> {
  return new Promise((resolve, reject) => {
    new LeanMysqlConnection(target, options, resolve as Settle, reject);
  });
}

/** A command packet (sequence id 0), split into 16 MiB - 1 pieces when the payload needs it. */
function commandPacket(payload: Buffer, seq = 0): Buffer {
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

function writeHeader(b: Buffer, at: number, len: number, seq: number): void {
  b[at] = len;
  b[at + 1] = len >>> 8;
  b[at + 2] = len >>> 16;
  b[at + 3] = seq;
}

function lenencSize(n: number): number {
  return n < 251 ? 1 : n < 0x10000 ? 3 : n < 0x1000000 ? 4 : 9;
}

function writeLenenc(b: Buffer, o: number, n: number): number {
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

function textCommand(command: number, text: string): Buffer {
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

function netError(e: Error & { code?: unknown }): DbError {
  const code = typeof e.code === 'string' ? e.code : 'PROTOCOL_CONNECTION_LOST';
  return new DbError('reconnect', code, e.message);
}

class LeanMysqlConnection extends StatementTransactions implements Connection {
  readonly driver = 'mysql' as const;
  serverVersion = 'MySQL';
  sessionId = 0;

  private readonly socket: net.Socket;
  private readonly target: Target;
  /** The static read buffer every read lands in. */
  private readonly rb = Buffer.allocUnsafe(64 * 1024);
  /** A packet that spans reads: its header and payload so far (`partLen` bytes filled). */
  private part: Buffer | null = null;
  private partLen = 0;
  /** Payload pieces of a packet of 16 MiB or more, until its last piece arrives. */
  private big: Buffer[] | null = null;

  private mode = HANDSHAKE;
  private resolveFn: Settle;
  private rejectFn: Settle;
  private readonly queue: Waiting[] = [];
  /** Set once the connection is unusable: every later request rejects with it. */
  private dead: DbError | null = null;
  private timer: NodeJS.Timeout | undefined;

  // The result being read.
  private phase = 0;
  private left = 0;
  private rows = 0;
  private affected = 0;
  private sawResultSet = false;
  private columns: Column[] = [];
  private out: Row[] = [];
  /** Offset after the last length-encoded integer read. */
  private lo = 0;

  // Handshake and authentication.
  private deprecateEof = false;
  private plugin = NATIVE_PASSWORD;
  private scramble: Buffer = Buffer.alloc(0);
  private awaitingKey = false;

  // Statement ids and parameter counts of the prepare in flight.
  private stmtId = 0;
  private stmtParams = 0;

  // `new Promise(this.capture)` hands over resolve/reject without a closure per request.
  private capRes: Settle = noop;
  private capRej: Settle = noop;
  private readonly capture = (res: Settle, rej: Settle): void => {
    this.capRes = res;
    this.capRej = rej;
  };

  constructor(target: Target, options: ConnectOptions, resolve: Settle, reject: Settle) {
    super();
    this.target = target;
    this.resolveFn = resolve;
    this.rejectFn = reject;
    const onread = { buffer: this.rb, callback: (n: number): boolean => this.onRead(n) };
    this.socket =
      target.socket !== undefined
        ? net.connect({ path: target.socket, onread })
        : net.connect({ host: target.host ?? 'localhost', port: target.port ?? 3306, onread });
    if (target.socket === undefined) this.socket.setNoDelay(true);
    this.socket.on('error', (e) => this.fail(netError(e)));
    this.socket.on('close', () =>
      this.fail(new DbError('reconnect', 'PROTOCOL_CONNECTION_LOST', 'connection to the server was lost')),
    );
    this.timer = setTimeout(() => {
      this.fail(
        new DbError('reconnect', 'ETIMEDOUT', `connect timed out after ${options.connectTimeoutMs} ms`),
      );
    }, options.connectTimeoutMs);
  }

  // ---- reading -------------------------------------------------------------------------------------

  private onRead(n: number): boolean {
    const b = this.rb;
    let o = 0;
    if (this.part !== null) {
      o = this.fillPart(b, n);
      if (this.part !== null) return true;
    }
    while (n - o >= 4) {
      const len = (b[o] as number) | ((b[o + 1] as number) << 8) | ((b[o + 2] as number) << 16);
      const end = o + 4 + len;
      if (end > n) break;
      this.dispatch(b, o + 4, end, b[o + 3] as number, len);
      o = end;
    }
    if (o < n) {
      // Copy the start of a packet that continues in the next read.
      const have = n - o;
      if (have >= 4) {
        const len = (b[o] as number) | ((b[o + 1] as number) << 8) | ((b[o + 2] as number) << 16);
        this.part = Buffer.allocUnsafe(4 + len);
      } else this.part = Buffer.allocUnsafe(4);
      b.copy(this.part, 0, o, n);
      this.partLen = have;
    }
    return true;
  }

  /** Continue the packet that spans reads; returns how much of the read it used. */
  private fillPart(b: Buffer, n: number): number {
    let part = this.part as Buffer;
    let o = 0;
    if (this.partLen < 4) {
      const take = Math.min(4 - this.partLen, n);
      b.copy(part, this.partLen, 0, take);
      this.partLen += take;
      o = take;
      if (this.partLen < 4) return o;
      const len = (part[0] as number) | ((part[1] as number) << 8) | ((part[2] as number) << 16);
      const grown = Buffer.allocUnsafe(4 + len);
      part.copy(grown, 0, 0, 4);
      part = grown;
      this.part = grown;
    }
    const take = Math.min(part.length - this.partLen, n - o);
    b.copy(part, this.partLen, o, o + take);
    this.partLen += take;
    o += take;
    if (this.partLen === part.length) {
      this.part = null;
      this.dispatch(part, 4, part.length, part[3] as number, part.length - 4);
    }
    return o;
  }

  /** One wire packet; pieces of a 16 MiB+ packet are joined first. */
  private dispatch(b: Buffer, s: number, e: number, seq: number, len: number): void {
    if (len === MAX_PAYLOAD || this.big !== null) {
      if (this.big === null) this.big = [];
      this.big.push(Buffer.from(b.subarray(s, e)));
      if (len === MAX_PAYLOAD) return;
      const whole = Buffer.concat(this.big);
      this.big = null;
      this.packet(whole, 0, whole.length, seq);
      return;
    }
    this.packet(b, s, e, seq);
  }

  private packet(b: Buffer, s: number, e: number, seq: number): void {
    switch (this.mode) {
      case COUNT:
      case ROWS:
        this.resultPacket(b, s, e, seq);
        return;
      case PREPARE:
        this.preparePacket(b, s, e);
        return;
      case HANDSHAKE:
        this.handshake(b, s, e, seq);
        return;
      case AUTH:
        this.authPacket(b, s, e, seq);
        return;
      default:
        // Unrequested: the server reports why it is about to close (e.g. 1927 connection killed).
        if (b[s] === 0xff && this.dead === null) {
          const err = this.errPacket(b, s, e);
          this.dead = err.kind === 'reconnect' ? err : new DbError('reconnect', err.code, err.message);
        }
    }
  }

  private lenenc(b: Buffer, o: number): number {
    const h = b[o] as number;
    if (h < 0xfb) {
      this.lo = o + 1;
      return h;
    }
    if (h === 0xfc) {
      this.lo = o + 3;
      return (b[o + 1] as number) | ((b[o + 2] as number) << 8);
    }
    if (h === 0xfd) {
      this.lo = o + 4;
      return (b[o + 1] as number) | ((b[o + 2] as number) << 8) | ((b[o + 3] as number) << 16);
    }
    this.lo = o + 9;
    return b.readUInt32LE(o + 1) + b.readUInt32LE(o + 5) * 0x100000000;
  }

  private errPacket(b: Buffer, s: number, e: number): DbError {
    const errno = (b[s + 1] as number) | ((b[s + 2] as number) << 8);
    let sqlState: string | undefined;
    let m = s + 3;
    if (b[m] === 0x23) {
      sqlState = b.toString('latin1', m + 1, m + 6);
      m += 6;
    }
    return classifyMysql({ errno, sqlState, message: b.toString('utf8', m, e) });
  }

  /** Status flags of an OK packet (header at `s`). */
  private okStatus(b: Buffer, s: number): number {
    this.affected = this.lenenc(b, s + 1);
    this.lenenc(b, this.lo); // last insert id
    const o = this.lo;
    return (b[o] as number) | ((b[o + 1] as number) << 8);
  }

  private resultPacket(b: Buffer, s: number, e: number, seq: number): void {
    const h = b[s] as number;
    switch (this.phase) {
      case 3:
        if (h === 0xfe && e - s < MAX_PAYLOAD) {
          // End of the rows: EOF packet, or OK packet with the 0xFE header under DEPRECATE_EOF.
          const status = this.deprecateEof
            ? this.okStatus(b, s)
            : (b[s + 3] as number) | ((b[s + 4] as number) << 8);
          if ((status & SERVER_MORE_RESULTS_EXISTS) !== 0) this.phase = 0;
          else this.finish(this.mode === ROWS ? this.out : this.rows);
          return;
        }
        if (h === 0xff) {
          this.failRequest(this.errPacket(b, s, e));
          return;
        }
        this.rows++;
        if (this.mode === ROWS) this.decodeRow(b, s);
        return;
      case 0:
        if (h === 0x00) {
          const status = this.okStatus(b, s);
          if ((status & SERVER_MORE_RESULTS_EXISTS) !== 0) return;
          this.finish(this.mode === ROWS ? this.out : this.sawResultSet ? this.rows : this.affected);
          return;
        }
        if (h === 0xff) {
          this.failRequest(this.errPacket(b, s, e));
          return;
        }
        if (h === 0xfb) {
          // LOCAL INFILE request: refuse by sending an empty file; the server answers with OK or ERR.
          const empty = Buffer.allocUnsafe(4);
          writeHeader(empty, 0, 0, (seq + 1) & 0xff);
          this.socket.write(empty);
          return;
        }
        this.left = this.lenenc(b, s);
        this.phase = 1;
        this.sawResultSet = true;
        if (this.mode === ROWS) this.columns = [];
        return;
      case 1:
        if (this.mode === ROWS) this.columns.push(this.columnDef(b, s));
        if (--this.left === 0) this.phase = this.deprecateEof ? 3 : 2;
        return;
      default:
        // The EOF packet after the column definitions.
        this.phase = 3;
    }
  }

  private columnDef(b: Buffer, s: number): Column {
    let o = s;
    for (let i = 0; i < 4; i++) o = this.skipString(b, o); // catalog, schema, table, org_table
    const nameLen = this.lenenc(b, o);
    const name = b.toString('utf8', this.lo, this.lo + nameLen);
    o = this.skipString(b, this.lo + nameLen); // org_name
    this.lenenc(b, o); // length of the fixed fields: charset (2), column length (4), type (1), ...
    return { name, type: b[this.lo + 6] as number };
  }

  /** The offset after the length-encoded string at `o`. */
  private skipString(b: Buffer, o: number): number {
    const n = this.lenenc(b, o);
    return this.lo + n;
  }

  private decodeRow(b: Buffer, s: number): void {
    const row: Row = {};
    let o = s;
    for (const c of this.columns) {
      if (b[o] === 0xfb) {
        row[c.name] = null;
        o++;
        continue;
      }
      const n = this.lenenc(b, o);
      o = this.lo;
      const text = b.toString('utf8', o, o + n);
      o += n;
      if (NUMERIC_TYPES.has(c.type)) {
        const v = Number(text);
        row[c.name] = c.type === T_LONGLONG && !Number.isSafeInteger(v) ? text : v;
      } else row[c.name] = text;
    }
    this.out.push(row);
  }

  private preparePacket(b: Buffer, s: number, e: number): void {
    if (this.phase === 0) {
      if (b[s] === 0xff) {
        this.failRequest(this.errPacket(b, s, e));
        return;
      }
      this.stmtId = b.readUInt32LE(s + 1);
      const cols = b.readUInt16LE(s + 5);
      this.stmtParams = b.readUInt16LE(s + 7);
      this.left = this.stmtParams + cols;
      if (!this.deprecateEof) this.left += (this.stmtParams > 0 ? 1 : 0) + (cols > 0 ? 1 : 0);
      this.phase = 1;
      if (this.left > 0) return;
    } else if (--this.left > 0) return;
    this.finish(new LeanStatement(this, this.stmtId, this.stmtParams));
  }

  // ---- handshake and authentication ----------------------------------------------------------------

  private handshake(b: Buffer, s: number, e: number, seq: number): void {
    if (b[s] === 0xff) {
      this.fail(this.errPacket(b, s, e));
      return;
    }
    let o = s + 1;
    const nul = b.indexOf(0, o);
    const version = b.toString('latin1', o, nul);
    o = nul + 1;
    this.sessionId = b.readUInt32LE(o);
    o += 4;
    const auth1 = Buffer.from(b.subarray(o, o + 8));
    o += 9;
    let caps = b.readUInt16LE(o);
    o += 2;
    let authLen = 0;
    if (o < e) {
      caps |= b.readUInt16LE(o + 3) << 16;
      authLen = b[o + 5] as number;
      o += 16;
    }
    caps >>>= 0;
    let auth2 = Buffer.alloc(0);
    if ((caps & CLIENT_SECURE_CONNECTION) !== 0) {
      const n = Math.max(13, authLen - 8);
      auth2 = Buffer.from(b.subarray(o, Math.min(o + n, e)));
      o += n;
    }
    if ((caps & CLIENT_PLUGIN_AUTH) !== 0 && o < e) {
      const end = b.indexOf(0, o);
      this.plugin = b.toString('latin1', o, end < 0 || end > e ? e : end);
    }
    // MariaDB prefixes its version with "5.5.5-" for old clients.
    this.serverVersion = formatMysqlVersion(version.replace(/^5\.5\.5-(?=.*mariadb)/i, ''));
    if ((caps & CLIENT_PROTOCOL_41) === 0 || (caps & CLIENT_SECURE_CONNECTION) === 0) {
      this.fail(new DbError('fatal', 'PROTOCOL', `server ${version} is too old for connector dbsmack`));
      return;
    }
    this.scramble = scrambleOf(Buffer.concat([auth1, auth2]));

    const t = this.target;
    let want =
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
    if (t.database) want |= CLIENT_CONNECT_WITH_DB;
    const mine = (want & caps) >>> 0;
    this.deprecateEof = (mine & CLIENT_DEPRECATE_EOF) !== 0;

    let auth: Buffer;
    try {
      auth = authResponse(this.plugin, t.password ?? '', this.scramble);
    } catch (err) {
      this.fail(err as DbError);
      return;
    }
    const user = Buffer.from(t.user ?? 'root', 'utf8');
    const db = t.database ? Buffer.from(t.database, 'utf8') : undefined;
    const plugin = Buffer.from(this.plugin, 'latin1');
    const payload = Buffer.alloc(
      32 + user.length + 1 + 9 + auth.length + (db ? db.length + 1 : 0) + plugin.length + 1,
    );
    payload.writeUInt32LE(mine, 0);
    payload.writeUInt32LE(0x40000000, 4); // max packet size
    payload[8] = CHARSET_UTF8MB4;
    let p = 32;
    p += user.copy(payload, p) + 1;
    if ((mine & CLIENT_PLUGIN_AUTH_LENENC_CLIENT_DATA) !== 0) p = writeLenenc(payload, p, auth.length);
    else payload[p++] = auth.length;
    p += auth.copy(payload, p);
    if (db && (mine & CLIENT_CONNECT_WITH_DB) !== 0) p += db.copy(payload, p) + 1;
    if ((mine & CLIENT_PLUGIN_AUTH) !== 0) p += plugin.copy(payload, p) + 1;
    this.mode = AUTH;
    this.socket.write(commandPacket(payload.subarray(0, p), (seq + 1) & 0xff));
  }

  private authPacket(b: Buffer, s: number, e: number, seq: number): void {
    const h = b[s];
    const t = this.target;
    const password = t.password ?? '';
    const reply = (data: Buffer): void => {
      this.socket.write(commandPacket(data, (seq + 1) & 0xff));
    };
    if (h === 0x00) {
      clearTimeout(this.timer);
      this.timer = undefined;
      this.scramble = Buffer.alloc(0);
      this.finish(this);
      return;
    }
    if (h === 0xff) {
      this.fail(this.errPacket(b, s, e));
      return;
    }
    try {
      if (h === 0xfe) {
        // AuthSwitchRequest: another plugin, with a fresh challenge.
        if (e - s === 1) {
          authResponse('mysql_old_password', password, this.scramble);
          return;
        }
        const end = b.indexOf(0, s + 1);
        const nameEnd = end < 0 || end > e ? e : end;
        this.plugin = b.toString('latin1', s + 1, nameEnd);
        this.scramble = scrambleOf(Buffer.from(b.subarray(Math.min(nameEnd + 1, e), e)));
        reply(authResponse(this.plugin, password, this.scramble));
        return;
      }
      if (h === 0x01 && this.plugin === CACHING_SHA2) {
        if (this.awaitingKey) {
          this.awaitingKey = false;
          reply(rsaEncryptedPassword(password, this.scramble, b.toString('latin1', s + 1, e)));
        } else if (b[s + 1] === 4) {
          // Full authentication: in clear over a Unix socket, else RSA-encrypted with the server's key.
          if (t.socket !== undefined) reply(Buffer.from(`${password}\0`, 'utf8'));
          else {
            this.awaitingKey = true;
            reply(Buffer.from([0x02]));
          }
        }
        // 3: fast authentication succeeded; the OK packet follows.
        return;
      }
    } catch (err) {
      this.fail(err instanceof DbError ? err : new DbError('fatal', 'AUTH', (err as Error).message));
      return;
    }
    this.fail(
      new DbError('fatal', 'PROTOCOL', `unexpected packet 0x${(h ?? 0).toString(16)} during authentication`),
    );
  }

  // ---- requests ------------------------------------------------------------------------------------

  /** Send a command now if the connection is idle, else queue it; resolves with the request's result. */
  send(packet: Buffer, mode: number): Promise<unknown> {
    const p = new Promise<unknown>(this.capture);
    if (this.dead !== null) this.capRej(this.dead);
    else if (this.mode === IDLE) {
      this.mode = mode;
      this.resolveFn = this.capRes;
      this.rejectFn = this.capRej;
      this.socket.write(packet);
      if (mode === NO_REPLY) this.finish(undefined);
    } else this.queue.push({ packet, mode, resolve: this.capRes, reject: this.capRej });
    return p;
  }

  /** The request in flight is done: start the next one, then settle this one. */
  private finish(value: unknown): void {
    const resolve = this.resolveFn;
    this.next();
    resolve(value);
  }

  private failRequest(err: DbError): void {
    const reject = this.rejectFn;
    this.next();
    reject(err);
  }

  private next(): void {
    this.phase = 0;
    this.rows = 0;
    this.affected = 0;
    this.sawResultSet = false;
    // The rows just resolved belong to the caller now.
    if (this.mode === ROWS) this.out = [];
    for (;;) {
      const w = this.queue.shift();
      if (w === undefined) {
        this.mode = IDLE;
        this.resolveFn = noop;
        this.rejectFn = noop;
        return;
      }
      this.socket.write(w.packet);
      if (w.mode !== NO_REPLY) {
        this.mode = w.mode;
        this.resolveFn = w.resolve;
        this.rejectFn = w.reject;
        return;
      }
      w.resolve(undefined);
    }
  }

  /** The connection is gone (or never came): reject the request in flight and every queued one. */
  private fail(err: DbError): void {
    if (this.timer !== undefined) {
      clearTimeout(this.timer);
      this.timer = undefined;
    }
    if (this.dead === null) this.dead = err;
    const reject = this.rejectFn;
    const queued = this.queue.splice(0);
    this.mode = IDLE;
    this.resolveFn = noop;
    this.rejectFn = noop;
    if (!this.socket.destroyed) this.socket.destroy();
    reject(this.dead);
    for (const w of queued) w.reject(this.dead);
  }

  query(sql: string, params?: readonly unknown[]): Promise<number> {
    const text = params !== undefined && params.length > 0 ? interpolate(sql, params) : sql;
    return this.send(textCommand(COM_QUERY, text), COUNT) as Promise<number>;
  }

  async prepare(sql: string): Promise<PreparedStatement> {
    return (await this.send(textCommand(COM_STMT_PREPARE, sql), PREPARE)) as LeanStatement;
  }

  async all(sql: string, params?: readonly unknown[]): Promise<Row[]> {
    const text = params !== undefined && params.length > 0 ? interpolate(sql, params) : sql;
    return (await this.send(textCommand(COM_QUERY, text), ROWS)) as Row[];
  }

  async close(): Promise<void> {
    if (this.dead !== null) {
      this.socket.destroy();
      return;
    }
    const closed = new Promise<void>((resolve) => this.socket.once('close', () => resolve()));
    const quit = Buffer.from([1, 0, 0, 0, COM_QUIT]);
    await this.send(quit, NO_REPLY).catch(() => {});
    this.dead = new DbError('reconnect', 'ER_CONNECTION_ALREADY_CLOSED', 'the connection was closed');
    this.socket.end();
    const force = setTimeout(() => this.socket.destroy(), 1000);
    force.unref();
    await closed;
    clearTimeout(force);
  }
}

const INT64_MAX = 0x7fffffffffffffffn;

/** A server-side statement: COM_STMT_EXECUTE with binary parameters, one write per run. */
class LeanStatement implements PreparedStatement {
  private readonly conn: LeanMysqlConnection;
  private readonly id: number;
  private readonly n: number;
  /** Parameter types (type, flags) last sent to the server; all zero before the first run. */
  private readonly types: Buffer;
  /** Byte lengths of the string and byte parameters of the run being built. */
  private readonly lengths: Int32Array;
  /** The text sent for parameters that go as strings (strings, dates, objects). */
  private readonly texts: string[];
  private bound = false;
  private closed = false;
  /** The whole packet of a statement without parameters. */
  private readonly bare: Buffer | undefined;

  constructor(conn: LeanMysqlConnection, id: number, params: number) {
    this.conn = conn;
    this.id = id;
    this.n = params;
    this.types = Buffer.alloc(2 * params);
    this.lengths = new Int32Array(params);
    this.texts = new Array<string>(params).fill('');
    if (params === 0) {
      const b = Buffer.alloc(4 + 10);
      writeHeader(b, 0, 10, 0);
      b[4] = COM_STMT_EXECUTE;
      b.writeUInt32LE(id, 5);
      b.writeUInt32LE(1, 10);
      this.bare = b;
    }
  }

  run(params?: readonly unknown[]): Promise<number> {
    const n = this.n;
    if (this.bare !== undefined) return this.conn.send(this.bare, COUNT) as Promise<number>;
    if (params === undefined || params.length !== n)
      return Promise.reject(
        new DbError('fatal', 'PARAM_COUNT', `statement takes ${n} parameters, got ${params?.length ?? 0}`),
      );
    const types = this.types;
    const lengths = this.lengths;
    let changed = !this.bound;
    let size = 0;
    for (let i = 0; i < n; i++) {
      const v = params[i];
      let t: number;
      let flag = 0;
      if (typeof v === 'number') {
        t = Number.isSafeInteger(v) ? T_LONGLONG : T_DOUBLE;
        size += 8;
      } else if (typeof v === 'string') {
        const len = Buffer.byteLength(v, 'utf8');
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
        const len = Buffer.byteLength(s, 'utf8');
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
    const b = Buffer.allocUnsafe(4 + payload);
    writeHeader(b, 0, payload, 0);
    b[4] = COM_STMT_EXECUTE;
    b.writeUInt32LE(this.id, 5);
    b[9] = 0; // no cursor
    b[10] = 1; // iteration count
    b[11] = 0;
    b[12] = 0;
    b[13] = 0;
    let o = 14;
    b.fill(0, o, o + nb);
    o += nb;
    b[o++] = changed ? 1 : 0;
    if (changed) {
      types.copy(b, o);
      o += 2 * n;
      this.bound = true;
    }
    for (let i = 0; i < n; i++) {
      const v = params[i];
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
    const packet = payload < MAX_PAYLOAD ? b : commandPacket(b.subarray(4));
    return this.conn.send(packet, COUNT) as Promise<number>;
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    const b = Buffer.allocUnsafe(9);
    writeHeader(b, 0, 5, 0);
    b[4] = COM_STMT_CLOSE;
    b.writeUInt32LE(this.id, 5);
    await this.conn.send(b, NO_REPLY).catch(() => {});
  }
}
