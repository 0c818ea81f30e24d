/**
 * `dbsmack pgbench …`: pgbench's command line (PostgreSQL 15–17), so that `pgbench ARGS` with `pgbench`
 * replaced by `dbsmack pgbench` initializes the same tables or runs the same benchmark and prints
 * pgbench's report. The options are parsed the way pgbench's getopt_long does (`-c4`, `-c 4`, `--client=4`,
 * `--cl 4`, flags run together as `-nS`); they become the `pgbench` workload's options and a run plan.
 */
import { existsSync } from 'node:fs';
import os from 'node:os';
import type { Command } from '@commander-js/extra-typings';
import { sharedIoOf } from '../driver/connectors.ts';
import { SHARED_IO_MIN_CLIENTS } from '../driver/native-core.ts';
import { redactSecrets } from '../driver/redact.ts';
import type { Target } from '../driver/types.ts';
import { parseTarget } from '../driver/url.ts';
import { withAdminContext } from '../engine/admin.ts';
import { RunController } from '../engine/run-once.ts';
import { EXIT, UsageError } from '../errors.ts';
import { UNLIMITED_TRIES } from '../metrics/pgbench-figures.ts';
import type { IntervalPoint, RunResult } from '../metrics/run-result.ts';
import { getFormat, type RunRenderer } from '../report/formats.ts';
import { pgbenchProgressLine, renderPgbench } from '../report/pgbench.ts';
import { planFrom } from '../run/plan.ts';
import { runPlanned } from '../run/run.ts';
import { adminError } from '../run/run-errors.ts';
import { VERSION } from '../version.ts';
import { parseWorkloadOptions } from '../workload/options.ts';
import { BUILTIN_SCRIPTS, findBuiltin } from '../workload/pgbench/builtins.ts';
import { initialize, initOptionsFrom } from '../workload/pgbench/init.ts';
import { PGBENCH_OPTIONS } from '../workload/pgbench/options.ts';
import { loadWorkload } from '../workload/registry.ts';
import type { WorkloadRef } from '../workload/types.ts';
import type { ExitSink } from './command.ts';
import { recordRun } from './history-options.ts';
import { say } from './output.ts';
import { emitResult, exitCodeFor, installSignals, type RunOptions } from './run.ts';

interface OptDef {
  long: string;
  short?: string;
  arg: boolean;
  /** Which mode it belongs to: pgbench refuses to mix them. */
  mode?: 'init' | 'bench';
}

const OPTS: OptDef[] = [
  { long: 'builtin', short: 'b', arg: true, mode: 'bench' },
  { long: 'client', short: 'c', arg: true, mode: 'bench' },
  { long: 'connect', short: 'C', arg: false, mode: 'bench' },
  { long: 'dbname', short: 'd', arg: true },
  { long: 'define', short: 'D', arg: true, mode: 'bench' },
  { long: 'file', short: 'f', arg: true, mode: 'bench' },
  { long: 'fillfactor', short: 'F', arg: true, mode: 'init' },
  { long: 'host', short: 'h', arg: true },
  { long: 'initialize', short: 'i', arg: false },
  { long: 'init-steps', short: 'I', arg: true, mode: 'init' },
  { long: 'jobs', short: 'j', arg: true, mode: 'bench' },
  { long: 'log', short: 'l', arg: false, mode: 'bench' },
  { long: 'latency-limit', short: 'L', arg: true, mode: 'bench' },
  { long: 'no-vacuum', short: 'n', arg: false },
  { long: 'port', short: 'p', arg: true },
  { long: 'progress', short: 'P', arg: true, mode: 'bench' },
  { long: 'protocol', short: 'M', arg: true, mode: 'bench' },
  { long: 'quiet', short: 'q', arg: false, mode: 'init' },
  { long: 'report-per-command', short: 'r', arg: false, mode: 'bench' },
  { long: 'report-latencies', arg: false, mode: 'bench' },
  { long: 'rate', short: 'R', arg: true, mode: 'bench' },
  { long: 'scale', short: 's', arg: true },
  { long: 'select-only', short: 'S', arg: false, mode: 'bench' },
  { long: 'skip-some-updates', short: 'N', arg: false, mode: 'bench' },
  { long: 'time', short: 'T', arg: true, mode: 'bench' },
  { long: 'transactions', short: 't', arg: true, mode: 'bench' },
  { long: 'username', short: 'U', arg: true },
  { long: 'vacuum-all', short: 'v', arg: false, mode: 'bench' },
  { long: 'version', short: 'V', arg: false },
  { long: 'help', short: '?', arg: false },
  { long: 'unlogged-tables', arg: false, mode: 'init' },
  { long: 'tablespace', arg: true, mode: 'init' },
  { long: 'index-tablespace', arg: true, mode: 'init' },
  { long: 'sampling-rate', arg: true, mode: 'bench' },
  { long: 'aggregate-interval', arg: true, mode: 'bench' },
  { long: 'progress-timestamp', arg: false, mode: 'bench' },
  { long: 'log-prefix', arg: true, mode: 'bench' },
  { long: 'foreign-keys', arg: false, mode: 'init' },
  { long: 'random-seed', arg: true, mode: 'bench' },
  { long: 'show-script', arg: true },
  { long: 'partitions', arg: true, mode: 'init' },
  { long: 'partition-method', arg: true, mode: 'init' },
  { long: 'failures-detailed', arg: false, mode: 'bench' },
  { long: 'max-tries', arg: true, mode: 'bench' },
  { long: 'verbose-errors', arg: false, mode: 'bench' },
  { long: 'exit-on-abort', arg: false, mode: 'bench' },
  { long: 'debug', arg: false },
  // dbsmack's own
  { long: 'db', arg: true },
  { long: 'format', arg: true },
  { long: 'out', short: 'o', arg: true },
  { long: 'label', arg: true },
  { long: 'history', arg: true },
  { long: 'no-history', arg: false },
  { long: 'connect-timeout', arg: true },
  { long: 'allow-shell', arg: false },
];

