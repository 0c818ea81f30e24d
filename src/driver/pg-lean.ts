/**
 * dbsmack's own PostgreSQL client (`?connector=dbsmack`) for the load connections: protocol 3.0 straight on a
 * TCP or Unix socket, made to spend as little client CPU per statement as the wire allows, so that what a
 * run measures is the server and not the client library.
 *
 * - Hot path (`PreparedStatement.run`): the statement is parsed once (named, at `prepare`); each run writes
 *   Bind (text parameters, written straight into a shared scratch buffer) followed by a constant
 *   Execute+Sync as ONE socket write, and resolves to the row count. DataRows are counted, never decoded.
 * - Reads use `onread` with one static buffer shared by every connection of the thread (reads are delivered
 *   one at a time on the event loop); messages are parsed in place, and bytes are copied out only when a
 *   message spans two reads.
 * - Requests are queued FIFO, one ReadyForQuery each; the request at the head lives in fields of the
 *   connection, so a lone request allocates no queue entry. Promises come from a shared executor, so a
 *   statement creates no closure.
 * - After an ErrorResponse the server skips to the Sync, so the connection resynchronises on the next
 *   ReadyForQuery and stays usable. A lost socket rejects every pending request with kind `reconnect`.
 * - Set-up, probes and admin connections keep `pg` (typed rows, rare); this client returns every value as
 *   text, as the `pg` driver of dbsmack does too. No TLS: connectors.ts sends TLS URLs to `pg`.
 */
import net from 'node:net';
import path from 'node:path';
import { DbError } from './errors.ts';
import { classifyPostgres } from './pg-errors.ts';
import { md5Password, ScramClient } from './pg-lean-auth.ts';
import { paramText } from './pg-lean-encode.ts';
import { questionToDollar } from './placeholders.ts';
import type { Connection, ConnectOptions, PreparedStatement, Row, Target } from './types.ts';

/** What a request resolves to. */
const M_VOID = 0;
const M_COUNT = 1;
const M_ROWS = 2;
/** Flag: sent with the extended protocol (Parse/Bind/Execute then Sync). */
const M_EXT = 4;

/** The server's error fields that dbsmack keeps. */
interface ServerError {
  code: string;
  message: string;
  severity: string;
}

type Resolve = (v: unknown) => void;
type Reject = (e: unknown) => void;

class Pending {
  readonly mode: number;
  readonly resolve: Resolve;
  readonly reject: Reject;
  constructor(mode: number, resolve: Resolve, reject: Reject) {
    this.mode = mode;
    this.resolve = resolve;
    this.reject = reject;
  }
}

const noop = (): void => {};
let capturedResolve: Resolve = noop;
let capturedReject: Reject = noop;
/** One executor for every promise: it hands resolve/reject over through module variables, no closure. */
function capture(resolve: Resolve, reject: Reject): void {
  capturedResolve = resolve;
  capturedReject = reject;
}

// ---- frames -----------------------------------------------------------------------------------------------

function frame(type: string, ...parts: (Buffer | string)[]): Buffer {
  const body = Buffer.concat(parts.map((p) => (typeof p === 'string' ? Buffer.from(`${p}\0`, 'utf8') : p)));
  const b = Buffer.allocUnsafe(5 + body.length);
  b[0] = type.charCodeAt(0);
  b.writeInt32BE(4 + body.length, 1);
  body.copy(b, 5);
  return b;
}
const int16 = (n: number): Buffer => {
  const b = Buffer.alloc(2);
  b.writeInt16BE(n);
  return b;
};
const int32 = (n: number): Buffer => {
  const b = Buffer.alloc(4);
  b.writeInt32BE(n);
  return b;
};

/** Execute the unnamed portal (all rows), then Sync. */
const EXEC_SYNC = Buffer.concat([frame('E', '', int32(0)), frame('S')]);
/** Describe the unnamed portal (for column names), Execute, Sync. */
const DESCRIBE_EXEC_SYNC = Buffer.concat([frame('D', Buffer.from('P\0', 'latin1')), EXEC_SYNC]);
const SYNC = frame('S');
const TERMINATE = frame('X');
const Q_BEGIN = frame('Q', 'BEGIN');
const Q_COMMIT = frame('Q', 'COMMIT');
const Q_ROLLBACK = frame('Q', 'ROLLBACK');

