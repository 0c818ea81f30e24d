/**
 * The kinds of statements, on the ground floor of the RunResult: workloads declare them (`Statement.kind`),
 * the engine and the builders count by them. sysbench's read/write/other rule is written here once.
 */

/** What a statement does, for sysbench-style read/write/other counting. */
export type StatementKind = 'read' | 'write' | 'other';

export interface KindCounts {
  read: number;
  write: number;
  other: number;
}

/**
 * Statements by kind, counted as sysbench 1.0.20 counts them (`db_driver.c`): read = a statement that
 * returned a result set, write = one that changed rows, other = everything else (BEGIN, COMMIT, and a write
 * that changed no row: `zero` of its `count`).
 */
export function countByKind(
  types: Iterable<{ kind: StatementKind; count: number; zero?: number | undefined }>,
): KindCounts {
  const c: KindCounts = { read: 0, write: 0, other: 0 };
  for (const t of types) {
    if (t.kind === 'read') c.read += t.count;
    else if (t.kind === 'write') {
      const z = t.zero ?? 0;
      c.write += t.count - z;
      c.other += z;
    } else c.other += t.count;
  }
  return c;
}
