/**
 * sysbench 1.0.20's error policy, per server, as its drivers decide it (`drv_pgsql.c pgsql_check_status`,
 * `drv_mysql.c check_error`) and its event loop acts on it (`sysbench.lua thread_run`): an ignorable error
 * restarts the event from the start and is counted as an "ignored error"; any other error ends the run.
 *
 * - PostgreSQL: SQLSTATE 40P01 (deadlock), 23505 (unique violation) and 40001 (serialization failure) are
 *   ignorable (sysbench sends ROLLBACK itself; the engine rolls back before every restart).
 * - MySQL/MariaDB: the error numbers of `--mysql-ignore-errors` (default `1213,1020,1205`, or `all`).
 * - SQLite (sysbench has no SQLite driver): the engine's own policy (busy and locked restart).
 *
 * Under `--skip-trx` a DELETE and the INSERT of the same id by another client can interleave, so duplicate
 * keys are ignorable on every server (sysbench stops on MySQL's 1062 unless the list names it).
 * Lost connections are re-established by the engine whatever the list says (sysbench only when it names them).
 */

import type { DriverName } from '../../driver/types.ts';
import type { DbError, ErrorAction } from '../../index.ts';
import { UsageError } from '../../index.ts';
import { asOltp } from './options.ts';

/** sysbench's default `--mysql-ignore-errors`. */
export const MYSQL_IGNORE_DEFAULT = '1213,1020,1205';

/** The SQLSTATEs sysbench's PostgreSQL driver treats as ignorable. */
export const PG_IGNORABLE: readonly string[] = ['40P01', '23505', '40001'];

const SQLITE_DUPLICATE = ['SQLITE_CONSTRAINT_PRIMARYKEY', 'SQLITE_CONSTRAINT_UNIQUE'];

/** `all`, or the error numbers of a `--mysql-ignore-errors` list; a usage error for anything else. */
export function parseMysqlIgnoreErrors(value: string): 'all' | ReadonlySet<string> {
  const items = value
    .split(',')
    .map((s) => s.trim())
    .filter((s) => s !== '');
  if (items.includes('all')) return 'all';
  const bad = items.filter((s) => !/^\d+$/.test(s));
  if (bad.length > 0) {
    // (thrown while a client sets up, in its worker: the message is what reaches the user)
    throw new UsageError(
      `--mysql-ignore-errors expects 'all' or MySQL error numbers separated by commas ` +
        `(like ${MYSQL_IGNORE_DEFAULT},1062), got '${value}'`,
    );
  }
  return new Set(items.map((s) => String(Number(s))));
}

/** The `onError` of a sysbench workload's client on `driver` with its parsed options. */
export function sysbenchOnError(
  driver: DriverName,
  options: Readonly<Record<string, unknown>>,
): ((e: DbError) => ErrorAction | undefined) | undefined {
  const o = asOltp(options);
  // checked on every server, as a mistake in it should not wait for the first MySQL run to show
  const list = parseMysqlIgnoreErrors(o.mysql_ignore_errors);
  if (driver === 'postgres') {
    const ignorable = new Set(PG_IGNORABLE);
    return (e) => (ignorable.has(e.sqlState ?? e.code) ? 'restart' : 'stop');
  }
  if (driver === 'mysql') {
    if (list === 'all') return (e) => (/^\d+$/.test(e.code) ? 'restart' : 'stop');
    const ignorable = new Set(list);
    if (o.skip_trx) ignorable.add('1062');
    return (e) => (ignorable.has(e.code) ? 'restart' : 'stop');
  }
  if (!o.skip_trx) return undefined;
  const dup = new Set(SQLITE_DUPLICATE);
  return (e) => (dup.has(e.code) ? 'restart' : undefined);
}
