/**
 * A MySQL/MariaDB load connection on the native I/O core (`?io=native`, the default when the addon is
 * built): the lean client (`mysql-lean.ts`) logs in, then its socket is handed to the core, and every
 * request after that is encoded here (`mysql-wire-encode.ts`), sent and read to its end by the core, and
 * answered with the row count, the ERR packet (classified by `mysql-classify.ts`, as the lean client does)
 * or, for `all()` and prepare, the raw response (decoded by `mysql-wire-decode.ts`).
 */
import { DbError } from './errors.ts';
import { classifyMysql } from './mysql-classify.ts';
import type { LeanMysqlConnection } from './mysql-lean.ts';
import { interpolate } from './mysql-lean-text.ts';
import { decodeErrPacket, decodePrepareOk, decodeTextResponse } from './mysql-wire-decode.ts';
import {
  COM_QUERY,
  COM_STMT_PREPARE,
  ExecuteEncoder,
  QUIT_PACKET,
  stmtClosePacket,
  textCommand,
} from './mysql-wire-encode.ts';
import { errnoName, NativeRequests, socketFd, W_COUNT, W_RAW, W_VOID } from './native-connection.ts';
import {
  F_RAW,
  K_MY_PREPARE,
  K_MY_RESULT,
  K_NO_REPLY,
  O_CACHE_METADATA,
  O_DEPRECATE_EOF,
  P_MYSQL,
} from './native-core.ts';
import type { Connection, PreparedStatement, Row } from './types.ts';

/** The core's `open()` options (native-core.ts O_*) for a session the lean client logged in. */
export function coreOptionsOf(lean: Pick<LeanMysqlConnection, 'deprecateEof' | 'cacheMetadata'>): number {
  return (lean.deprecateEof ? O_DEPRECATE_EOF : 0) | (lean.cacheMetadata ? O_CACHE_METADATA : 0);
}

/** Take the logged-in lean connection's socket over; the lean connection is done with. */
export function takeOverMysql(lean: LeanMysqlConnection): Connection {
  const conn = new NativeMysqlConnection(lean);
  lean.detachSocket();
  return conn;
}

class NativeMysqlConnection extends NativeRequests implements Connection {
  readonly driver = 'mysql' as const;
  readonly serverVersion: string;
  readonly sessionId: number;
  /** The lean client's login: see Connection.connectMs. */
  readonly connectMs: number | undefined;
  private readonly deprecateEof: boolean;
  private readonly cacheMetadata: boolean;
  protected readonly batchKind = K_MY_RESULT;
  protected readonly batchFlags = 0;

  constructor(lean: LeanMysqlConnection) {
    super(socketFd(lean.socket), P_MYSQL, coreOptionsOf(lean));
    this.serverVersion = lean.serverVersion;
    this.sessionId = lean.sessionId;
    this.connectMs = lean.connectMs;
    this.deprecateEof = lean.deprecateEof;
    this.cacheMetadata = lean.cacheMetadata;
  }

  protected serverError(bytes: Buffer): DbError {
    return classifyMysql(decodeErrPacket(bytes, 0, bytes.length));
  }

  protected lostError(errno: number, bytes: Buffer): DbError {
    if (bytes.length > 0) {
      // The server said why before it closed (e.g. 1927 connection killed).
      const err = this.serverError(bytes);
      return err.kind === 'reconnect' ? err : new DbError('reconnect', err.code, err.message);
    }
    return new DbError(
      'reconnect',
      errnoName(errno) ?? 'PROTOCOL_CONNECTION_LOST',
      'connection to the server was lost',
    );
  }

  /** Run a statement's packet; resolves to rows of the result set(s) or affected rows. */
  run(packet: Buffer): Promise<number> {
    return this.request(packet, K_MY_RESULT, 0, W_COUNT) as Promise<number>;
  }

  encodeQuery(sql: string): Uint8Array {
    return textCommand(COM_QUERY, sql);
  }

  query(sql: string, params?: readonly unknown[]): Promise<number> {
    const text = params !== undefined && params.length > 0 ? interpolate(sql, params) : sql;
    return this.run(textCommand(COM_QUERY, text));
  }

  async all(sql: string, params?: readonly unknown[]): Promise<Row[]> {
    const text = params !== undefined && params.length > 0 ? interpolate(sql, params) : sql;
    const raw = (await this.request(textCommand(COM_QUERY, text), K_MY_RESULT, F_RAW, W_RAW)) as Buffer;
    return decodeTextResponse(raw, this.deprecateEof, this.cacheMetadata);
  }

  async prepare(sql: string): Promise<PreparedStatement> {
    const raw = (await this.request(
      textCommand(COM_STMT_PREPARE, sql),
      K_MY_PREPARE,
      F_RAW,
      W_RAW,
    )) as Buffer;
    const ok = decodePrepareOk(raw, 4);
    return new NativeMysqlStatement(this, new ExecuteEncoder(ok.statementId, ok.params));
  }

  closeStatement(id: number): Promise<void> {
    return this.request(stmtClosePacket(id), K_NO_REPLY, 0, W_VOID).then(
      () => {},
      () => {},
    );
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

  close(): Promise<void> {
    return this.closeWith(
      QUIT_PACKET,
      new DbError('reconnect', 'ER_CONNECTION_ALREADY_CLOSED', 'the connection was closed'),
    );
  }
}

class NativeMysqlStatement implements PreparedStatement {
  private readonly conn: NativeMysqlConnection;
  private readonly encoder: ExecuteEncoder;
  private closed = false;

  constructor(conn: NativeMysqlConnection, encoder: ExecuteEncoder) {
    this.conn = conn;
    this.encoder = encoder;
  }

  run(params?: readonly unknown[]): Promise<number> {
    const n = this.encoder.params;
    if (n > 0 && (params === undefined || params.length !== n))
      return Promise.reject(
        new DbError('fatal', 'PARAM_COUNT', `statement takes ${n} parameters, got ${params?.length ?? 0}`),
      );
    return this.conn.run(this.encoder.encode(params));
  }

  /** The COM_STMT_EXECUTE packet for a batch; undefined when the parameters do not fit (run() says why). */
  encode(params?: readonly unknown[]): Uint8Array | undefined {
    const n = this.encoder.params;
    if (n > 0 && (params === undefined || params.length !== n)) return undefined;
    return this.encoder.encode(params, true);
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    await this.conn.closeStatement(this.encoder.statementId);
  }
}
