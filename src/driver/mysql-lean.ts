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
 *   the affected rows (CLIENT_FOUND_ROWS: matched rows, as with the mysql2 connector). On MariaDB 10.6+
 *   the session asks for MARIADB_CLIENT_CACHE_METADATA, as MariaDB's C client (so sysbench) does: a
 *   prepared statement's executions then come without column definitions while its columns are unchanged.
 * - Requests run one at a time in FIFO order; the state of the one in flight lives in fields of the
 *   connection (no per-request objects or closures unless a request has to wait in the queue).
 * Only `all()` (set-up, probes) decodes rows: text protocol, numbers for the integer and float types.
 *
 * Layout (the same as `pg-lean.ts`): framing and decoders in `mysql-wire-decode.ts`, packets built by
 * `mysql-wire-encode.ts`, both pure and tested on buffers; here the states of the connection (`S_*`, and the
 * parts of a result `RS_*`) and one handler per protocol message, named after it (`onOkPacket`,
 * `onColumnDefinition`, `onAuthSwitchRequest`, …).
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
import { interpolate } from './mysql-lean-text.ts';
import {
  AUTH_MORE_DATA,
  AUTH_SWITCH_REQUEST,
  type ColumnDef,
  columnDefinitionsFollowing,
  decodeAuthSwitchRequest,
  decodeColumnDefinition,
  decodeErrPacket,
  decodeHandshakeV10,
  decodeOkPacket,
  decodePrepareOk,
  decodeTextRow,
  ERR_PACKET,
  endOfRowsStatus,
  isEndOfRows,
  LOCAL_INFILE_REQUEST,
  MysqlPacketReader,
  OK_PACKET,
  SERVER_MORE_RESULTS_EXISTS,
} from './mysql-wire-decode.ts';
import {
  CLIENT_CONNECT_WITH_DB,
  CLIENT_DEPRECATE_EOF,
  CLIENT_MYSQL,
  CLIENT_PROTOCOL_41,
  CLIENT_SECURE_CONNECTION,
  CLIENT_WANTED,
  COM_QUERY,
  COM_STMT_PREPARE,
  commandPacket,
  ExecuteEncoder,
  emptyPacket,
  handshakeResponsePacket,
  MARIADB_CACHE_METADATA,
  MARIADB_WANTED,
  QUIT_PACKET,
  stmtClosePacket,
  textCommand,
} from './mysql-wire-encode.ts';
import type { Connection, ConnectOptions, PreparedStatement, Row, Target } from './types.ts';

// States of the connection: what it waits for.
/** The server's Initial Handshake packet. */
const S_HANDSHAKE = 1;
/** The answer to the handshake response: OK, ERR, AuthSwitchRequest or AuthMoreData. */
const S_AUTH = 2;
/** Nothing in flight. */
const S_IDLE = 0;
/** A statement's result: resolves to rows of the result set(s) or affected rows. */
const R_COUNT = 3;
/** A text query whose rows `all()` decodes. */
const R_ROWS = 4;
/** COM_STMT_PREPARE_OK and the parameter and column definitions after it. */
const R_PREPARE = 5;
/** A command without a reply (COM_STMT_CLOSE, COM_QUIT). */
const R_NO_REPLY = 6;

// Parts of a result (R_COUNT, R_ROWS) and of a prepare (R_PREPARE: RS_HEAD, then RS_COLUMNS for the rest).
/** First packet: OK, ERR, LOCAL INFILE request or the column count of a result set. */
const RS_HEAD = 0;
/** Column definitions. */
const RS_COLUMNS = 1;
/** The EOF packet after the column definitions (without DEPRECATE_EOF). */
const RS_COLUMNS_EOF = 2;
/** Rows, until the EOF (or OK) packet that ends them. */
const RS_ROWS = 3;

type Settle = (v: unknown) => void;

/** A request waiting behind the one in flight (its packet is written when it becomes the head). */
class Pending {
  readonly packet: Buffer;
  readonly mode: number;
  readonly resolve: Settle;
  readonly reject: Settle;
  constructor(packet: Buffer, mode: number, resolve: Settle, reject: Settle) {
    this.packet = packet;
    this.mode = mode;
    this.resolve = resolve;
    this.reject = reject;
  }
}