/** Parse of the unnamed statement, by SQL text (queries with parameters outside prepared statements). */
const unnamedParse = new Map<string, Buffer>();
function parseUnnamed(sql: string): Buffer {
  let p = unnamedParse.get(sql);
  if (p === undefined) {
    p = frame('P', '', questionToDollar(sql), int16(0));
    if (unnamedParse.size > 1000) unnamedParse.clear();
    unnamedParse.set(sql, p);
  }
  return p;
}

// ---- the shared write buffer --------------------------------------------------------------------------------

/**
 * Scratch buffer for outgoing statements, shared by every connection. A write that the kernel took at once
 * leaves the socket's writableLength at 0 and the buffer free again; otherwise the socket keeps a reference
 * to it and the next statement gets a fresh buffer.
 */
let wbuf = Buffer.allocUnsafe(16 * 1024);
const utf8Write = (Buffer.prototype as unknown as { utf8Write?: unknown }).utf8Write as
  | ((this: Buffer, s: string, offset: number, length: number) => number)
  | undefined;
const writeUtf8: (b: Buffer, s: string, off: number) => number =
  utf8Write !== undefined
    ? (b, s, off) => utf8Write.call(b, s, off, b.length - off)
    : (b, s, off) => b.write(s, off, 'utf8');

/** Converted values of the statement being written (parameters that are not plain primitives). */
const converted: (string | null)[] = [];

