/**
 * Which client a connection uses. The load clients take the URL's `?connector=` or the default below,
 * chosen by measurement (`bench/peers.ts`); every other connection (set-up, probes, admin) uses the
 * library client of its family, because those read typed rows and run rarely, except the run's server
 * info (`ConnectOptions.info`), which reads text only and takes dbsmack's client when the load clients
 * do, so that the main thread loads no library client for it. Kept free of the client
 * libraries themselves so that the main thread can name the connector without loading them.
 */
import { DbError } from './errors.ts';
import { askedDesign, nativeUnavailable, sharedIoSupported } from './native-core.ts';
import { BATCH_MAX, batchMaxAsked } from './statement-batch.ts';
import type { ConnectOptions, MysqlConnector, PostgresConnector, Target } from './types.ts';
import { checkLoadSetting } from './url.ts';

/**
 * Load clients on MySQL/MariaDB when the URL names none: dbsmack's own client, which costs about half the
 * client CPU per point select of mysql2 (bench/peers.ts, oltp_point_select on MariaDB 10.11).
 */
export const DEFAULT_MYSQL_CONNECTOR: MysqlConnector = 'dbsmack';
/**
 * Load clients on PostgreSQL when the URL names none: the lean client, which spends about half of `pg`'s
 * client CPU per point select (bench/peers.ts); TLS URLs still get `pg` (see pgConnectorFor).
 */
export const DEFAULT_PG_CONNECTOR: PostgresConnector = 'dbsmack';

/** The connector the load clients of a target use (recorded in the RunResult). */
export function loadConnectorOf(target: Target): string | undefined {
  if (target.driver === 'mysql') return target.params.connector ?? DEFAULT_MYSQL_CONNECTOR;
  if (target.driver === 'postgres')
    return target.params.connector ?? (pgWantsTls(target) ? 'pg' : DEFAULT_PG_CONNECTOR);
  return undefined;
}

/** The MySQL client of one connection: the load connector for load clients, else the library one. */
export function mysqlConnectorFor(target: Target, options: ConnectOptions): MysqlConnector {
  const asked = target.params.connector as MysqlConnector | undefined;
  if (options.load === true) return asked ?? DEFAULT_MYSQL_CONNECTOR;
  if (options.info === true && loadConnectorOf(target) === 'dbsmack') return 'dbsmack';
  return asked === 'mariadb' ? 'mariadb' : 'mysql2';
}

/** True when the URL's `sslmode` requires TLS, which only `pg` speaks (`prefer`, `allow` go without). */
export function pgWantsTls(target: Target): boolean {
  const mode = target.params.sslmode;
  return mode === 'require' || mode === 'verify-ca' || mode === 'verify-full';
}

/**
 * The PostgreSQL client of one connection: the load connector for load clients, else `pg`. The lean
 * `dbsmack` client has no TLS: a URL that asks for TLS gets `pg` unless it names `connector=dbsmack`,
 * which is then an error rather than a silent downgrade.
 */
export function pgConnectorFor(target: Target, options: ConnectOptions): PostgresConnector {
  if (options.info === true && !pgWantsTls(target) && loadConnectorOf(target) === 'dbsmack') return 'dbsmack';
  if (options.load !== true) return 'pg';
  const asked = target.params.connector as PostgresConnector | undefined;
  if (!pgWantsTls(target)) return asked ?? DEFAULT_PG_CONNECTOR;
  if (asked === 'dbsmack') {
    throw new DbError(
      'fatal',
      'NO_TLS',
      `connector dbsmack does not speak TLS (sslmode=${target.params.sslmode}): use ?connector=pg`,
    );
  }
  return 'pg';
}

/** The I/O path the URL asks for (`?io=`), else the environment's `DBSMACK_IO`, else none. */
function askedIo(target: Target): string | undefined {
  return target.params.io ?? process.env.DBSMACK_IO;
}

/** How the load connections do their socket I/O after the handshake. */
export type IoPath = 'native' | 'js';

/**
 * The I/O path of a target's load connections (recorded in the RunResult): the native I/O core
 * (`native-core.ts`) for the `dbsmack` connector when the addon is built and neither the URL (`?io=js`) nor
 * the environment (`DBSMACK_IO=js`) asks for JavaScript;
 * JavaScript otherwise (the library connectors, SQLite, or no addon).
 */
export function loadIoOf(target: Target): IoPath {
  if (loadConnectorOf(target) !== 'dbsmack' || askedIo(target) === 'js') return 'js';
  return nativeUnavailable() === undefined ? 'native' : 'js';
}