const noop: Settle = () => {};
let capturedResolve: Settle = noop;
let capturedReject: Settle = noop;
/** One executor for every promise: it hands resolve/reject over through module variables, no closure. */
function capture(resolve: Settle, reject: Settle): void {
  capturedResolve = resolve;
  capturedReject = reject;
}

/** Connect, authenticate and return a ready connection; failures are classified DbErrors. */
export function connectMysqlLean(target: Target, options: ConnectOptions): Promise<Connection> {
  return new Promise((resolve, reject) => {
    new LeanMysqlConnection(target, options, resolve as Settle, reject);
  });
}

function netError(e: Error & { code?: unknown }): DbError {
  const code = typeof e.code === 'string' ? e.code : 'PROTOCOL_CONNECTION_LOST';
  return new DbError('reconnect', code, e.message);
}

function errPacketError(b: Buffer, s: number, e: number): DbError {
  return classifyMysql(decodeErrPacket(b, s, e));
}

/** The lean client's connection. Exported for the native I/O path, which takes its socket over. */
export class LeanMysqlConnection extends MysqlPacketReader implements Connection {
  readonly driver = 'mysql' as const;
  serverVersion = 'MySQL';
  sessionId = 0;
  /** See Connection.connectMs: from the socket's connect call to the OK after authentication. */
  connectMs: number | undefined;
  private connectStart = 0;

  readonly socket: net.Socket;
  readonly target: Target;

  private state = S_HANDSHAKE;
  /** Resolve/reject of the request in flight (of the connect while logging in). */
  private hResolve: Settle;
  private hReject: Settle;
  private readonly queue: Pending[] = [];
  /** Set once the connection is unusable: every later request rejects with it. */
  private dead: DbError | null = null;
  private timer: NodeJS.Timeout | undefined;

  // The result being read.
  private rsPart = RS_HEAD;
  private left = 0;
  private rows = 0;
  private affected = 0;
  private sawResultSet = false;
  private columns: ColumnDef[] = [];
  private out: Row[] = [];

  // Handshake and authentication.
  /** The session has CLIENT_DEPRECATE_EOF: an OK packet (header 0xFE) ends the rows, no EOF packets. */
  deprecateEof = false;
  /**
   * The session has MARIADB_CLIENT_CACHE_METADATA (a MariaDB 10.6+ server): a prepared statement's result
   * sets come without their column definitions while these are unchanged, as they do for sysbench.
   */
  cacheMetadata = false;
  private plugin = NATIVE_PASSWORD;
  private scramble: Buffer = Buffer.alloc(0);
  private awaitingKey = false;

  // The prepare in flight.
  private stmtId = 0;
  private stmtParams = 0;

