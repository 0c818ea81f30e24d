/**
 * The sysbench built-ins, loaded lazily by name. `workload/registry.ts` registers each with `registerBuiltin`.
 */
import type { Workload } from '../types.ts';

const oltp = (key: string) => async (): Promise<Workload> =>
  (await import('./oltp-workloads.ts'))[key as 'oltpReadOnly'];

export const sysbenchBuiltins: { name: string; description: string; load: () => Promise<Workload> }[] = [
  {
    name: 'oltp_read_only',
    description: 'sysbench OLTP read-only transaction (14 selects)',
    load: oltp('oltpReadOnly'),
  },
  {
    name: 'oltp_read_write',
    description: 'sysbench OLTP read/write transaction (14 selects, 2 updates, delete, insert)',
    load: oltp('oltpReadWrite'),
  },
  {
    name: 'oltp_write_only',
    description: 'sysbench OLTP write-only transaction',
    load: oltp('oltpWriteOnly'),
  },
  {
    name: 'oltp_point_select',
    description: 'sysbench: one point select per event',
    load: oltp('oltpPointSelect'),
  },
  {
    name: 'oltp_update_index',
    description: 'sysbench: UPDATE of the indexed column k',
    load: oltp('oltpUpdateIndex'),
  },
  {
    name: 'oltp_update_non_index',
    description: 'sysbench: UPDATE of the non-indexed column c',
    load: oltp('oltpUpdateNonIndex'),
  },
  { name: 'oltp_insert', description: 'sysbench: one INSERT per event', load: oltp('oltpInsert') },
  { name: 'oltp_delete', description: 'sysbench: one DELETE per event', load: oltp('oltpDelete') },
  {
    name: 'select_random_points',
    description: 'sysbench: SELECT … WHERE k IN (10 random values)',
    load: async () => (await import('./select-random.ts')).selectRandomPoints,
  },
  {
    name: 'select_random_ranges',
    description: 'sysbench: SELECT count(k) … over 10 random k ranges',
    load: async () => (await import('./select-random.ts')).selectRandomRanges,
  },
  {
    name: 'bulk_insert',
    description: 'sysbench: multi-row INSERTs, one table per client',
    load: async () => (await import('./bulk-insert.ts')).bulkInsert,
  },
];
