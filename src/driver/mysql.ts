import type * as mariadb from 'mariadb';
import type * as mysql2 from 'mysql2/promise';
import { loadModule } from '../load-module.ts';
import { loadIoOf, mysqlConnectorFor } from './connectors.ts';
import { classifyMysql, formatMysqlVersion } from './mysql-classify.ts';
import type { LeanMysqlConnection } from './mysql-lean.ts';
import { StatementTransactions } from './statement-transactions.ts';
import type {
  Connection,
  ConnectOptions,
  Driver,
  MysqlConnector,
  PreparedStatement,
  Row,
  Target,
} from './types.ts';

/**
 * MySQL and MariaDB through a wire-protocol client: `mysql2` (MIT), `mariadb` (LGPL) or dbsmack's own
 * (`dbsmack`), chosen with `?connector=` for the load clients (see connectors.ts). All are kept because the
 * connector is part of what a benchmark measures.
 */
export const mysqlDriver: Driver = {
  name: 'mysql',
  async connect(target: Target, options: ConnectOptions): Promise<Connection> {
    const connector: MysqlConnector = mysqlConnectorFor(target, options);
    if (connector === 'mariadb') return connectMariadb(target, options);
    if (connector === 'dbsmack') {
      // Loaded on first use, like mariadb: only load clients of a `connector=dbsmack` run need it.
      const lean = await (await import('./mysql-lean.ts')).connectMysqlLean(target, options);
      if (options.load !== true || loadIoOf(target) !== 'native') return lean;
      // Logged in: the native I/O core takes the socket over (native-mysql.ts).
      return (await import('./native-mysql.ts')).takeOverMysql(lean as LeanMysqlConnection);
    }
    return connectMysql2(target, options);
  },
};

// ---- mysql2 ----------------------------------------------------------------------------------------

async function connectMysql2(target: Target, options: ConnectOptions): Promise<Connection> {
  let conn: mysql2.Connection;
  // Loaded on first use, like mariadb: load workers on the default dbsmack connector never need it.
  const { createConnection } = (
    await loadModule<{ default: typeof import('mysql2/promise') }>('mysql2/promise')
  ).default;
  // the library's connect (socket, handshake, authentication), not the module load before it
  const t0 = performance.now();
  let connectMs: number;
  try {
    conn = await createConnection({
      host: target.host,
      port: target.port,
      socketPath: target.socket,
      user: target.user,
      password: target.password,
      database: target.database,
      connectTimeout: options.connectTimeoutMs,
      rowsAsArray: true,
      supportBigNumbers: true,
      multipleStatements: false,
      infileStreamFactory: undefined,
      // Off: otherwise the promise API captures a stack trace for every statement (13% of a load worker's
      // CPU in a point-select profile); errors are classified and reported without JS stacks anyway.
      trace: false,
    });
    connectMs = performance.now() - t0;
  } catch (e) {
    throw classifyMysql(e);
  }
  // A connection that dies while idle emits 'error'; the next query reports it, so only keep the process alive.
  conn.on('error', () => {});
  const c = new Mysql2Connection(conn);
  c.connectMs = connectMs;
  try {
    const [rows] = await conn.query({ sql: 'SELECT VERSION()', rowsAsArray: true });
    c.serverVersion = formatMysqlVersion(String((rows as unknown[][])[0]?.[0] ?? ''));
  } catch (e) {
    await conn.end().catch(() => {});
    throw classifyMysql(e);
  }
  return c;
}

/** The callback-style statement under mysql2's promise wrapper (`PromisePreparedStatementInfo.statement`). */
interface Mysql2CoreStatement {
  execute(params: unknown[], cb: (err: unknown, result: unknown) => void): void;
}

const NO_PARAMS: readonly unknown[] = [];

function countMysql2(result: unknown): number {
  if (Array.isArray(result)) return result.length;
  return (result as { affectedRows?: number }).affectedRows ?? 0;
}

class Mysql2Connection extends StatementTransactions implements Connection {
  readonly driver = 'mysql' as const;
  serverVersion = 'MySQL';
  connectMs: number | undefined;
  readonly sessionId: number;
  private readonly conn: mysql2.Connection;

  constructor(conn: mysql2.Connection) {
    super();
    this.conn = conn;
    this.sessionId = conn.threadId;
  }