  constructor(target: Target, options: ConnectOptions, resolve: Settle, reject: Settle) {
    super(Buffer.allocUnsafe(64 * 1024));
    this.target = target;
    this.hResolve = resolve;
    this.hReject = reject;
    const onread = { buffer: this.rb, callback: (n: number): boolean => this.onRead(n) };
    this.connectStart = performance.now();
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

  // ---- packets, by state -----------------------------------------------------------------------------

  protected onPacket(b: Buffer, s: number, e: number, seq: number): void {
    switch (this.state) {
      case R_COUNT:
      case R_ROWS:
        this.onResultPacket(b, s, e, seq);
        return;
      case R_PREPARE:
        if (this.rsPart === RS_HEAD) this.onPrepareOk(b, s, e);
        else this.onPrepareDefinition();
        return;
      case S_HANDSHAKE:
        this.onHandshakeV10(b, s, e, seq);
        return;
      case S_AUTH:
        this.onAuthPacket(b, s, e, seq);
        return;
      default:
        // Unrequested: the server reports why it is about to close (e.g. 1927 connection killed).
        if (b[s] === ERR_PACKET && this.dead === null) {
          const err = errPacketError(b, s, e);
          this.dead = err.kind === 'reconnect' ? err : new DbError('reconnect', err.code, err.message);
        }
    }
  }

  private onResultPacket(b: Buffer, s: number, e: number, seq: number): void {
    switch (this.rsPart) {
      case RS_ROWS:
        if (isEndOfRows(b, s, e)) this.onEndOfRows(b, s);
        else if (b[s] === ERR_PACKET) this.failRequest(errPacketError(b, s, e));
        else this.onRow(b, s);
        return;
      case RS_HEAD: {
        const h = b[s];
        if (h === OK_PACKET) this.onOkPacket(b, s);
        else if (h === ERR_PACKET) this.failRequest(errPacketError(b, s, e));
        else if (h === LOCAL_INFILE_REQUEST) this.onLocalInfileRequest(seq);
        else this.onColumnCount(b, s);
        return;
      }
      case RS_COLUMNS:
        this.onColumnDefinition(b, s);
        return;
      default:
        this.rsPart = RS_ROWS; // the EOF packet after the column definitions
    }
  }

  /** OK_Packet answering a statement: affected rows, unless a result set came before it. */
  private onOkPacket(b: Buffer, s: number): void {
    const ok = decodeOkPacket(b, s);
    this.affected = ok.affectedRows;
    if ((ok.status & SERVER_MORE_RESULTS_EXISTS) !== 0) return;
    this.finish(this.state === R_ROWS ? this.out : this.sawResultSet ? this.rows : this.affected);
  }

  /** LOCAL INFILE request: refused by sending an empty file; the server answers with OK or ERR. */
  private onLocalInfileRequest(seq: number): void {
    this.socket.write(emptyPacket(seq + 1));
  }

  /** The column count that opens a result set (its column definitions may be left out: cacheMetadata). */
  private onColumnCount(b: Buffer, s: number): void {
    this.left = columnDefinitionsFollowing(b, s, this.cacheMetadata);
    this.sawResultSet = true;
    if (this.left === 0) this.rsPart = this.deprecateEof ? RS_ROWS : RS_COLUMNS_EOF;
    else {
      this.rsPart = RS_COLUMNS;
      if (this.state === R_ROWS) this.columns = [];
    }
  }

  private onColumnDefinition(b: Buffer, s: number): void {
    if (this.state === R_ROWS) this.columns.push(decodeColumnDefinition(b, s));
    if (--this.left === 0) this.rsPart = this.deprecateEof ? RS_ROWS : RS_COLUMNS_EOF;
  }

  /** A row: counted; decoded only for `all()`. */
  private onRow(b: Buffer, s: number): void {
    this.rows++;
    if (this.state === R_ROWS) this.out.push(decodeTextRow(b, s, this.columns));
  }

  /** The EOF (or OK) packet after the rows: another result set follows, or the request is done. */
  private onEndOfRows(b: Buffer, s: number): void {
    const status = endOfRowsStatus(b, s, this.deprecateEof);
    if ((status & SERVER_MORE_RESULTS_EXISTS) !== 0) this.rsPart = RS_HEAD;
    else this.finish(this.state === R_ROWS ? this.out : this.rows);
  }

  private onPrepareOk(b: Buffer, s: number, e: number): void {
    if (b[s] === ERR_PACKET) {
      this.failRequest(errPacketError(b, s, e));
      return;
    }
    const ok = decodePrepareOk(b, s);
    this.stmtId = ok.statementId;
    this.stmtParams = ok.params;
    this.left = ok.params + ok.columns;
    if (!this.deprecateEof) this.left += (ok.params > 0 ? 1 : 0) + (ok.columns > 0 ? 1 : 0);
    this.rsPart = RS_COLUMNS;
    if (this.left === 0) this.preparedStatement();
  }

  /** A parameter or column definition (or the EOF after them) of the statement being prepared: skipped. */
  private onPrepareDefinition(): void {
    if (--this.left === 0) this.preparedStatement();
  }

  private preparedStatement(): void {
    this.finish(new LeanStatement(this, new ExecuteEncoder(this.stmtId, this.stmtParams)));
  }

  // ---- handshake and authentication ----------------------------------------------------------------

  private onHandshakeV10(b: Buffer, s: number, e: number, seq: number): void {
    if (b[s] === ERR_PACKET) {
      this.fail(errPacketError(b, s, e));
      return;
    }
    const hs = decodeHandshakeV10(b, s, e);
    this.sessionId = hs.connectionId;
    if (hs.plugin !== undefined) this.plugin = hs.plugin;
    // MariaDB prefixes its version with "5.5.5-" for old clients.
    this.serverVersion = formatMysqlVersion(hs.serverVersion.replace(/^5\.5\.5-(?=.*mariadb)/i, ''));
    const caps = hs.capabilities;
    if ((caps & CLIENT_PROTOCOL_41) === 0 || (caps & CLIENT_SECURE_CONNECTION) === 0) {
      this.fail(
        new DbError('fatal', 'PROTOCOL', `server ${hs.serverVersion} is too old for connector dbsmack`),
      );
      return;
    }
    this.scramble = scrambleOf(hs.authData);
    const t = this.target;
    const mine = ((CLIENT_WANTED | (t.database ? CLIENT_CONNECT_WITH_DB : 0)) & caps) >>> 0;
    this.deprecateEof = (mine & CLIENT_DEPRECATE_EOF) !== 0;
    const mariadb = (caps & CLIENT_MYSQL) === 0 ? (MARIADB_WANTED & hs.mariadbCapabilities) >>> 0 : 0;
    this.cacheMetadata = (mariadb & MARIADB_CACHE_METADATA) !== 0;
    let auth: Buffer;
    try {
      auth = authResponse(this.plugin, t.password ?? '', this.scramble);
    } catch (err) {
      this.fail(err as DbError);
      return;
    }
    this.state = S_AUTH;
    this.socket.write(
      handshakeResponsePacket({
        capabilities: mine,
        mariadbCapabilities: mariadb,
        user: t.user ?? 'root',
        authResponse: auth,
        database: t.database,
        plugin: this.plugin,
        seq: seq + 1,
      }),
    );
  }

  private onAuthPacket(b: Buffer, s: number, e: number, seq: number): void {
    const h = b[s];
    try {
      if (h === OK_PACKET) this.onAuthenticated();
      else if (h === ERR_PACKET) this.fail(errPacketError(b, s, e));
      else if (h === AUTH_SWITCH_REQUEST) this.onAuthSwitchRequest(b, s, e, seq);
      else if (h === AUTH_MORE_DATA && this.plugin === CACHING_SHA2) this.onAuthMoreData(b, s, e, seq);
      else {
        this.fail(
          new DbError(
            'fatal',
            'PROTOCOL',
            `unexpected packet 0x${(h ?? 0).toString(16)} during authentication`,
          ),
        );
      }
    } catch (err) {
      this.fail(err instanceof DbError ? err : new DbError('fatal', 'AUTH', (err as Error).message));
    }
  }

  private onAuthenticated(): void {
    this.connectMs = performance.now() - this.connectStart;
    clearTimeout(this.timer);
    this.timer = undefined;
    this.scramble = Buffer.alloc(0);
    this.finish(this);
  }

  /** AuthSwitchRequest: another plugin, with a fresh challenge. */
  private onAuthSwitchRequest(b: Buffer, s: number, e: number, seq: number): void {
    const sw = decodeAuthSwitchRequest(b, s, e);
    if (sw.plugin === 'mysql_old_password') {
      authResponse(sw.plugin, this.target.password ?? '', this.scramble); // throws: unsupported
      return;
    }
    this.plugin = sw.plugin;
    this.scramble = scrambleOf(sw.data);
    this.authReply(authResponse(this.plugin, this.target.password ?? '', this.scramble), seq);
  }

  /** caching_sha2_password: 3 fast auth succeeded (OK follows); 4 full auth; or the server's public key. */
  private onAuthMoreData(b: Buffer, s: number, e: number, seq: number): void {
    const password = this.target.password ?? '';
    if (this.awaitingKey) {
      this.awaitingKey = false;
      this.authReply(rsaEncryptedPassword(password, this.scramble, b.toString('latin1', s + 1, e)), seq);
    } else if (b[s + 1] === 4) {
      // Full authentication: in clear over a Unix socket, else RSA-encrypted with the server's key.
      if (this.target.socket !== undefined) this.authReply(Buffer.from(`${password}\0`, 'utf8'), seq);
      else {
        this.awaitingKey = true;
        this.authReply(Buffer.from([0x02]), seq);
      }
    }
  }

  private authReply(data: Buffer, seq: number): void {
    this.socket.write(commandPacket(data, (seq + 1) & 0xff));
  }

  // ---- requests ------------------------------------------------------------------------------------

  /** Send a command now if the connection is idle, else queue it; resolves with the request's result. */
  send(packet: Buffer, mode: number): Promise<unknown> {
    const p = new Promise<unknown>(capture);
    if (this.dead !== null) capturedReject(this.dead);
    else if (this.state === S_IDLE) {
      this.state = mode;
      this.hResolve = capturedResolve;
      this.hReject = capturedReject;
      this.socket.write(packet);
      if (mode === R_NO_REPLY) this.finish(undefined);
    } else this.queue.push(new Pending(packet, mode, capturedResolve, capturedReject));
    return p;
  }

  /** The request in flight is done: start the next one, then settle this one. */
  private finish(value: unknown): void {
    const resolve = this.hResolve;
    this.next();
    resolve(value);
  }

  private failRequest(err: DbError): void {
    const reject = this.hReject;
    this.next();
    reject(err);
  }

  private next(): void {
    this.rsPart = RS_HEAD;
    this.rows = 0;
    this.affected = 0;
    this.sawResultSet = false;
    // The rows just resolved belong to the caller now.
    if (this.state === R_ROWS) this.out = [];
    for (;;) {
      const w = this.queue.shift();
      if (w === undefined) {
        this.state = S_IDLE;
        this.hResolve = noop;
        this.hReject = noop;
        return;
      }
      this.socket.write(w.packet);
      if (w.mode !== R_NO_REPLY) {
        this.state = w.mode;
        this.hResolve = w.resolve;
        this.hReject = w.reject;
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
    const reject = this.hReject;
    const queued = this.queue.splice(0);
    this.state = S_IDLE;
    this.hResolve = noop;
    this.hReject = noop;
    if (!this.socket.destroyed) this.socket.destroy();
    reject(this.dead);
    for (const w of queued) w.reject(this.dead);
  }

  /**
   * Give the socket up (the native I/O core took a duplicate of its descriptor): its descriptor is closed
   * without a FIN, and this object serves no more requests.
   */
  detachSocket(): void {
    this.dead = new DbError('reconnect', 'ER_CONNECTION_ALREADY_CLOSED', 'the connection was handed over');
    this.socket.removeAllListeners('close');
    this.socket.removeAllListeners('error');
    this.socket.on('error', () => {});
    this.socket.destroy();
  }

  // ---- Connection ----------------------------------------------------------------------------------

  query(sql: string, params?: readonly unknown[]): Promise<number> {
    const text = params !== undefined && params.length > 0 ? interpolate(sql, params) : sql;
    return this.send(textCommand(COM_QUERY, text), R_COUNT) as Promise<number>;
  }

  async prepare(sql: string): Promise<PreparedStatement> {
    return (await this.send(textCommand(COM_STMT_PREPARE, sql), R_PREPARE)) as LeanStatement;
  }

  async all(sql: string, params?: readonly unknown[]): Promise<Row[]> {
    const text = params !== undefined && params.length > 0 ? interpolate(sql, params) : sql;
    return (await this.send(textCommand(COM_QUERY, text), R_ROWS)) as Row[];
  }

  async begin(): Promise<void> {
    await this.query('BEGIN');
  }
  async commit(): Promise<void> {
    await this.query('COMMIT');
  }
  async rollback(): Promise<void> {
    await this.query('ROLLBACK');
  }

  async close(): Promise<void> {
    if (this.dead !== null) {
      this.socket.destroy();
      return;
    }
    const closed = new Promise<void>((resolve) => this.socket.once('close', () => resolve()));
    await this.send(QUIT_PACKET, R_NO_REPLY).catch(() => {});
    this.dead = new DbError('reconnect', 'ER_CONNECTION_ALREADY_CLOSED', 'the connection was closed');
    this.socket.end();
    const force = setTimeout(() => this.socket.destroy(), 1000);
    force.unref();
    await closed;
    clearTimeout(force);
  }
}

/** A server-side statement: COM_STMT_EXECUTE with binary parameters, one write per run. */
class LeanStatement implements PreparedStatement {
  private readonly conn: LeanMysqlConnection;
  private readonly encoder: ExecuteEncoder;
  private closed = false;

  constructor(conn: LeanMysqlConnection, encoder: ExecuteEncoder) {
    this.conn = conn;
    this.encoder = encoder;
  }

  run(params?: readonly unknown[]): Promise<number> {
    const n = this.encoder.params;
    if (n > 0 && (params === undefined || params.length !== n))
      return Promise.reject(
        new DbError('fatal', 'PARAM_COUNT', `statement takes ${n} parameters, got ${params?.length ?? 0}`),
      );
    return this.conn.send(this.encoder.encode(params), R_COUNT) as Promise<number>;
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    await this.conn.send(stmtClosePacket(this.encoder.statementId), R_NO_REPLY).catch(() => {});
  }
}
