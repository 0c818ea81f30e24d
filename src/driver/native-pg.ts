/**
 * A PostgreSQL load connection on the native I/O core (`?io=native`, the default when the addon is
 * built): the lean client (`pg-lean.ts`) logs in, then its socket is handed to the core, and every request
 * after that is encoded here (`pg-wire-encode.ts`), sent and read up to its ReadyForQuery by the core, and
 * answered with the row count, the ErrorResponse (classified by `pg-errors.ts`, as the lean client does) or,
 * for `all()`, the raw response (decoded by `pg-wire-decode.ts`).
 */
import { DbError } from './errors.ts';
import { errnoName, NativeRequests, socketFd, W_COUNT, W_RAW, W_VOID } from './native-connection.ts';
import { F_PG_EXT, F_RAW, K_PG, P_PG } from './native-core.ts';
import { classifyPostgres } from './pg-errors.ts';
import type { LeanPgConnection } from './pg-lean.ts';
import { decodeErrorResponse, decodeRowsResponse } from './pg-wire-decode.ts';
import {
  bindHead,
  bindMessage,
  closeStatementSync,
  DESCRIBE_EXEC_SYNC,
  parseMessage,
  Q_BEGIN,
  Q_COMMIT,
  Q_ROLLBACK,
  queryMessage,
  SYNC,
  TERMINATE,
  UNNAMED_BIND_HEAD,
} from './pg-wire-encode.ts';
import { questionToDollar } from './placeholders.ts';
import type { Connection, PreparedStatement, Row } from './types.ts';

/** Take the logged-in lean connection's socket over; the lean connection is done with. */
export function takeOverPg(lean: LeanPgConnection): Connection {
  const conn = new NativePgConnection(lean);
  lean.detachSocket();
  return conn;
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

class NativePgConnection extends NativeRequests implements Connection {
  readonly driver = 'postgres' as const;
  readonly serverVersion: string;
  readonly sessionId: number | undefined;
  /** The lean client's login: see Connection.connectMs. */
  readonly connectMs: number | undefined;
  private statementSeq = 0;
  protected readonly batchKind = K_PG;
  protected readonly batchFlags = F_PG_EXT;

  constructor(lean: LeanPgConnection) {
    super(socketFd(lean.socket), P_PG, 0);
    this.serverVersion = lean.serverVersion;
    this.sessionId = lean.sessionId;
    this.connectMs = lean.connectMs;
  }

  protected serverError(bytes: Buffer): DbError {
    return classifyPostgres(decodeErrorResponse(bytes, 0, bytes.length));
  }

  protected lostError(errno: number, bytes: Buffer): DbError {
    if (bytes.length > 0) {
      // A FATAL answer before the close (57P01 after pg_terminate_backend) says best why.
      const f = decodeErrorResponse(bytes, 0, bytes.length);
      return new DbError('reconnect', f.code, f.message, f.code);
    }
    const code = errnoName(errno);
    return code !== undefined
      ? new DbError('reconnect', code, `connection lost (${code})`)
      : new DbError('reconnect', 'CONNECTION_LOST', 'Connection terminated by the server');
  }

  /** Run a parsed statement: Bind + Describe + Execute + Sync, as libpq; resolves to the row count. */
  runBound(head: Buffer, params: readonly unknown[] | undefined): Promise<number> {
    return this.request(
      bindMessage(null, head, params, DESCRIBE_EXEC_SYNC),
      K_PG,
      F_PG_EXT,
      W_COUNT,
    ) as Promise<number>;
  }

  encodeQuery(sql: string): Uint8Array {
    return queryMessage(sql);
  }

  query(sql: string, params?: readonly unknown[]): Promise<number> {
    if (params === undefined || params.length === 0)
      return this.request(queryMessage(sql), K_PG, 0, W_COUNT) as Promise<number>;
    return this.request(
      bindMessage(parseUnnamed(sql), UNNAMED_BIND_HEAD, params, DESCRIBE_EXEC_SYNC),
      K_PG,
      F_PG_EXT,
      W_COUNT,
    ) as Promise<number>;
  }

  async all(sql: string, params?: readonly unknown[]): Promise<Row[]> {
    const raw =
      params === undefined || params.length === 0
        ? await this.request(queryMessage(sql), K_PG, F_RAW, W_RAW)
        : await this.request(
            bindMessage(parseUnnamed(sql), UNNAMED_BIND_HEAD, params, DESCRIBE_EXEC_SYNC),
            K_PG,
            F_RAW | F_PG_EXT,
            W_RAW,
          );
    return decodeRowsResponse(raw as Buffer);
  }

  async prepare(sql: string, paramTypes?: readonly string[]): Promise<PreparedStatement> {
    const name = `dbsmack_${++this.statementSeq}`;
    await this.request(
      Buffer.concat([parseMessage(name, questionToDollar(sql), paramTypes), SYNC]),
      K_PG,
      F_PG_EXT,
      W_VOID,
    );
    return new NativePgStatement(this, name);
  }

  /** Close a named statement (errors ignored: the statement dies with its session anyway). */
  async closeStatement(name: string): Promise<void> {
    if (this.dead !== null) return;
    await this.request(closeStatementSync(name), K_PG, F_PG_EXT, W_VOID).catch(() => {});
  }

  async begin(): Promise<void> {
    await this.request(Q_BEGIN, K_PG, 0, W_VOID);
  }
  async commit(): Promise<void> {
    await this.request(Q_COMMIT, K_PG, 0, W_VOID);
  }
  async rollback(): Promise<void> {
    await this.request(Q_ROLLBACK, K_PG, 0, W_VOID);
  }

  close(): Promise<void> {
    return this.closeWith(
      TERMINATE,
      new DbError('reconnect', 'CONNECTION_LOST', 'Connection ended by the client'),
    );
  }
}

class NativePgStatement implements PreparedStatement {
  private readonly conn: NativePgConnection;
  private readonly name: string;
  private readonly head: Buffer;

  constructor(conn: NativePgConnection, name: string) {
    this.conn = conn;
    this.name = name;
    this.head = bindHead(name);
  }

  run(params?: readonly unknown[]): Promise<number> {
    return this.conn.runBound(this.head, params);
  }

  /** Bind + Describe + Execute + Sync of this statement for a batch. */
  encode(params?: readonly unknown[]): Uint8Array {
    return bindMessage(null, this.head, params, DESCRIBE_EXEC_SYNC);
  }

  close(): Promise<void> {
    return this.conn.closeStatement(this.name);
  }
}