/** Write a safe integer's decimal digits at `off`; returns the new offset. */
function writeInteger(b: Buffer, off: number, v: number): number {
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

// ---- the static read buffer ---------------------------------------------------------------------------------

const READ_BUFFER = Buffer.allocUnsafe(64 * 1024);

const READY = 2;

/** Connect with the lean client. TLS is refused before this (connectors.ts). */
export function connectPgLean(target: Target, options: ConnectOptions): Promise<Connection> {
  return new LeanConnection(target).open(options.connectTimeoutMs);
}

class LeanConnection implements Connection {
  readonly driver = 'postgres' as const;
  serverVersion = 'PostgreSQL';
  sessionId: number | undefined;

  private readonly target: Target;
  private socket: net.Socket | undefined;
  /** 0 connecting, 1 authenticating, READY (2) serving statements. */
  private phase = 0;
  /** Set once the connection is gone: every later request rejects with it. */
  private broken: DbError | null = null;
  /** The last FATAL ErrorResponse, reported when the server then closes the socket. */
  private fatal: ServerError | null = null;
  private socketError: Error | null = null;
  private closing = false;

  // The request at the head of the queue.
  private hMode = M_VOID;
  private hResolve: Resolve | null = null;
  private hReject: Reject | null = null;
  /** DataRows since the last CommandComplete. */
  private hRows = 0;
  /** Row count summed over the CommandCompletes. */
  private hCount = 0;
  private hError: ServerError | null = null;
  private hResult: Row[] | null = null;
  private hNames: string[] | null = null;
  private readonly queue: Pending[] = [];

  /** A message that spans reads, gathered here. */
  private carry: Buffer = READ_BUFFER;
  private carryLen = 0;

  private statementSeq = 0;
  private scram: ScramClient | undefined;
  private connectResolve: ((c: Connection) => void) | undefined;
  private connectReject: ((e: unknown) => void) | undefined;

  constructor(target: Target) {
    this.target = target;
  }

  open(timeoutMs: number): Promise<Connection> {
    const t = this.target;
    const port = t.port ?? 5432;
    const where = t.socket ? path.join(t.socket, `.s.PGSQL.${port}`) : `${t.host ?? 'localhost'}:${port}`;
    return new Promise<Connection>((resolve, reject) => {
      let timer: NodeJS.Timeout | undefined;
      const settle = (): void => {
        if (timer) clearTimeout(timer);
        this.connectResolve = undefined;
        this.connectReject = undefined;
      };
      this.connectResolve = (c) => {
        settle();
        resolve(c);
      };
      this.connectReject = (e) => {
        settle();
        this.socket?.destroy();
        reject(e);
      };
      const onread = { buffer: READ_BUFFER, callback: (n: number, b: Buffer): boolean => this.onRead(n, b) };
      const sock = t.socket
        ? net.connect({ path: where, onread })
        : net.connect({ host: t.host ?? 'localhost', port, onread });
      this.socket = sock;
      if (!t.socket) sock.setNoDelay(true);
      sock.on('error', (e) => this.onSocketError(e));
      sock.on('close', () => this.onClose());
      sock.on('connect', () => {
        this.phase = 1;
      });
      if (timeoutMs > 0) {
        timer = setTimeout(
          () =>
            this.connectReject?.(
              new DbError('reconnect', 'ETIMEDOUT', `timeout expired connecting to ${where}`),
            ),
          timeoutMs,
        );
      }
      sock.write(this.startupMessage());
    });
  }

  private startupMessage(): Buffer {
    const t = this.target;
    const pairs: [string, string][] = [
      ['user', t.user ?? 'postgres'],
      ['database', t.database ?? t.user ?? 'postgres'],
      ['application_name', t.params.application_name ?? 'dbsmack'],
      ['client_encoding', 'UTF8'],
    ];
    const body = Buffer.concat([
      int32(196608),
      ...pairs.map(([k, v]) => Buffer.from(`${k}\0${v}\0`, 'utf8')),
      Buffer.from([0]),
    ]);
    return Buffer.concat([int32(4 + body.length), body]);
  }

  // ---- reading ----------------------------------------------------------------------------------------------

  private onRead(n: number, buf: Buffer): boolean {
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
      this.message(buf[off] as number, buf, off + 5, end);
      off = end;
    }
    if (off < n) {
      const rest = n - off;
      if (this.carry === READ_BUFFER || this.carry.length < Math.max(rest, 5)) {
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
    this.message(carry[0] as number, carry, 5, total);
    // Do not keep a buffer grown for one huge value.
    if (carry.length > 1024 * 1024) this.carry = READ_BUFFER;
    return off;
  }

  /** One backend message: type byte, body from `s` to `e` in `b`. */
  private message(type: number, b: Buffer, s: number, e: number): void {
    if (this.phase !== READY) {
      this.onStartupMessage(type, b, s, e);
      return;
    }
    switch (type) {
      case 0x44: // D DataRow
        if ((this.hMode & M_ROWS) !== 0) this.addRow(b, s);
        else this.hRows++;
        return;
      case 0x43: // C CommandComplete
        this.hCount += tagCount(b, s, e - 1, this.hRows);
        this.hRows = 0;
        return;
      case 0x5a: // Z ReadyForQuery
        this.ready();
        return;
      case 0x54: // T RowDescription
        if ((this.hMode & M_ROWS) !== 0) this.hNames = columnNames(b, s);
        return;
      case 0x47: // G CopyInResponse: dbsmack has no data to send; refuse, and resync (the earlier Sync was ignored)
        this.send(frame('f', 'dbsmack sends no COPY data'));
        if ((this.hMode & M_EXT) !== 0) this.send(SYNC);
        return;
      case 0x45: // E ErrorResponse
        this.serverError(parseError(b, s, e));
        return;
      default:
        // 1 ParseComplete, 2 BindComplete, 3 CloseComplete, n NoData, I EmptyQuery, s PortalSuspended,
        // S ParameterStatus, N NoticeResponse, A NotificationResponse, H/d/c COPY TO STDOUT (its tag
        // counts the rows): nothing to do.
        return;
    }
  }

  private addRow(b: Buffer, s: number): void {
    const names = this.hNames ?? [];
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
    if (this.hResult === null) this.hResult = [row];
    else this.hResult.push(row);
  }

  private serverError(err: ServerError): void {
    if (err.severity === 'FATAL' || err.severity === 'PANIC') this.fatal = err;
    if (this.hResolve !== null && this.hError === null) this.hError = err;
  }

  /** ReadyForQuery: the head request is complete; the next queued one becomes the head. */
  private ready(): void {
    const resolve = this.hResolve;
    const reject = this.hReject as Reject;
    if (resolve === null) return;
    const mode = this.hMode;
    const err = this.hError;
    const count = this.hCount;
    const result = this.hResult;
    const next = this.queue.length > 0 ? this.queue.shift() : undefined;
    if (next !== undefined) {
      this.hMode = next.mode;
      this.hResolve = next.resolve;
      this.hReject = next.reject;
    } else {
      this.hResolve = null;
      this.hReject = null;
    }
    this.hRows = 0;
    this.hCount = 0;
    this.hError = null;
    this.hResult = null;
    this.hNames = null;
    if (err !== null) reject(classifyPostgres(err));
    else if ((mode & M_ROWS) !== 0) resolve(result ?? []);
    else resolve(count);
  }

  // ---- start-up and authentication --------------------------------------------------------------------------

  private onStartupMessage(type: number, b: Buffer, s: number, e: number): void {
    try {
      switch (type) {
        case 0x52: // R Authentication*
          this.authenticate(b.readInt32BE(s), b, s + 4, e);
          return;
        case 0x53: {
          // S ParameterStatus
          const z = b.indexOf(0, s);
          if (b.toString('utf8', s, z) === 'server_version') {
            this.serverVersion = `PostgreSQL ${b.toString('utf8', z + 1, e - 1)}`;
          }
          return;
        }
        case 0x4b: // K BackendKeyData
          this.sessionId = b.readInt32BE(s);
          return;
        case 0x5a: // Z ReadyForQuery: connected
          this.phase = READY;
          this.connectResolve?.(this);
          return;
        case 0x45: // E ErrorResponse
          this.connectReject?.(classifyPostgres(parseError(b, s, e)));
          return;
        default:
          return;
      }
    } catch (err) {
      this.connectReject?.(
        err instanceof DbError ? err : new DbError('fatal', 'PG_AUTH', (err as Error).message),
      );
    }
  }

  private authenticate(code: number, b: Buffer, s: number, e: number): void {
    const t = this.target;
    const password = (): string => {
      if (t.password === undefined) {
        throw new DbError(
          'fatal',
          'NO_PASSWORD',
          `the server asks user '${t.user}' for a password and the URL gives none`,
        );
      }
      return t.password;
    };
    switch (code) {
      case 0: // AuthenticationOk
        return;
      case 3: // cleartext
        this.send(frame('p', password()));
        return;
      case 5: // MD5, 4-byte salt
        this.send(frame('p', md5Password(t.user ?? '', password(), b.subarray(s, s + 4))));
        return;
      case 10: {
        // SASL: a list of mechanisms
        const mechanisms = b.toString('utf8', s, e).split('\0');
        if (!mechanisms.includes('SCRAM-SHA-256')) {
          throw new DbError(
            'fatal',
            'PG_AUTH',
            `unsupported SASL mechanisms: ${mechanisms.filter(Boolean).join(', ')}`,
          );
        }
        this.scram = new ScramClient(password());
        const first = Buffer.from(this.scram.clientFirst(), 'utf8');
        this.send(frame('p', 'SCRAM-SHA-256', int32(first.length), first));
        return;
      }
      case 11: // SASLContinue: server-first-message
        if (!this.scram) throw new DbError('fatal', 'PG_AUTH', 'SCRAM: unexpected SASLContinue');
        this.send(frame('p', Buffer.from(this.scram.clientFinal(b.toString('utf8', s, e)), 'utf8')));
        return;
      case 12: // SASLFinal: server-final-message
        if (!this.scram?.verifyServerFinal(b.toString('utf8', s, e))) {
          throw new DbError('fatal', 'PG_AUTH', 'SCRAM: the server signature does not match');
        }
        return;
      default:
        throw new DbError(
          'fatal',
          'PG_AUTH',
          `unsupported authentication method ${code} (use ?connector=pg)`,
        );
    }
  }

  // ---- connection loss --------------------------------------------------------------------------------------

  private onSocketError(e: Error): void {
    this.socketError = e;
    if (this.phase !== READY) this.connectReject?.(classifyPostgres(e));
  }

  private onClose(): void {
    const lost = this.lostError();
    this.broken = lost;
    this.connectReject?.(lost);
    const head = this.hReject;
    const headError = this.hError;
    this.hResolve = null;
    this.hReject = null;
    if (head !== null) {
      // A FATAL answer to the statement itself (57P01 after pg_terminate_backend) says best why.
      const fatal = headError !== null && headError === this.fatal;
      head(fatal ? new DbError('reconnect', headError.code, headError.message, headError.code) : lost);
    }
    for (const p of this.queue.splice(0)) p.reject(lost);
  }

  private lostError(): DbError {
    if (this.closing) return new DbError('reconnect', 'CONNECTION_LOST', 'Connection ended by the client');
    const f = this.fatal;
    if (f !== null) return new DbError('reconnect', f.code, f.message, f.code);
    const e = this.socketError as (Error & { code?: string }) | null;
    if (e !== null) return new DbError('reconnect', e.code ?? 'CONNECTION_LOST', e.message);
    return new DbError('reconnect', 'CONNECTION_LOST', 'Connection terminated by the server');
  }

  // ---- writing ----------------------------------------------------------------------------------------------

  private send(b: Buffer): void {
    this.socket?.write(b);
  }

  /** A promise for the next ReadyForQuery's request; queued behind those in flight. */
  private expect(mode: number): Promise<unknown> {
    const p = new Promise(capture);
    if (this.hResolve === null) {
      this.hMode = mode;
      this.hResolve = capturedResolve;
      this.hReject = capturedReject;
    } else {
      this.queue.push(new Pending(mode, capturedResolve, capturedReject));
    }
    return p;
  }

  /**
   * Write `prefix` (a Parse, or nothing), a Bind of the statement named in `head` with `params` as text,
   * then `tail`, as one socket write.
   */
  writeBind(prefix: Buffer | null, head: Buffer, params: readonly unknown[] | undefined, tail: Buffer): void {
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
    if (prefix !== null) o = prefix.copy(b, 0);
    const start = o;
    b[o] = 0x42; // B
    o += 5;
    o += head.copy(b, o);
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
        b.writeInt32BE(-1, lenAt);
        continue;
      } else {
        const t = converted[i] as string | null;
        converted[i] = null;
        if (t === null) {
          b.writeInt32BE(-1, lenAt);
          continue;
        }
        o += writeUtf8(b, t, o);
      }
      b.writeInt32BE(o - lenAt - 4, lenAt);
    }
    b[o++] = 0; // result formats: all text
    b[o++] = 0;
    b.writeInt32BE(o - start - 1, start + 1);
    o += tail.copy(b, o);
    const sock = this.socket as net.Socket;
    sock.write(b.subarray(0, o));
    if (sock.writableLength !== 0) wbuf = Buffer.allocUnsafe(wbuf.length);
  }

  /** Run a parsed statement: one write of Bind + Execute + Sync; resolves to the row count. */
  runBound(head: Buffer, params: readonly unknown[] | undefined): Promise<number> {
    if (this.broken !== null) return Promise.reject(this.broken);
    this.writeBind(null, head, params, EXEC_SYNC);
    return this.expect(M_COUNT | M_EXT) as Promise<number>;
  }

  /** A simple-protocol Query, written through the shared buffer. */
  private simpleQuery(mode: number, sql: string): Promise<unknown> {
    if (this.broken !== null) return Promise.reject(this.broken);
    const size = 6 + sql.length * 3;
    if (wbuf.length < size) wbuf = Buffer.allocUnsafe(Math.max(size, wbuf.length * 2));
    const b = wbuf;
    b[0] = 0x51; // Q
    let o = 5 + writeUtf8(b, sql, 5);
    b[o++] = 0;
    b.writeInt32BE(o - 1, 1);
    const sock = this.socket as net.Socket;
    sock.write(b.subarray(0, o));
    if (sock.writableLength !== 0) wbuf = Buffer.allocUnsafe(wbuf.length);
    return this.expect(mode);
  }

  private request(mode: number, msg: Buffer): Promise<unknown> {
    if (this.broken !== null) return Promise.reject(this.broken);
    this.send(msg);
    return this.expect(mode);
  }

  // ---- Connection -------------------------------------------------------------------------------------------

  query(sql: string, params?: readonly unknown[]): Promise<number> {
    if (params === undefined || params.length === 0) return this.simpleQuery(M_COUNT, sql) as Promise<number>;
    if (this.broken !== null) return Promise.reject(this.broken);
    this.writeBind(parseUnnamed(sql), UNNAMED_BIND_HEAD, params, EXEC_SYNC);
    return this.expect(M_COUNT | M_EXT) as Promise<number>;
  }

  async all(sql: string, params?: readonly unknown[]): Promise<Row[]> {
    if (params === undefined || params.length === 0) return (await this.simpleQuery(M_ROWS, sql)) as Row[];
    if (this.broken !== null) throw this.broken;
    this.writeBind(parseUnnamed(sql), UNNAMED_BIND_HEAD, params, DESCRIBE_EXEC_SYNC);
    return (await this.expect(M_ROWS | M_EXT)) as Row[];
  }

  async prepare(sql: string): Promise<PreparedStatement> {
    const name = `dbsmack_${++this.statementSeq}`;
    await this.request(M_VOID, Buffer.concat([frame('P', name, questionToDollar(sql), int16(0)), SYNC]));
    return new LeanStatement(this, name);
  }

  /** Close a named statement (errors ignored: the statement dies with its session anyway). */
  async closeStatement(name: string): Promise<void> {
    if (this.broken !== null) return;
    await this.request(M_VOID, Buffer.concat([frame('C', Buffer.from(`S${name}\0`, 'utf8')), SYNC])).catch(
      noop,
    );
  }

  async begin(): Promise<void> {
    await this.request(M_VOID, Q_BEGIN);
  }
  async commit(): Promise<void> {
    await this.request(M_VOID, Q_COMMIT);
  }
  async rollback(): Promise<void> {
    await this.request(M_VOID, Q_ROLLBACK);
  }

  async close(): Promise<void> {
    const sock = this.socket;
    if (sock === undefined || sock.destroyed) return;
    this.closing = true;
    await new Promise<void>((resolve) => {
      const timer = setTimeout(() => sock.destroy(), 2000);
      sock.once('close', () => {
        clearTimeout(timer);
        resolve();
      });
      if (this.broken === null) sock.end(TERMINATE);
      else sock.destroy();
    });
  }
}