/**
 * Whether a run on this target gives each of a few clients a load thread of its own by default
 * (capacity.ts `defaultWorkers`, native-core.ts SOLO_IO_MAX_CLIENTS): PostgreSQL on the native core, unless
 * `DBSMACK_NATIVE_DESIGN` asks for another design than 3 (measuring one).
 */
export function soloIoOf(target: Target): boolean {
  const asked = askedDesign();
  return (
    target.driver === 'postgres' && (asked === undefined || asked === 3) && loadIoOf(target) === 'native'
  );
}

/**
 * Whether a run on this target may have one load thread with the native core's shared I/O thread in place of
 * a second load thread (capacity.ts `defaultWorkers`, native-core.ts `loadDesign`): PostgreSQL on the native
 * core, on x86, unless `DBSMACK_NATIVE_DESIGN` asks for another design than 4.
 */
export function sharedIoOf(target: Target): boolean {
  const asked = askedDesign();
  return (
    target.driver === 'postgres' &&
    sharedIoSupported &&
    (asked === undefined || asked === 4) &&
    loadIoOf(target) === 'native'
  );
}

/**
 * Whether the load clients may batch events of one statement on the native I/O core (see
 * `ClientHandler.single`): yes unless the URL (`?batch=off`) or the environment (`DBSMACK_BATCH=off`) says
 * no. Only connections on the native core batch at all.
 */
export function batchingOf(target: Target): boolean {
  return (target.params.batch ?? process.env.DBSMACK_BATCH) !== 'off';
}

/** Why a run that would use the native I/O core runs on the JavaScript path instead (undefined: it does not). */
export function ioNote(target: Target): string | undefined {
  if (loadConnectorOf(target) !== 'dbsmack' || askedIo(target) === 'js') return undefined;
  const why = nativeUnavailable();
  return why === undefined
    ? undefined
    : `note: ${why}; the load clients use the JavaScript I/O path (?io=js)`;
}

/**
 * The load path's environment, read before a run (engine/run-once.ts). `DBSMACK_IO` and `DBSMACK_BATCH` say
 * what the URL's `?io=` and `?batch=` say, and a value they do not take is refused as the URL's is (a
 * UsageError: `DBSMACK_IO=JS` would otherwise run on the native core unsaid). The knobs that measure one
 * layout against another are read by every load thread (and by the native core in C++), which ignore a
 * value they do not take and go on with dbsmack's choice; that is returned here as notes, so that no one
 * measures the default believing it a variant. Empty counts as unset everywhere.
 */
export function loadEnvironmentNotes(env: NodeJS.ProcessEnv = process.env): string[] {
  const set = (name: string): string | undefined => (env[name] === '' ? undefined : env[name]);
  checkLoadSetting('io', set('DBSMACK_IO'), 'use DBSMACK_IO=native or DBSMACK_IO=js', 'DBSMACK_IO');
  checkLoadSetting('batch', set('DBSMACK_BATCH'), 'use DBSMACK_BATCH=on or off', 'DBSMACK_BATCH');
  const notes: string[] = [];
  const ignored = (name: string, takes: string, instead: string): void => {
    notes.push(`note: ${name}=${env[name]} is ignored (it takes ${takes}): ${instead}`);
  };
  const design = set('DBSMACK_NATIVE_DESIGN');
  if (design !== undefined && askedDesign(design) === undefined)
    ignored(
      'DBSMACK_NATIVE_DESIGN',
      'a design of the native core, 0 to 4',
      "the load threads' designs are dbsmack's choice",
    );
  const most = set('DBSMACK_BATCH_MAX');
  if (most !== undefined && batchMaxAsked(most) === undefined)
    ignored(
      'DBSMACK_BATCH_MAX',
      'a whole number from 16 to 4096',
      `batches of up to ${BATCH_MAX} statements`,
    );
  // a count as the core reads one (native/dbsmack_io.cc envCount: strtol to the end, not
  // negative)
  const notCount = (v: string | undefined): boolean =>
    v !== undefined && !(/^\s*[+-]?\d+$/.test(v) && Number(v) >= 0);
  if (notCount(set('DBSMACK_NATIVE_YIELDS')))
    ignored('DBSMACK_NATIVE_YIELDS', 'a whole number, 0 for none', "the core's own count for the protocol");
  if (notCount(set('DBSMACK_NATIVE_FOLLOW')))
    ignored(
      'DBSMACK_NATIVE_FOLLOW',
      'a whole number, 0 for never',
      "threads waiting for one local server's reply look at every 16th read where it came from",
    );
  const threads = set('DBSMACK_LOAD_THREADS');
  if (threads !== undefined && threads !== 'workers')
    ignored(
      'DBSMACK_LOAD_THREADS',
      'only workers',
      'the main thread takes a share of the clients where it can',
    );
  return notes;
}