  async query(sql: string, params?: readonly unknown[]): Promise<number> {
    try {
      const [r] = await this.conn.query(sql, params as unknown[] | undefined);
      return countMysql2(r);
    } catch (e) {
      throw classifyMysql(e);
    }
  }

  async prepare(sql: string): Promise<PreparedStatement> {
    let stmt: mysql2.PreparedStatementInfo;
    try {
      stmt = await this.conn.prepare(sql);
    } catch (e) {
      throw classifyMysql(e);
    }
    // The hot path calls the callback API under the promise wrapper: one promise per statement, no
    // [rows, fields] tuple and no async frame of the wrapper's own.
    const core = (stmt as unknown as { statement: Mysql2CoreStatement }).statement;
    return {
      run(params?: readonly unknown[]): Promise<number> {
        return new Promise((resolve, reject) => {
          core.execute((params ?? NO_PARAMS) as unknown[], (err, r) => {
            if (err) reject(classifyMysql(err));
            else resolve(countMysql2(r));
          });
        });
      },
      async close(): Promise<void> {
        await stmt.close().catch(() => {});
      },
    };
  }

  async all(sql: string, params?: readonly unknown[]): Promise<Row[]> {
    try {
      const [r] = await this.conn.query({ sql, values: params as unknown[] | undefined, rowsAsArray: false });
      return Array.isArray(r) ? (r as Row[]) : [];
    } catch (e) {
      throw classifyMysql(e);
    }
  }

  async close(): Promise<void> {
    await this.conn.end().catch(() => this.conn.destroy());
  }
}

// ---- mariadb ---------------------------------------------------------------------------------------

async function connectMariadb(target: Target, options: ConnectOptions): Promise<Connection> {
  let conn: mariadb.Connection;
  // Loaded on first use: every worker thread would otherwise load both connectors at start.
  const { createConnection } = await loadModule<typeof import('mariadb')>('mariadb');
  const t0 = performance.now();
  let connectMs: number;
  try {
    conn = await createConnection({
      host: target.host,
      port: target.port,
      socketPath: target.socket,
      user: target.user,
      password: target.password,
      database: target.database,
      connectTimeout: options.connectTimeoutMs,
      rowsAsArray: true,
      bigIntAsNumber: true,
      insertIdAsNumber: true,
      decimalAsNumber: false,
      // Keep the prepared-statement cache: the hot path re-executes the same statements.
      prepareCacheLength: 256,
    });
    connectMs = performance.now() - t0;
  } catch (e) {
    throw classifyMysql(e);
  }
  conn.on('error', () => {});
  const c = new MariadbConnection(conn);
  c.connectMs = connectMs;
  return c;
}

function countMariadb(result: unknown): number {
  if (Array.isArray(result)) return result.length;
  return Number((result as { affectedRows?: number | bigint }).affectedRows ?? 0);
}

class MariadbConnection extends StatementTransactions implements Connection {
  readonly driver = 'mysql' as const;
  readonly serverVersion: string;
  connectMs: number | undefined;
  readonly sessionId: number;
  private readonly conn: mariadb.Connection;

  constructor(conn: mariadb.Connection) {
    super();
    this.conn = conn;
    this.serverVersion = formatMysqlVersion(conn.serverVersion());
    this.sessionId = Number(conn.threadId);
  }

  async query(sql: string, params?: readonly unknown[]): Promise<number> {
    try {
      return countMariadb(await this.conn.query(sql, params as unknown[] | undefined));
    } catch (e) {
      throw classifyMysql(e);
    }
  }

  async prepare(sql: string): Promise<PreparedStatement> {
    let stmt: mariadb.Prepare;
    try {
      stmt = await this.conn.prepare(sql);
    } catch (e) {
      throw classifyMysql(e);
    }
    return {
      async run(params?: readonly unknown[]): Promise<number> {
        try {
          return countMariadb(await stmt.execute((params ?? []) as unknown[]));
        } catch (e) {
          throw classifyMysql(e);
        }
      },
      async close(): Promise<void> {
        stmt.close();
      },
    };
  }

  async all(sql: string, params?: readonly unknown[]): Promise<Row[]> {
    try {
      const r = await this.conn.query({ sql, rowsAsArray: false }, params as unknown[] | undefined);
      return Array.isArray(r) ? (r as Row[]) : [];
    } catch (e) {
      throw classifyMysql(e);
    }
  }

  async close(): Promise<void> {
    await this.conn.end().catch(() => this.conn.destroy());
  }
}

export { classifyMysql } from './mysql-classify.ts';