export interface PgbenchArgs {
  /** Options in the order given, long names; repeated ones (-f, -b, -D) keep every value. */
  opts: { name: string; value: string | true }[];
  positional: string[];
}

/** getopt_long as pgbench uses it: short options bundled or with attached values, long options by unique prefix. */
export function parsePgbenchArgs(argv: readonly string[]): PgbenchArgs {
  const opts: PgbenchArgs['opts'] = [];
  const positional: string[] = [];
  const byShort = new Map(OPTS.filter((o) => o.short).map((o) => [o.short as string, o]));
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i] as string;
    if (a === '--') {
      positional.push(...argv.slice(i + 1));
      break;
    }
    if (a.startsWith('--')) {
      const eq = a.indexOf('=');
      const name = a.slice(2, eq < 0 ? undefined : eq);
      const exact = OPTS.find((o) => o.long === name);
      const matches = exact ? [exact] : OPTS.filter((o) => o.long.startsWith(name));
      if (matches.length !== 1) {
        throw new UsageError(
          matches.length === 0 ? `unrecognized option '--${name}'` : `option '--${name}' is ambiguous`,
          'try "dbsmack pgbench --help" for more information',
        );
      }
      const o = matches[0] as OptDef;
      if (!o.arg) {
        if (eq >= 0) throw new UsageError(`option '--${o.long}' doesn't allow an argument`);
        opts.push({ name: o.long, value: true });
        continue;
      }
      const v: string | undefined = eq >= 0 ? a.slice(eq + 1) : argv[++i];
      if (v === undefined) throw new UsageError(`option '--${o.long}' requires an argument`);
      opts.push({ name: o.long, value: v });
      continue;
    }
    if (a.startsWith('-') && a.length > 1) {
      for (let j = 1; j < a.length; j++) {
        const c = a[j] as string;
        const o = byShort.get(c);
        if (o === undefined)
          throw new UsageError(
            `invalid option -- '${c}'`,
            'try "dbsmack pgbench --help" for more information',
          );
        if (!o.arg) {
          opts.push({ name: o.long, value: true });
          continue;
        }
        const v = j + 1 < a.length ? a.slice(j + 1) : argv[++i];
        if (v === undefined) throw new UsageError(`option requires an argument -- '${c}'`);
        opts.push({ name: o.long, value: v });
        break;
      }
      continue;
    }
    positional.push(a);
  }
  return { opts, positional };
}

