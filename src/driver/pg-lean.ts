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
 * - Layout (the same as `mysql-lean.ts`): framing and decoders in `pg-wire-decode.ts`, messages built by
 *   `pg-wire-encode.ts`, both pure and tested on buffers; here the states of the connection (`S_*`) and one
 *   handler per backend message, named after it (`onDataRow`, `onCommandComplete`, `onReadyForQuery`, …).
 * - Set-up, probes and admin connections keep `pg` (typed rows, rare); this client returns every value as
 *   text, as the `pg` driver of dbsmack does too. No TLS: connectors.ts sends TLS URLs to `pg`.
 */
import net from 'node:net';
import path from 'node:path';
import { DbError } from './errors.ts';
import { classifyPostgres } from './pg-errors.ts';
import { md5Password, ScramClient } from './pg-lean-auth.ts';
import {
  AUTHENTICATION,
  BACKEND_KEY_DATA,
  COMMAND_COMPLETE,
  COPY_IN_RESPONSE,
  DATA_ROW,
  decodeBackendKeyData,
  decodeDataRow,
  decodeErrorResponse,
  decodeParameterStatus,
  decodeRowDescription,
  ERROR_RESPONSE,
  PARAMETER_STATUS,
  PgMessageReader,
  READY_FOR_QUERY,
  ROW_DESCRIPTION,
  type ServerError,
  tagCount,
} from './pg-wire-decode.ts';
import {
  bindHead,
  bindMessage,
  closeStatementSync,
  DESCRIBE_EXEC_SYNC,
  frame,
  int32,
  parseMessage,
  Q_BEGIN,
  Q_COMMIT,
  Q_ROLLBACK,
  queryMessage,
  releaseWriteBuffer,
  SYNC,
  startupMessage,
  TERMINATE,
  UNNAMED_BIND_HEAD,
} from './pg-wire-encode.ts';
import { questionToDollar } from './placeholders.ts';
import type { Connection, ConnectOptions, PreparedStatement, Row, Target } from './types.ts';

// States of the connection.
/** The socket is connecting. */
const S_CONNECTING = 0;
/** Startup sent: authentication, ParameterStatus, BackendKeyData, until the first ReadyForQuery. */
const S_AUTHENTICATING = 1;
/** Serving statements: one ReadyForQuery ends each request. */
const S_READY = 2;

/** What a request resolves to. */
const M_VOID = 0;
const M_COUNT = 1;
const M_ROWS = 2;
/** Flag: sent with the extended protocol (Parse/Bind/Execute then Sync). */
const M_EXT = 4;

type Resolve = (v: unknown) => void;
type Reject = (e: unknown) => void;

/** A request waiting behind the one at the head (its messages are already written). */
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

/** Parse of the unnamed statement, by SQL text (queries with parameters outside prepared statements). */
const unnamedParse = new Map<string, Buffer>();
function parseUnnamed(sql: string): Buffer {
  let p = unnamedParse.get(sql);
  if (p === undefined) {
    p = parseMessage('', questionToDollar(sql));
    if (unnamedParse.size > 1000) unnamedParse.clear();
    unnamedParse.set(sql, p);
  }
  return p;
}

/** The static read buffer, shared by every connection of the thread (reads are delivered one at a time). */
const READ_BUFFER = Buffer.allocUnsafe(64 * 1024);

/** Connect with the lean client. TLS is refused before this (connectors.ts). */
export function connectPgLean(target: Target, options: ConnectOptions): Promise<Connection> {
  return new LeanPgConnection(target).open(options.connectTimeoutMs);
}

/** The lean client's connection. Exported for the native I/O path, which takes its socket over. */
export class LeanPgConnection extends PgMessageReader implements Connection {
  readonly driver = 'postgres' as const;
  serverVersion = 'PostgreSQL';
  sessionId: number | undefined;
  /** See Connection.connectMs: from the socket's connect call to the first ReadyForQuery. */
  connectMs: number | undefined;
  private connectStart = 0;

  readonly target: Target;
  socket: net.Socket | undefined;
  private state = S_CONNECTING;
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

