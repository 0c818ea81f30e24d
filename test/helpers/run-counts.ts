/**
 * The counts of a run that must come out the same however it ran (I/O path, threads, batches): its status and
 * totals. Tests that compare runs add the figures of their own subject (per type, errors, sysbench's).
 */
import type { RunResult } from '../../src/metrics/run-result.ts';

export function totalCounts(r: RunResult): {
  status: RunResult['status'];
  queries: number;
  events: number;
  errors: number;
} {
  return { status: r.status, queries: r.totals.queries, events: r.totals.events, errors: r.totals.errors };
}
