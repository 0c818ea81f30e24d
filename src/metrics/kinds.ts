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

/** Guess read/write/other from the first keyword, as sysbench counts them. */
export function kindOfSql(sql: string): StatementKind {
  const m = /^\s*(?:\/\*.*?\*\/\s*)*\(?\s*([a-z]+)/is.exec(sql);
  const w = m?.[1]?.toLowerCase();
  if (w === 'select' || w === 'with' || w === 'show' || w === 'values' || w === 'table') return 'read';
  if (
    w === 'insert' ||
    w === 'update' ||
    w === 'delete' ||
    w === 'replace' ||
    w === 'merge' ||
    w === 'upsert'
  ) {
    return 'write';
  }
  return 'other';
}

/** Statements that open or end a transaction: neither reads nor writes anything themselves. */
const TRANSACTION_CONTROL = /^\s*(?:begin|start\s+transaction|commit|end|rollback|abort)\b/i;

/** A read that locks rows (it may wait for a writer as writers do), or a WITH whose query writes. */
const LOCKING_OR_WRITING =
  /\bfor\s+(?:no\s+key\s+)?(?:update|share)\b|\bfor\s+key\s+share\b|\b(?:insert|update|delete|merge)\b/i;

/**
 * Whether every one of these statements only reads (a SELECT, or a transaction's BEGIN and COMMIT around
 * reads), by their words: what a workload's `readOnly` answers from its SQL. Not a read here: one that locks
 * rows (`FOR UPDATE`, `FOR SHARE`) or names a write anywhere (a WITH that updates). False for none at all.
 * A reader may still wait in the server (a SELECT of pg_sleep, a function that writes): this is a guess from
 * the words, for choosing the load threads' layout (run/plan.ts `readsOnly`), never for counting.
 */
export function onlyReads(sqls: Iterable<string>): boolean {
  let any = false;
  for (const sql of sqls) {
    any = true;
    if (TRANSACTION_CONTROL.test(sql)) continue;
    if (kindOfSql(sql) !== 'read' || LOCKING_OR_WRITING.test(sql)) return false;
  }
  return any;
}
