/**
 * pgbench's three built-in scripts (`-b`, `-S`, `-N`), with the SQL pgbench 15–17 runs. On MySQL/MariaDB,
 * which has no `END` statement, the transaction ends with `COMMIT` instead.
 */
import type { DriverName } from '../../driver/types.ts';

export interface BuiltinScript {
  name: string;
  /** pgbench's description, shown as the transaction type. */
  desc: string;
  script(driver: DriverName): string;
}

const SET_IDS =
  '\\set aid random(1, 100000 * :scale)\n' +
  '\\set bid random(1, 1 * :scale)\n' +
  '\\set tid random(1, 10 * :scale)\n' +
  '\\set delta random(-5000, 5000)\n';

const end = (driver: DriverName): string => (driver === 'mysql' ? 'COMMIT;\n' : 'END;\n');

export const BUILTIN_SCRIPTS: readonly BuiltinScript[] = [
  {
    name: 'tpcb-like',
    desc: '<builtin: TPC-B (sort of)>',
    script: (driver) =>
      `${SET_IDS}BEGIN;\n` +
      'UPDATE pgbench_accounts SET abalance = abalance + :delta WHERE aid = :aid;\n' +
      'SELECT abalance FROM pgbench_accounts WHERE aid = :aid;\n' +
      'UPDATE pgbench_tellers SET tbalance = tbalance + :delta WHERE tid = :tid;\n' +
      'UPDATE pgbench_branches SET bbalance = bbalance + :delta WHERE bid = :bid;\n' +
      'INSERT INTO pgbench_history (tid, bid, aid, delta, mtime) VALUES (:tid, :bid, :aid, :delta, CURRENT_TIMESTAMP);\n' +
      end(driver),
  },
  {
    name: 'simple-update',
    desc: '<builtin: simple update>',
    script: (driver) =>
      `${SET_IDS}BEGIN;\n` +
      'UPDATE pgbench_accounts SET abalance = abalance + :delta WHERE aid = :aid;\n' +
      'SELECT abalance FROM pgbench_accounts WHERE aid = :aid;\n' +
      'INSERT INTO pgbench_history (tid, bid, aid, delta, mtime) VALUES (:tid, :bid, :aid, :delta, CURRENT_TIMESTAMP);\n' +
      end(driver),
  },
  {
    name: 'select-only',
    desc: '<builtin: select only>',
    script: () =>
      '\\set aid random(1, 100000 * :scale)\nSELECT abalance FROM pgbench_accounts WHERE aid = :aid;\n',
  },
];

/** pgbench's findBuiltin: a name or an unambiguous prefix of one. */
export function findBuiltin(name: string): BuiltinScript | { error: string } {
  const found = BUILTIN_SCRIPTS.filter((b) => b.name.startsWith(name));
  if (found.length === 1) return found[0] as BuiltinScript;
  const list = BUILTIN_SCRIPTS.map((b) => b.name).join(', ');
  if (found.length === 0)
    return { error: `no builtin script found for name "${name}" (builtin scripts: ${list})` };
  return { error: `ambiguous builtin name: ${found.length} builtin scripts found for prefix "${name}"` };
}