/** pgbench's option_parse_int. */
function intOpt(v: string, name: string, min: number, max = 2147483647): number {
  const t = v.trim();
  if (!/^[+-]?\d+$/.test(t)) throw new UsageError(`invalid value "${v}" for option ${name}`);
  const n = Number(t);
  if (n < min || n > max) throw new UsageError(`${name} must be in range ${min}..${max}`);
  return n;
}

/** C's atof on an option: the leading number, 0 when there is none. */
function atof(v: string): number {
  const m = /^\s*[+-]?(\d+\.?\d*(e[+-]?\d+)?|\.\d+(e[+-]?\d+)?)/i.exec(v);
  return m === null ? 0 : Number(m[0]);
}

const USAGE = `dbsmack pgbench runs pgbench's benchmarks: its built-in scripts and your script files, with its options.

Usage:
  dbsmack pgbench [OPTION]... [DBNAME]

Initialization options:
  -i, --initialize         create and fill the pgbench tables
  -I, --init-steps=[dtgGvpf]+ (default "dtgvp")
                           d: drop, t: create tables, g: generate data client-side,
                           G: generate data server-side, v: vacuum, p: primary keys, f: foreign keys
  -F, --fillfactor=NUM     fill factor of the tables
  -n, --no-vacuum          no vacuum step
  -q, --quiet              a progress line every 5 seconds
  -s, --scale=NUM          scaling factor (100000 accounts each)
  --foreign-keys           foreign keys between the tables
  --index-tablespace=TS, --tablespace=TS, --unlogged-tables
  --partition-method=(range|hash), --partitions=NUM   partition pgbench_accounts (PostgreSQL)

Options to select what to run:
  -b, --builtin=NAME[@W]   built-in script NAME at weight W (-b list lists them)
  -f, --file=FILENAME[@W]  script file at weight W
  -N, --skip-some-updates  -b simple-update
  -S, --select-only        -b select-only

Benchmarking options:
  -c, --client=NUM         concurrent clients (default 1)
  -C, --connect            a new connection for every transaction
  -D, --define=VARNAME=VALUE
                           a variable for the scripts
  -j, --jobs=NUM           threads (dbsmack's load workers; default 1; -j 2 for 8 or more
                           PostgreSQL clients: one, with the native I/O core's shared thread)
  -L, --latency-limit=NUM  count transactions that last more than NUM ms as late
  -M, --protocol=simple|extended|prepared
                           how queries are sent (default simple)
  -n, --no-vacuum          do not vacuum (and empty pgbench_history) before the run
  -P, --progress=NUM       a progress line every NUM seconds
  -r, --report-per-command per-command latencies, failures and retries
  -R, --rate=NUM           target rate in transactions per second
  -s, --scale=NUM          the scaling factor to report (and :scale of script files)
  -t, --transactions=NUM   transactions per client (default 10)
  -T, --time=NUM           run for NUM seconds
  -v, --vacuum-all         vacuum all four tables before the run
  --exit-on-abort          stop the run when a client is aborted
  --failures-detailed      serialization and deadlock failures apart
  --max-tries=NUM          tries of a transaction on serialization or deadlock errors (default 1)
  --progress-timestamp     Unix time in progress lines
  --random-seed=SEED       seed of the random functions ("time", "rand" or an integer)
  --show-script=NAME       print a built-in script and exit
  --verbose-errors         accepted; dbsmack prints every abort

Common options:
  -d, --dbname=DBNAME      database (also the last argument; default $PGDATABASE, $PGUSER, your user)
  -h, --host=HOSTNAME      server host or socket directory ($PGHOST)
  -p, --port=PORT          port ($PGPORT)
  -U, --username=USERNAME  user ($PGUSER; the password comes from $PGPASSWORD)
  -V, --version, -?, --help

dbsmack's own:
  --db URL                 the target as a dbsmack URL instead (mysql://…, mariadb://…, sqlite:FILE)
  --format pgbench|text|json   what to print (default pgbench)
  -o, --out FILE           also write the RunResult JSON
  --label NAME, --history PATH, --no-history, --connect-timeout S, --allow-shell (\\shell, \\setshell)

Not supported: -l/--log, --log-prefix, --aggregate-interval, --sampling-rate (per-transaction log files).
`;

