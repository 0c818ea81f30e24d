/**
 * The server settings that change benchmark results, read from the server itself, so that two runs that
 * differ in them can say so (compare lists the differences). Unknown names are simply absent: not every
 * version has every variable.
 */

import { byName } from '../collate.ts';
import type { Connection, Target } from '../driver/types.ts';
import type { ServerInfo } from '../metrics/run-result.ts';

/** MySQL/MariaDB global variables worth recording. */
export const MYSQL_SETTINGS = [
  'max_connections',
  'thread_handling',
  'thread_pool_size',
  'thread_cache_size',
  'table_open_cache',
  'table_definition_cache',
  'innodb_buffer_pool_size',
  'innodb_buffer_pool_instances',
  'innodb_log_file_size',
  'innodb_flush_log_at_trx_commit',
  'innodb_flush_method',
  'innodb_io_capacity',
  'innodb_thread_concurrency',
  'innodb_doublewrite',
  'sync_binlog',
  'log_bin',
  'query_cache_type',
  'query_cache_size',
  'key_buffer_size',
  'max_heap_table_size',
  'tmp_table_size',
  'transaction_isolation',
  'tx_isolation',
  'performance_schema',
  'version_compile_os',
];

/** PostgreSQL settings worth recording. */
export const POSTGRES_SETTINGS = [
  'shared_buffers',
  'max_connections',
  'synchronous_commit',
  'fsync',
  'full_page_writes',
  'wal_level',
  'wal_buffers',
  'max_wal_size',
  'checkpoint_timeout',
  'work_mem',
  'maintenance_work_mem',
  'effective_cache_size',
  'default_transaction_isolation',
  'jit',
  'huge_pages',
  'max_parallel_workers_per_gather',
  'random_page_cost',
];

/** SQLite pragmas worth recording (per connection; these are what a fresh connection gets). */
export const SQLITE_PRAGMAS = [
  'journal_mode',
  'synchronous',
  'page_size',
  'cache_size',
  'busy_timeout',
  'mmap_size',
];

const quoted = (names: readonly string[]): string => names.map((n) => `'${n}'`).join(', ');

/** Read the important settings over an open connection: setting name → value as the server shows it. */
export async function readServerSettings(conn: Connection): Promise<Record<string, string>> {
  const out: Record<string, string> = {};
  if (conn.driver === 'mysql') {
    const rows = await conn.all(`SHOW GLOBAL VARIABLES WHERE Variable_name IN (${quoted(MYSQL_SETTINGS)})`);
    for (const r of rows) {
      const name = r.Variable_name ?? r.variable_name;
      if (name !== undefined) out[String(name)] = String(r.Value ?? r.value ?? '');
    }
  } else if (conn.driver === 'postgres') {
    // current_setting() shows units (128MB) the way SHOW does, unlike the raw pg_settings.setting.
    const rows = await conn.all(
      `SELECT name, current_setting(name) AS value FROM pg_settings WHERE name IN (${quoted(POSTGRES_SETTINGS)})`,
    );
    for (const r of rows) out[String(r.name)] = String(r.value);
  } else {
    for (const p of SQLITE_PRAGMAS) {
      const rows = await conn.all(`PRAGMA ${p}`);
      const first = rows[0];
      if (first) out[p] = String(Object.values(first)[0]);
    }
  }
  return Object.fromEntries(Object.entries(out).sort(([a], [b]) => byName(a, b)));
}

/**
 * Connect, read the version and settings, disconnect. Undefined when the server cannot be reached: the
 * run's result matters more than its annotations, so this never throws.
 */
export async function readServerInfo(
  target: Target,
  connectTimeoutMs: number,
): Promise<ServerInfo | undefined> {
  try {
    const { loadDriver } = await import('../driver/index.ts');
    const driver = await loadDriver(target.driver);
    const conn = await driver.connect(target, { connectTimeoutMs, info: true });
    try {
      return { version: conn.serverVersion, settings: await readServerSettings(conn) };
    } finally {
      await conn.close().catch(() => {});
    }
  } catch {
    return undefined;
  }
}
