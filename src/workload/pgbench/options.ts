/**
 * The options of a pgbench script workload (`dbsmack run script.sql`, `dbsmack run pgbench`), which
 * `dbsmack pgbench` fills from pgbench's own command line.
 */
import { UsageError } from '../../errors.ts';
import type { OptionSpec } from '../types.ts';

export const PGBENCH_OPTIONS: Record<string, OptionSpec> = {
  builtin: {
    type: 'string',
    default: '',
    description:
      'built-in scripts NAME[@WEIGHT], comma-separated: tpcb-like, simple-update, select-only (pgbench -b); tpcb-like when no script file is given',
  },
  file: {
    type: 'string',
    default: '',
    description: 'more script files FILE[@WEIGHT], comma-separated (pgbench -f)',
  },
  protocol: {
    type: 'string',
    default: 'simple',
    choices: ['simple', 'extended', 'prepared'],
    description:
      'how SQL is sent: simple (variables substituted into the text), extended (bound parameters), prepared (pgbench -M)',
  },
  define: {
    type: 'string',
    default: '',
    description: 'variables NAME=VALUE, comma-separated (pgbench -D)',
  },
  scale: {
    type: 'int',
    default: 0,
    min: 0,
    description:
      'the scaling factor, and :scale: 0 counts pgbench_branches when a built-in script runs, else 1 (pgbench -s)',
  },
  random_seed: {
    type: 'string',
    default: '',
    description:
      "seed of the scripts' random functions: time, rand or an integer (pgbench --random-seed; default: --rand-seed)",
  },
  per_command: {
    type: 'bool',
    default: false,
    description: 'time the meta-commands too, for per-command latencies, failures and retries (pgbench -r)',
  },
  connect: {
    type: 'bool',
    default: false,
    description: 'a new connection for every transaction (pgbench -C)',
  },
  allow_shell: {
    type: 'bool',
    default: false,
    description: 'let \\shell and \\setshell run shell commands',
  },
  vacuum: {
    type: 'string',
    default: 'off',
    choices: ['off', 'on', 'all'],
    description:
      'before the run: on vacuums pgbench_branches and pgbench_tellers and empties pgbench_history, all also vacuums pgbench_accounts (pgbench does "on" unless -n; -v is "all")',
  },
  exit_on_abort: {
    type: 'bool',
    default: false,
    description: 'an error that aborts a client stops the whole run (pgbench --exit-on-abort)',
  },
  failures_detailed: {
    type: 'bool',
    default: false,
    description: 'report serialization and deadlock failures apart (pgbench --failures-detailed)',
  },
  latency_limit: {
    type: 'number',
    default: 0,
    min: 0,
    description: 'count transactions that take longer than this many ms as late (pgbench -L)',
  },
  progress: {
    type: 'int',
    default: 0,
    min: 0,
    description: 'pgbench -P: seconds between progress lines (the report then shows the latency stddev)',
  },
  jobs: {
    type: 'int',
    default: 0,
    min: 0,
    description: 'pgbench -j, shown as the number of threads (the load workers; 0: as many as dbsmack chose)',
  },
  // initialization (dbsmack prepare pgbench, dbsmack pgbench -i)
  init_steps: {
    type: 'string',
    default: 'dtgvp',
    description:
      'prepare: steps in order (pgbench -I): d drop, t create tables, g generate data client-side, G server-side, v vacuum, p primary keys, f foreign keys',
  },
  fillfactor: {
    type: 'int',
    default: 100,
    min: 10,
    max: 100,
    description: 'prepare: fill factor of the tables (pgbench -F)',
  },
  foreign_keys: {
    type: 'bool',
    default: false,
    description: 'prepare: create foreign keys between the tables (pgbench --foreign-keys)',
  },
  partitions: {
    type: 'int',
    default: 0,
    min: 0,
    description: 'prepare: partition pgbench_accounts into N parts (PostgreSQL)',
  },
  partition_method: {
    type: 'string',
    default: 'range',
    choices: ['range', 'hash'],
    description: 'prepare: partitioning method (pgbench --partition-method)',
  },
  unlogged_tables: { type: 'bool', default: false, description: 'prepare: unlogged tables (PostgreSQL)' },
  tablespace: { type: 'string', default: '', description: 'prepare: tablespace of the tables (PostgreSQL)' },
  index_tablespace: {
    type: 'string',
    default: '',
    description: 'prepare: tablespace of the indexes (PostgreSQL)',
  },
  quiet: {
    type: 'bool',
    default: false,
    description: 'prepare: a progress line every 5 seconds instead of every 100000 rows (pgbench -q)',
  },
};

/** `NAME[@WEIGHT]` (pgbench's parseScriptWeight: the last `@` separates the weight). */
export function parseWeighted(spec: string, what: string): { name: string; weight: number } {
  const at = spec.lastIndexOf('@');
  if (at < 0) return { name: spec, weight: 1 };
  const w = spec.slice(at + 1);
  if (!/^\d+$/.test(w))
    throw new UsageError(`invalid weight specification: @${w}`, `${what} NAME@WEIGHT, WEIGHT a whole number`);
  const weight = Number(w);
  if (weight > 2147483647) throw new UsageError(`weight specification out of range (0 .. 2147483647): ${w}`);
  return { name: spec.slice(0, at), weight };
}

/** A comma-separated option value, or a JSON array of strings (how `dbsmack pgbench` passes values with commas). */
export function listOption(v: string): string[] {
  if (v.trim() === '') return [];
  if (v.startsWith('[')) {
    try {
      const a = JSON.parse(v) as unknown;
      if (Array.isArray(a) && a.every((x) => typeof x === 'string')) return a as string[];
    } catch {
      // not JSON: a comma-separated list after all
    }
  }
  return v
    .split(',')
    .map((s) => s.trim())
    .filter((s) => s !== '');
}

/** -D NAME=VALUE definitions. */
export function parseDefines(v: string): [string, string][] {
  return listOption(v).map((d) => {
    const eq = d.indexOf('=');
    if (eq <= 0 || eq === d.length - 1)
      throw new UsageError(`invalid variable definition: "${d}"`, 'define variables as NAME=VALUE');
    return [d.slice(0, eq), d.slice(eq + 1)];
  });
}

/**
 * pgbench's --random-seed as the seed of the scripts' generators: an unsigned integer, or the run's own seed
 * (`--rand-seed`, else the clock) for "time", "rand" and nothing, so that every load worker uses the same.
 */
export function parseRandomSeed(v: string, fallback: number): bigint {
  if (v === '' || v === 'time' || v === 'rand') return BigInt(fallback);
  if (!/^\d+$/.test(v) || BigInt(v) > 18446744073709551615n) {
    throw new UsageError(
      `unrecognized random seed option "${v}"`,
      'expecting an unsigned integer, "time" or "rand"',
    );
  }
  return BigInt(v);
}