/** The connection target from -h -p -U DBNAME and the PG* variables, as libpq resolves them. */
function pgTarget(
  host: string | undefined,
  port: string | undefined,
  user: string | undefined,
  db: string | undefined,
): Target {
  const env = { ...process.env };
  // libpq's default is the Unix socket directory, not localhost
  if (host === undefined && env.PGHOST === undefined && existsSync('/var/run/postgresql'))
    env.PGHOST = '/var/run/postgresql';
  let dbName = db;
  if (dbName === undefined) dbName = env.PGDATABASE || env.PGUSER || env.USER || os.userInfo().username;
  const enc = encodeURIComponent;
  const auth = user !== undefined ? `${enc(user)}@` : '';
  const hostPart = host !== undefined && !host.startsWith('/') ? host : '';
  const portPart = port !== undefined ? `:${port}` : '';
  const q = host?.startsWith('/') ? `?host=${enc(host)}` : '';
  return parseTarget(`postgres://${auth}${hostPart}${portPart}/${enc(dbName)}${q}`, env);
}

/**
 * `dbsmack pgbench ARGS`: pgbench's information options, `-i` (the tables made), or the benchmark; its exit
 * code.
 */
export async function pgbenchCommand(argv: readonly string[]): Promise<number> {
  const { opts, positional } = parsePgbenchArgs(argv);
  const a = new PgbenchOptions(opts);
  const { has, last } = a;
  if (printInformation(a)) return EXIT.ok;
  for (const n of ['log', 'log-prefix', 'aggregate-interval', 'sampling-rate']) {
    if (has(n)) {
      throw new UsageError(
        `--${n} is not supported by dbsmack pgbench`,
        'dbsmack keeps latencies in histograms, not per-transaction log files: use -o FILE for the RunResult JSON',
      );
    }
  }
  const init = has('initialize');
  let dbName = last('dbname');
  if (dbName === undefined && positional.length > 0) dbName = positional.shift();
  if (positional.length > 0) {
    throw new UsageError(
      `too many command-line arguments (first is "${positional[0]}")`,
      'try "dbsmack pgbench --help"',
    );
  }
  const dbUrl = last('db');
  const target =
    dbUrl !== undefined ? parseTarget(dbUrl) : pgTarget(last('host'), last('port'), last('username'), dbName);
  const connectTimeout = last('connect-timeout') !== undefined ? Number(last('connect-timeout')) : 10;
  const scaleGiven = last('scale');
  const scale = scaleGiven !== undefined ? intOpt(scaleGiven, '-s/--scale', 1) : 0;
  if (init) return initTables(a, target, connectTimeout, scale);
  if (a.anyOf('init')) {
    throw new UsageError('some of the specified options cannot be used in benchmarking mode');
  }
  return runBench(a, target, benchSettings(a, target, connectTimeout, scale));
}

/**
 * The parsed options of one pgbench command line, asked by long name (the last value wins, as in pgbench).
 * Its readers are bound, so that `const { has, last } = options` reads like pgbench's own option handling.
 */
export class PgbenchOptions {
  constructor(
    /** The options in the order given. */
    readonly list: PgbenchArgs['opts'],
  ) {}

  /** Whether the option was given. */
  readonly has = (n: string): boolean => this.list.some((o) => o.name === n);

  /** The option's last value ('true' for a flag), or undefined. */
  readonly last = (n: string): string | undefined => {
    const v = this.list.filter((o) => o.name === n).pop()?.value;
    return v === undefined ? undefined : v === true ? 'true' : v;
  };

  /** Every value of a repeated option, in order. */
  readonly all = (n: string): string[] => this.list.filter((o) => o.name === n).map((o) => String(o.value));

  /** Whether an option that belongs to `mode` alone was given (pgbench refuses to mix the modes). */
  anyOf(mode: 'init' | 'bench'): boolean {
    return this.list.some((o) => OPTS.find((d) => d.long === o.name)?.mode === mode);
  }
}

/**
 * `--help`, `--version`, `--show-script NAME` and `-b list`: printed, as pgbench prints them; returns
 * whether one of them was asked.
 */