/** Bind header of the unnamed portal and unnamed statement, all parameters as text. */
const UNNAMED_BIND_HEAD = Buffer.from([0, 0, 0, 0]);

class LeanStatement implements PreparedStatement {
  private readonly conn: LeanConnection;
  private readonly name: string;
  /** Bind's fixed start: unnamed portal, statement name, no parameter format codes (all text). */
  private readonly head: Buffer;

  constructor(conn: LeanConnection, name: string) {
    this.conn = conn;
    this.name = name;
    this.head = Buffer.from(`\0${name}\0\0\0`, 'utf8');
  }

  run(params?: readonly unknown[]): Promise<number> {
    return this.conn.runBound(this.head, params);
  }

  close(): Promise<void> {
    return this.conn.closeStatement(this.name);
  }
}

// ---- message bodies -----------------------------------------------------------------------------------------

/** Rows of a CommandComplete tag (`b[s..e)`, no NUL): DataRows counted for SELECT/SHOW/FETCH, else its number. */
function tagCount(b: Buffer, s: number, e: number, rows: number): number {
  const first = b[s];
  if (first === 0x53 || first === 0x46) return rows; // SELECT, SHOW (and SET, START…: no rows), FETCH
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

function columnNames(b: Buffer, s: number): string[] {
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

function parseError(b: Buffer, s: number, e: number): ServerError {
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