  private statementSeq = 0;
  private scram: ScramClient | undefined;
  private connectResolve: ((c: Connection) => void) | undefined;
  private connectReject: ((e: unknown) => void) | undefined;

  constructor(target: Target) {
    super(READ_BUFFER);
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
      this.connectStart = performance.now();
      const sock = t.socket
        ? net.connect({ path: where, onread })
        : net.connect({ host: t.host ?? 'localhost', port, onread });
      this.socket = sock;
      if (!t.socket) sock.setNoDelay(true);
      sock.on('error', (e) => this.onSocketError(e));
      sock.on('close', () => this.onClose());
      sock.on('connect', () => {
        this.state = S_AUTHENTICATING;
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
      sock.write(
        startupMessage([
          ['user', t.user ?? 'postgres'],
          ['database', t.database ?? t.user ?? 'postgres'],
          ['application_name', t.params.application_name ?? 'dbsmack'],
          ['client_encoding', 'UTF8'],
        ]),
      );
    });
  }

  // ---- backend messages, by state ---------------------------------------------------------------------

  protected onMessage(type: number, b: Buffer, s: number, e: number): void {
    if (this.state !== S_READY) {
      this.onStartupMessage(type, b, s, e);
      return;
    }
    switch (type) {
      case DATA_ROW:
        this.onDataRow(b, s);
        return;
      case COMMAND_COMPLETE:
        this.onCommandComplete(b, s, e);
        return;
      case READY_FOR_QUERY:
        this.onReadyForQuery();
        return;
      case ROW_DESCRIPTION:
        if ((this.hMode & M_ROWS) !== 0) this.hNames = decodeRowDescription(b, s);
        return;
      case COPY_IN_RESPONSE:
        this.onCopyInResponse();
        return;
      case ERROR_RESPONSE:
        this.onErrorResponse(decodeErrorResponse(b, s, e));
        return;
      default:
        // 1 ParseComplete, 2 BindComplete, 3 CloseComplete, n NoData, I EmptyQuery, s PortalSuspended,
        // S ParameterStatus, N NoticeResponse, A NotificationResponse, H/d/c COPY TO STDOUT (its tag
        // counts the rows): nothing to do.
        return;
    }
  }

  /** DataRow: counted; decoded only for `all()`. */
  private onDataRow(b: Buffer, s: number): void {
    if ((this.hMode & M_ROWS) === 0) {
      this.hRows++;
      return;
    }
    const row = decodeDataRow(b, s, this.hNames ?? []);
    if (this.hResult === null) this.hResult = [row];
    else this.hResult.push(row);
  }

  private onCommandComplete(b: Buffer, s: number, e: number): void {
    this.hCount += tagCount(b, s, e - 1, this.hRows);
    this.hRows = 0;
  }

  /** CopyInResponse: dbsmack has no data to send; refuse, and resync (the earlier Sync was ignored). */
  private onCopyInResponse(): void {
    this.send(frame('f', 'dbsmack sends no COPY data'));
    if ((this.hMode & M_EXT) !== 0) this.send(SYNC);
  }

  private onErrorResponse(err: ServerError): void {
    if (err.severity === 'FATAL' || err.severity === 'PANIC') this.fatal = err;
    if (this.hResolve !== null && this.hError === null) this.hError = err;
  }