function printInformation(a: PgbenchOptions): boolean {
  if (a.has('help')) {
    process.stdout.write(USAGE);
    return true;
  }
  if (a.has('version')) {
    process.stdout.write(`pgbench (dbsmack ${VERSION})\n`);
    return true;
  }
  const show = a.last('show-script');
  if (show !== undefined) {
    const b = findBuiltin(show);
    if ('error' in b) throw new UsageError(b.error);
    process.stderr.write(`-- ${b.name}: ${b.desc}\n${b.script('postgres')}\n`);
    return true;
  }
  if (a.all('builtin').includes('list')) {
    process.stderr.write(
      `Available builtin scripts:\n${BUILTIN_SCRIPTS.map((b) => `  ${b.name.padStart(13)}: ${b.desc}`).join('\n')}\n\n`,
    );
    return true;
  }
  return false;
}

/** `pgbench -i`: its tables made as the init options say; the exit code. */
async function initTables(
  a: PgbenchOptions,
  target: Target,
  connectTimeout: number,
  scale: number,
): Promise<number> {
  const { has, last } = a;
  if (a.anyOf('bench')) {
    throw new UsageError('some of the specified options cannot be used in initialization (-i) mode');
  }
  const partitions =
    last('partitions') !== undefined ? intOpt(last('partitions') as string, '--partitions', 0) : 0;
  const method = last('partition-method');
  if (method !== undefined && !['range', 'hash'].includes(method.toLowerCase())) {
    throw new UsageError(`invalid partition method, expecting "range" or "hash", got: "${method}"`);
  }
  if (method !== undefined && partitions === 0)
    throw new UsageError('--partition-method requires greater than zero --partitions');
  let steps = last('init-steps') ?? 'dtgvp';
  if (has('no-vacuum')) steps = steps.replace(/v/g, ' ');
  const raw: Record<string, unknown> = {
    init_steps: steps,
    scale,
    fillfactor:
      last('fillfactor') !== undefined
        ? intOpt(last('fillfactor') as string, '-F/--fillfactor', 10, 100)
        : 100,
    foreign_keys: has('foreign-keys'),
    partitions,
    partition_method: (method ?? 'range').toLowerCase(),
    unlogged_tables: has('unlogged-tables'),
    tablespace: last('tablespace') ?? '',
    index_tablespace: last('index-tablespace') ?? '',
    quiet: has('quiet'),
  };
  const o = initOptionsFrom(raw);
  await withAdminContext(target, raw, 1, connectTimeout * 1000, say, (ctx) => initialize(ctx, o)).catch(
    (e: unknown) => adminError(e, target, { action: 'pgbench -i' }),
  );
  return EXIT.ok;
}

/** A benchmark as pgbench's options describe it: the workload's options, the run's, and how to print it. */
interface BenchSettings {
  rawOptions: Record<string, string | boolean>;
  ro: RunOptions;
  render: RunRenderer;
  /** -T: a duration (else -t transactions per client). */
  duration: number | undefined;
  /** -P seconds, 0 without. */
  progress: number;
  maxTries: number;
}

/**
 * The load threads (workers) for pgbench's `-j`: one per job, at most one per client; SQLite's driver blocks
 * its thread, so each of its clients gets a worker of its own whatever -j says. `-j 2` with
 * SHARED_IO_MIN_CLIENTS clients or more on PostgreSQL over the native I/O core is one load thread whose core
 * runs every second connection's statement batches on its shared I/O thread (design 4, as `run` does by
 * default there: capacity.ts `defaultWorkers`): two threads making the system calls, as pgbench's two, with
 * one V8 isolate to start and to compile for. Measured against two load threads (bench/peers --time 8
 * --clients 32,16 --repeat 3 --only pgbench --variant "" --variant="--workers 1", 2026-12-05): `dbsmack
 * pgbench -S -M prepared` at 32 clients 1.04 of their queries a second at 15.6 against 16.9 µs of CPU a query
 * after start-up (whole process 1.10 against 1.24 of pgbench's), at 16 clients 1.00 at 15.0 against 15.6;
 * the row whose variants were the same run (the TypeScript module, one load thread either way) 0.98-1.00,
 * its CPU within 4%. From 8 clients since 2026-12-06 (native-core.ts SHARED_IO_MIN_CLIENTS); below, two
 * load threads.
 */
export function pgbenchWorkers(jobs: number, clients: number, target: Target): number {
  if (target.driver === 'sqlite') return clients;
  if (jobs === 2 && clients >= SHARED_IO_MIN_CLIENTS && sharedIoOf(target)) return 1;
  return Math.min(jobs, clients);
}

