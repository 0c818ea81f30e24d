import type pg from 'pg';
import { loadModule } from '../load-module.ts';
import { loadIoOf, pgConnectorFor } from './connectors.ts';
import { classifyPostgres } from './pg-errors.ts';
import type { LeanPgConnection } from './pg-lean.ts';
import { questionToDollar } from './placeholders.ts';
import { StatementTransactions } from './statement-transactions.ts';
import type { Connection, ConnectOptions, Driver, PreparedStatement, Row, Target } from './types.ts';

/** Values come back as the server's text: the engine counts rows, it does not need JS dates or numbers. */
const asText = (v: string): string => v;
/** One parser for every column: pg asks for it per column of every result, so it must not allocate. */
const rawTypes = { getTypeParser: () => asText };

export { classifyPostgres };

/**
 * PostgreSQL through `pg` (node-postgres). Prepared statements are named and parsed once per connection;
 * `?` placeholders are rewritten to `$n`.
 */
export const postgresDriver: Driver = {
  name: 'postgres',
  async connect(target: Target, options: ConnectOptions): Promise<Connection> {
    if (pgConnectorFor(target, options) === 'dbsmack') {
      // Loaded only when asked for: set-up, probes and admin connections never load it.
      const { connectPgLean } = await import('./pg-lean.ts');
      const lean = await connectPgLean(target, options);
      if (options.load !== true || loadIoOf(target) !== 'native') return lean;
      // Logged in: the native I/O core takes the socket over (native-pg.ts).
      return (await import('./native-pg.ts')).takeOverPg(lean as LeanPgConnection);
    }
    // Loaded on first use: load workers on the default dbsmack connector never need node-postgres.
    const { Client } = (await loadModule<typeof import('pg')>('pg')).default;
    const client = new Client({
      host: target.socket ?? target.host,
      port: target.port,
      user: target.user,
      password: target.password ?? '',
      database: target.database,
      connectionTimeoutMillis: options.connectTimeoutMs,
      application_name: target.params.application_name ?? 'dbsmack',
      ssl: sslOption(target.params.sslmode),
      types: rawTypes,
    });
    // An idle client whose server goes away emits 'error'; without a listener that would crash the process.
    client.on('error', () => {});
    const t0 = performance.now();
    try {
      await client.connect();
    } catch (e) {
      await client.end().catch(() => {});
      throw classifyPostgres(e);
    }
    const conn = new PgConnection(client);
    conn.connectMs = performance.now() - t0;
    try {
      const r = await client.query('SHOW server_version');
      conn.serverVersion = `PostgreSQL ${(r.rows[0] as { server_version: string }).server_version}`;
    } catch (e) {
      await client.end().catch(() => {});
      throw classifyPostgres(e);
    }
    return conn;
  },
};

function sslOption(mode: string | undefined): boolean | { rejectUnauthorized: boolean } | undefined {
  if (mode === undefined || mode === 'disable' || mode === 'prefer' || mode === 'allow') return undefined;
  if (mode === 'require') return { rejectUnauthorized: false };
  return { rejectUnauthorized: true };
}

let statementCounter = 0;

class PgConnection extends StatementTransactions implements Connection {
  readonly driver = 'postgres' as const;
  serverVersion = 'PostgreSQL';
  connectMs: number | undefined;
  readonly sessionId: number | undefined;
  private readonly client: pg.Client;

  constructor(client: pg.Client) {
    super();
    this.client = client;
    this.sessionId = (client as unknown as { processID?: number }).processID;
  }

  async query(sql: string, params?: readonly unknown[]): Promise<number> {
    try {
      const text = params && params.length > 0 ? questionToDollar(sql) : sql;
      const r = await this.client.query({ text, values: params as unknown[] | undefined, rowMode: 'array' });
      return rowCountOf(r);
    } catch (e) {
      throw classifyPostgres(e);
    }
  }

  async prepare(sql: string): Promise<PreparedStatement> {
    const name = `dbsmack_${++statementCounter}`;
    const text = questionToDollar(sql);
    const client = this.client;
    // pg parses a named statement on its first execution on this connection and reuses it afterwards.
    // The callback form of client.query: pg's promise form adds a promise and a catch handler per statement.
    return {
      run(params?: readonly unknown[]): Promise<number> {
        return new Promise((resolve, reject) => {
          client.query(
            { name, text, values: params as unknown[] | undefined, rowMode: 'array' },
            (err: Error | null, r: pg.QueryResult) => {
              if (err) reject(classifyPostgres(err));
              else resolve(rowCountOf(r));
            },
          );
        });
      },
      async close(): Promise<void> {
        await client.query(`DEALLOCATE ${name}`).catch(() => {});
      },
    };
  }

  async all(sql: string, params?: readonly unknown[]): Promise<Row[]> {
    try {
      const text = params && params.length > 0 ? questionToDollar(sql) : sql;
      const r = await this.client.query({ text, values: params as unknown[] | undefined });
      return (r.rows ?? []) as Row[];
    } catch (e) {
      throw classifyPostgres(e);
    }
  }

  async close(): Promise<void> {
    await this.client.end().catch(() => {});
  }
}

function rowCountOf(r: pg.QueryResult): number {
  if (r.command === 'SELECT' || r.command === 'SHOW' || r.command === 'FETCH') return r.rows.length;
  return r.rowCount ?? r.rows?.length ?? 0;
}