  /** ReadyForQuery: the head request is complete; the next queued one becomes the head. */
  private onReadyForQuery(): void {
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
        case AUTHENTICATION:
          this.onAuthentication(b.readInt32BE(s), b, s + 4, e);
          return;
        case PARAMETER_STATUS: {
          const p = decodeParameterStatus(b, s, e);
          if (p.name === 'server_version') this.serverVersion = `PostgreSQL ${p.value}`;
          return;
        }
        case BACKEND_KEY_DATA:
          this.sessionId = decodeBackendKeyData(b, s).processId;
          return;
        case READY_FOR_QUERY: // connected
          this.state = S_READY;
          this.connectMs = performance.now() - this.connectStart;
          this.connectResolve?.(this);
          return;
        case ERROR_RESPONSE:
          this.connectReject?.(classifyPostgres(decodeErrorResponse(b, s, e)));
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

  /** Authentication*: Ok, CleartextPassword, MD5Password, SASL, SASLContinue, SASLFinal. */
  private onAuthentication(code: number, b: Buffer, s: number, e: number): void {
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
    if (this.state !== S_READY) this.connectReject?.(classifyPostgres(e));
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

  /** Write a view of the shared write buffer; a socket that keeps it (not written at once) gets it for good. */
  private sendShared(b: Buffer): void {
    const sock = this.socket as net.Socket;
    sock.write(b);
    if (sock.writableLength !== 0) releaseWriteBuffer();
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

  /** Run a parsed statement: one write of Bind + Describe + Execute + Sync, as libpq; resolves to the row count. */
  runBound(head: Buffer, params: readonly unknown[] | undefined): Promise<number> {
    if (this.broken !== null) return Promise.reject(this.broken);
    this.sendShared(bindMessage(null, head, params, DESCRIBE_EXEC_SYNC));
    return this.expect(M_COUNT | M_EXT) as Promise<number>;
  }

  /** A simple-protocol Query, written through the shared buffer. */
  private simpleQuery(mode: number, sql: string): Promise<unknown> {
    if (this.broken !== null) return Promise.reject(this.broken);
    this.sendShared(queryMessage(sql));
    return this.expect(mode);
  }

  private request(mode: number, msg: Buffer): Promise<unknown> {
    if (this.broken !== null) return Promise.reject(this.broken);
    this.send(msg);
    return this.expect(mode);
  }

  /**
   * Give the socket up (the native I/O core took a duplicate of its descriptor): its descriptor is closed
   * without a FIN, and this object serves no more requests.
   */
  detachSocket(): void {
    const sock = this.socket as net.Socket;
    this.broken = new DbError('reconnect', 'CONNECTION_LOST', 'the connection was handed over');
    sock.removeAllListeners('close');
    sock.removeAllListeners('error');
    sock.on('error', () => {});
    sock.destroy();
  }

  // ---- Connection -------------------------------------------------------------------------------------------

  query(sql: string, params?: readonly unknown[]): Promise<number> {
    if (params === undefined || params.length === 0) return this.simpleQuery(M_COUNT, sql) as Promise<number>;
    if (this.broken !== null) return Promise.reject(this.broken);
    this.sendShared(bindMessage(parseUnnamed(sql), UNNAMED_BIND_HEAD, params, DESCRIBE_EXEC_SYNC));
    return this.expect(M_COUNT | M_EXT) as Promise<number>;
  }

  async all(sql: string, params?: readonly unknown[]): Promise<Row[]> {
    if (params === undefined || params.length === 0) return (await this.simpleQuery(M_ROWS, sql)) as Row[];
    if (this.broken !== null) throw this.broken;
    this.sendShared(bindMessage(parseUnnamed(sql), UNNAMED_BIND_HEAD, params, DESCRIBE_EXEC_SYNC));
    return (await this.expect(M_ROWS | M_EXT)) as Row[];
  }

  async prepare(sql: string, paramTypes?: readonly string[]): Promise<PreparedStatement> {
    const name = `dbsmack_${++this.statementSeq}`;
    await this.request(M_VOID, Buffer.concat([parseMessage(name, questionToDollar(sql), paramTypes), SYNC]));
    return new LeanStatement(this, name);
  }

  /** Close a named statement (errors ignored: the statement dies with its session anyway). */
  async closeStatement(name: string): Promise<void> {
    if (this.broken !== null) return;
    await this.request(M_VOID, closeStatementSync(name)).catch(noop);
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

class LeanStatement implements PreparedStatement {
  private readonly conn: LeanPgConnection;
  private readonly name: string;
  /** Bind's fixed start: unnamed portal, statement name, no parameter format codes (all text). */
  private readonly head: Buffer;

  constructor(conn: LeanPgConnection, name: string) {
    this.conn = conn;
    this.name = name;
    this.head = bindHead(name);
  }

  run(params?: readonly unknown[]): Promise<number> {
    return this.conn.runBound(this.head, params);
  }

  close(): Promise<void> {
    return this.conn.closeStatement(this.name);
  }
}