/** The benchmarking options mapped, and checked as pgbench checks them. */
export function benchSettings(
  a: PgbenchOptions,
  target: Target,
  connectTimeout: number,
  scale: number,
): BenchSettings {
  const { has, last, all } = a;
  const opts = a.list;
  const builtins = [
    ...opts.filter((o) => ['builtin', 'select-only', 'skip-some-updates'].includes(o.name)),
  ].map((o) =>
    o.name === 'select-only'
      ? 'select-only'
      : o.name === 'skip-some-updates'
        ? 'simple-update'
        : String(o.value),
  );
  // -f and -b keep pgbench's order among themselves; files first in dbsmack's script numbering when both are given
  const files = all('file');
  const clients = last('client') !== undefined ? intOpt(last('client') as string, '-c/--clients', 1) : 1;
  const jobs = last('jobs') !== undefined ? intOpt(last('jobs') as string, '-j/--jobs', 1) : 1;
  const tx =
    last('transactions') !== undefined
      ? intOpt(last('transactions') as string, '-t/--transactions', 1)
      : undefined;
  const duration = last('time') !== undefined ? intOpt(last('time') as string, '-T/--time', 1) : undefined;
  if (tx !== undefined && duration !== undefined) {
    throw new UsageError('specify either a number of transactions (-t) or a duration (-T), not both');
  }
  const progress =
    last('progress') !== undefined ? intOpt(last('progress') as string, '-P/--progress', 1) : 0;
  if (has('progress-timestamp') && progress === 0)
    throw new UsageError('--progress-timestamp is allowed only under --progress');
  const protocol = last('protocol') ?? 'simple';
  if (!['simple', 'extended', 'prepared'].includes(protocol))
    throw new UsageError(`invalid query mode (-M): "${protocol}"`);
  let maxTries = 1;
  const mt = last('max-tries');
  if (mt !== undefined) {
    const n = Number.parseInt(mt, 10);
    if (!(n >= 0)) throw new UsageError(`invalid number of maximum tries: "${mt}"`);
    maxTries = n;
  }
  const latencyLimit = last('latency-limit') !== undefined ? atof(last('latency-limit') as string) : 0;
  if (last('latency-limit') !== undefined && latencyLimit <= 0) {
    throw new UsageError(`invalid latency limit: "${last('latency-limit')}"`);
  }
  if (maxTries === 0 && latencyLimit === 0 && duration === undefined) {
    throw new UsageError(
      'an unlimited number of transaction tries can only be used with --latency-limit or a duration (-T)',
    );
  }
  const rate = last('rate') !== undefined ? atof(last('rate') as string) : 0;
  if (last('rate') !== undefined && rate <= 0) throw new UsageError(`invalid rate limit: "${last('rate')}"`);
  const defines = all('define');
  for (const d of defines) {
    const eq = d.indexOf('=');
    if (eq <= 0 || eq === d.length - 1) throw new UsageError(`invalid variable definition: "${d}"`);
  }
  let randomSeed = last('random-seed') ?? process.env.PGBENCH_RANDOM_SEED ?? '';
  if (randomSeed === 'rand') randomSeed = String(crypto.getRandomValues(new BigUint64Array(1))[0]);
  const format = last('format') ?? 'pgbench';
  const render = format === 'pgbench' ? renderPgbench : getFormat(format);
  if (render === undefined)
    throw new UsageError(`unknown format '${format}'`, 'formats: pgbench, text, json');

  const rawOptions: Record<string, string | boolean> = {
    protocol,
    vacuum: has('no-vacuum') ? 'off' : has('vacuum-all') ? 'all' : 'on',
  };
  if (builtins.length > 0) rawOptions.builtin = JSON.stringify(builtins);
  if (files.length > 0) rawOptions.file = JSON.stringify(files);
  if (defines.length > 0) rawOptions.define = JSON.stringify(defines);
  if (scale > 0) rawOptions.scale = String(scale);
  if (randomSeed !== '' && randomSeed !== 'time') rawOptions.random_seed = randomSeed;
  if (has('report-per-command') || has('report-latencies')) rawOptions.per_command = true;
  if (has('connect')) rawOptions.connect = true;
  if (has('failures-detailed')) rawOptions.failures_detailed = true;
  if (has('allow-shell')) rawOptions.allow_shell = true;
  if (has('exit-on-abort')) rawOptions.exit_on_abort = true;
  if (latencyLimit > 0) rawOptions.latency_limit = String(latencyLimit);
  if (progress > 0) rawOptions.progress = String(progress);
  rawOptions.jobs = String(jobs);
  const ro: RunOptions = {
    db: target.redactedUrl,
    dbGiven: true,
    connectTimeout,
    clients,
    ...(duration !== undefined ? { time: duration } : { rounds: tx ?? 10 }),
    warmup: 0,
    reportInterval: progress > 0 ? progress : 1,
    maxTries: maxTries === 0 ? UNLIMITED_TRIES : maxTries,
    reconnectTimeout: 0,
    workers: pgbenchWorkers(jobs, clients, target),
    format,
    ...(last('out') !== undefined ? { out: last('out') as string } : {}),
    ...(last('label') !== undefined ? { label: last('label') as string } : {}),
    history: has('no-history') ? false : last('history'),
    ...(rate > 0
      ? {
          rate: {
            perSec: rate,
            shape: 'poisson',
            maxLagUs: Number.POSITIVE_INFINITY,
            lateUs: latencyLimit * 1000 || 1e12,
            // pgbench skips a transaction whose turn comes more than -L after its schedule
            ...(latencyLimit > 0 ? { skipLateUs: latencyLimit * 1000 } : {}),
          },
        }
      : {}),
  } as RunOptions;
  return { rawOptions, ro, render, duration, progress, maxTries };
}

