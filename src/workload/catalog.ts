/**
 * The built-in workloads by name, each with its one description: `dbsmack list` prints these, and each
 * built-in module takes its `description` from here for its own help (`dbsmack run NAME --help`). This
 * module imports nothing, so that listing the built-ins loads none of them; `registry.ts` pairs every name
 * with the loader that imports its module when it is asked for. The order is the order of `dbsmack list`.
 */
export const BUILTIN_DESCRIPTIONS = {
  select1: 'SELECT 1 once per event: the smallest unit of client overhead',
  oltp_read_only: 'sysbench OLTP read-only transaction: 10 point selects and 4 range selects',
  oltp_read_write:
    'sysbench OLTP read/write transaction: the read-only queries, 2 updates, a delete and an insert',
  oltp_write_only: 'sysbench OLTP write-only transaction: 2 updates, a delete and an insert',
  oltp_point_select: 'sysbench point select: one SELECT c … WHERE id=? per event, no transaction',
  oltp_update_index: 'sysbench: UPDATE … SET k=k+1 WHERE id=? (--index-updates per event), no transaction',
  oltp_update_non_index:
    'sysbench: UPDATE … SET c=? WHERE id=? (--non-index-updates per event), no transaction',
  oltp_insert: 'sysbench: one INSERT per event (text protocol), no transaction',
  oltp_delete: 'sysbench: one DELETE … WHERE id=? per event, no transaction',
  select_random_points: 'sysbench: SELECT id, k, c, pad … WHERE k IN (10 random values) per event',
  select_random_ranges: 'sysbench: SELECT count(k) … WHERE k BETWEEN ? AND ? OR … (10 ranges) per event',
  bulk_insert: 'sysbench: multi-row INSERTs into one table per client, one row per event',
  pgbench:
    "pgbench scripts: the built-ins (tpcb-like, simple-update, select-only) and script files, with pgbench's options",
} as const;

export type BuiltinName = keyof typeof BUILTIN_DESCRIPTIONS;
