/**
 * Which client a connection uses. The load clients take the URL's `?connector=` or the default below,
 * chosen by measurement (`bench/peers.ts`); every other connection (set-up, probes, admin) uses the
 * library client of its family, because those read typed rows and run rarely. Kept free of the client
 * libraries themselves so that the main thread can name the connector without loading them.
 */
import type { ConnectOptions, MysqlConnector, PostgresConnector, Target } from './types.ts';

/**
 * Load clients on MySQL/MariaDB when the URL names none: dbsmack's own client, which costs about half the
 * client CPU per point select of mysql2 (bench/peers.ts, oltp_point_select on MariaDB 10.11).
 */
export const DEFAULT_MYSQL_CONNECTOR: MysqlConnector = 'dbsmack';
/** Load clients on PostgreSQL when the URL names none. */
export const DEFAULT_PG_CONNECTOR: PostgresConnector = 'pg';

/** The connector the load clients of a target use (recorded in the RunResult). */
export function loadConnectorOf(target: Target): string | undefined {
  if (target.driver === 'mysql') return target.params.connector ?? DEFAULT_MYSQL_CONNECTOR;
  if (target.driver === 'postgres') return target.params.connector ?? DEFAULT_PG_CONNECTOR;
  return undefined;
}

/** The MySQL client of one connection: the load connector for load clients, else the library one. */
export function mysqlConnectorFor(target: Target, options: ConnectOptions): MysqlConnector {
  const asked = target.params.connector as MysqlConnector | undefined;
  if (options.load === true) return asked ?? DEFAULT_MYSQL_CONNECTOR;
  return asked === 'mariadb' ? 'mariadb' : 'mysql2';
}

/** The PostgreSQL client of one connection: the load connector for load clients, else `pg`. */
export function pgConnectorFor(target: Target, options: ConnectOptions): PostgresConnector {
  if (options.load === true)
    return (target.params.connector as PostgresConnector | undefined) ?? DEFAULT_PG_CONNECTOR;
  return 'pg';
}