/** The benchmark run through the run layer, pgbench's progress lines on stderr, its report on stdout. */
async function runBench(a: PgbenchOptions, target: Target, b: BenchSettings): Promise<number> {
  const { has, last } = a;
  const { rawOptions, ro, render, duration, progress, maxTries } = b;
  const connectTimeout = ro.connectTimeout;
  const ref: WorkloadRef = { ref: 'pgbench', rawOptions, args: [] };
  const workload = await loadWorkload(ref);
  const options = parseWorkloadOptions('pgbench', PGBENCH_OPTIONS, rawOptions);
  const plan = planFrom(ro, target, { workload, ref, options });
  if (duration === undefined) plan.timeS = undefined;
  const controller = new RunController();
  const uninstall = installSignals(() => controller.stop());
  const timestamps = has('progress-timestamp');
  const rateLine = plan.rate !== undefined ? { skips: plan.rate.skipLateUs !== undefined } : undefined;
  let result: RunResult | undefined;
  try {
    result = await runPlanned(
      {
        plan,
        workload,
        options,
        workers: ro.workers as number,
        onInterval: (p: IntervalPoint) => {
          if (progress > 0 && p.dur >= progress - 1e-6) {
            let line = pgbenchProgressLine(p, maxTries, rateLine);
            if (timestamps)
              line = line.replace(/^progress: [^,]*,/, `progress: ${(Date.now() / 1000).toFixed(3)} s,`);
            process.stderr.write(`${line}\n`);
          }
        },
        log: (m: string) => say(redactSecrets(m)),
        controller,
        ...(last('label') !== undefined ? { label: last('label') as string } : {}),
        serverInfo: { connectTimeoutS: connectTimeout },
      },
      'pgbench',
    );
  } finally {
    uninstall();
  }
  if (result === undefined) {
    say('dbsmack: interrupted before the run started; nothing was measured');
    return EXIT.interrupted;
  }
  emitResult(result, ro, render, { workload });
  if (result.status !== 'complete') {
    say(
      `dbsmack: error: Run was aborted; the above results are incomplete.${result.status_reason ? ` (${result.status_reason})` : ''}`,
    );
  }
  recordRun(result, { history: ro.history, quiet: true });
  return exitCodeFor(result, controller.interrupted);
}

/**
 * Define `pgbench` on the program (its arguments are parsed here, not by commander); its action hands its
 * exit code to `exit`.
 */
export function registerPgbench(program: Command, exit: ExitSink): void {
  program
    .command('pgbench')
    .description(
      "pgbench's command line: -i to make its tables, else run its scripts (see dbsmack pgbench --help)",
    )
    .helpOption(false)
    .allowUnknownOption()
    .allowExcessArguments()
    .argument('[args...]', 'pgbench options and the database name')
    .action(async (_args, _o, cmd) => exit(await pgbenchCommand(cmd.args)));
}
