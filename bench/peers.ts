/**
 * dbsmack against its peers on the same server and the same table, alternating A B B A:
 *
 *   - `sysbench oltp_point_select` vs `dbsmack run oltp_point_select` on MariaDB and PostgreSQL
 *   - (`--only mysql-ro,postgres-ro`) `sysbench oltp_read_only` vs `dbsmack run oltp_read_only`: transactions
 *     of 16 statements, each a round trip of its own (dbsmack batches whole transactions on the native core:
 *     ClientHandler.sequence); (`mysql-rw`, `postgres-rw`) the same with `oltp_read_write` (22 statements)
 *   - `pgbench -S -M prepared` vs `dbsmack run ./bench/pgbench-select.ts` on PostgreSQL, and vs
 *     `dbsmack pgbench -S -M prepared` (the same command line: pgbench's own script, run by dbsmack)
 *   - (`--only pgbench-simple`) `pgbench -S -M simple` (pgbench's default mode: text queries) vs `dbsmack
 *     pgbench` with the same command line
 *   - (`--only pgbench-tpcb`, `pgbench-tpcb-simple`) pgbench's default script (TPC-B, seven statements a
 *     transaction) with `-M prepared`, or with pgbench's default `-M simple`, vs `dbsmack pgbench` with the
 *     same command line; their figures are per transaction
 *   - `select1` on SQLite in-process vs a bare better-sqlite3 loop running the same statement
 *
 * For each it prints queries per second, the ratio dbsmack/peer, and the client CPU time per query of each,
 * taken from the kernel's accounting of the child process (/usr/bin/time: user + system of the whole
 * process, start-up included, divided by the queries it reports). For dbsmack it also prints its own CPU
 * per query over the measured part only (RunResult `client_cpu`), which leaves out the ~0.3 s of CPU a
 * Node.js process spends starting, loading modules, connecting and writing its report.
 *
 * The same split for both sides: each round also runs each tool for one event per client (`--events`,
 * `-t 1`), which costs what a run costs besides its queries (starting, connecting, preparing, reporting,
 * exiting). Its CPU is the "start-up" column; the CPU per query of the timed runs with the median start-up
 * taken off is "after start-up", for the peer and for dbsmack alike. What remains in dbsmack's figure and
 * not in the one-event run is mostly V8 compiling the statement loop once it is hot (a few tenths of a
 * second per run, in every run). The whole-process ratio of a run of T seconds is roughly (start-up +
 * T × q/s × µs/q after start-up) of each.
 *
 * And the steady state, alike for both sides (bench/steady.ts): each timed run's process is sampled from
 * /proc every 100 ms while it runs, and its CPU over the tool's seconds 4 to T-1 divided by the queries its
 * own per-second report gives those seconds (sysbench --report-interval=1, pgbench -P 1, dbsmack's
 * intervals) is "steady µs/q" (with --time 6 or more; "-" otherwise, and for SQLite's bare loop). Whole,
 * after start-up and steady together say where a difference lies: in starting, in the first seconds (each
 * thread's code compiled, the server's backends fresh) or in every query.
 *
 * Where the server runs on this machine (127.0.0.1, localhost or a socket), it also prints the server's CPU
 * per query under each client (its processes' accounting, PostgreSQL's exited backends included), and the
 * machine's cross-CPU wake-ups per query (/proc/interrupts RES + CAL). On a small virtual machine these
 * explain most of a ratio: a client that costs more makes the server cost more too, and a run whose threads
 * keep to their CPUs (few wake-ups per query) is much faster than one whose do not, whichever the client.
 * For MariaDB also how often per query the server's threads went to sleep ("server sleeps/q", voluntary
 * context switches): a server thread that finds its next statement already sent does not sleep, one that
 * must wait for it sleeps and is woken again, which costs the server CPU (tools.ts serverSleeps).
 *
 * The script first waits while another measuring script runs on the machine (tools.ts `measuringAlone`), and
 * each timed run starts on a quiet machine: the script waits, up to 10 s, until less than a tenth of its CPUs
 * were busy over half a second (tools.ts `quiet`; what one run leaves behind, PostgreSQL's checkpointer and
 * autovacuum after writes, InnoDB's purge, would run in the next), and a last line says how often it had to
 * wait and whether a run started busy all the same. "others' CPU %" is, for each run, the machine's busy time
 * (/proc/stat) that was neither the tool's nor the server's, as a share of all its CPUs over the run: kernel
 * threads and anything else on the machine; "steal %" the share of its CPUs' time the hypervisor gave to
 * others while they were ready (/proc/stat's steal, where the guest's kernel counts it). A run whose share
 * stands out met company, and its ratio is suspect; this 2-core guest's runs still vary by 10-15% with
 * neither (what its host's other guests take from caches and memory is not seen).
 *
 * Last, whether each difference is real or this machine's noise, as `dbsmack compare` judges a candidate
 * (src/analysis/compare.ts): the rounds' q/s of dbsmack against the peer's, and their CPU per query after
 * start-up, a Mann–Whitney test over the rounds (Welch's on the logarithms where too few rounds let the rank
 * test reach 0.05) and a 95% bootstrap interval of the ratio of medians. `better` or `worse` only when both
 * show it, else `same`: a row at 0.95 whose rounds range 0.85-1.25 is not below its peer. With two rounds
 * only Welch's test can judge, and only runs very close together pass it; four show a difference every
 * round agrees on.
 *
 *   npm run build && node --import tsx bench/peers.ts [--time 8] [--clients 1,8,32] [--repeat 2]
 *        [--only mysql,postgres,pgbench,pgbench-simple,sqlite,mysql-ro,postgres-ro,mysql-rw,postgres-rw,
 *        pgbench-tpcb,pgbench-tpcb-simple] [--mysql URL] [--pg URL] [--table-size 100000]
 *        [--dbsmack-args="--workers 2"] (with "=": the value starts with a dash)
 *        [--variant "VAR=VALUE … --option …"]… (each round runs dbsmack once per variant, under those
 *        environment variables and with those options, in the same round as one peer run: `--variant
 *        DBSMACK_NATIVE_DESIGN=0 --variant DBSMACK_NATIVE_DESIGN=2` compares two native designs, `--variant ""
 *        --variant="--workers 4"` two worker counts (with "=" when the value starts with a dash); a row per
 *        variant, with its ratio to the first; the options go to `dbsmack pgbench` too, where --workers N
 *        becomes -j N)
 *
 * The sbtest1 table (sysbench prepare) and pgbench_accounts (pgbench -i) are made once, when missing or of
 * another size, in the databases of --mysql and --pg (default: dbsmack_perf) and left there for the next run.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { compareSamples } from '../src/analysis/compare.ts';
import { median } from '../src/analysis/stats.ts';
import { parseTarget } from '../src/driver/url.ts';
import { clockTicks } from '../src/probe/proc-tasks.ts';
import { isLocalTarget } from '../src/probe/server-process.ts';
import { benchArgs, namesOf, positiveIn, positivesOf } from './args.ts';
import { machineLine, machineTraits } from './machine.ts';
import { dbsmackSeconds, type IntervalRates, pgbenchSeconds, steadyUs } from './steady.ts';
import {
  countRows,
  DBSMACK_BIN,
  dbsmackRunArgs,
  ensureDatabase,
  ensureSbtest,
  ipiCount,
  machineTicks,
  measuringAlone,
  must,
  type Sample as PeerSample,
  pgConn,
  QUIET_SHARE,
  quiet,
  serverCpuS,
  serverSleeps,
  sysbenchRun,
  timed,
} from './tools.ts';

const ROOT = path.resolve(import.meta.dirname, '..');

const { values } = benchArgs(import.meta.url, {
  options: {
    // 8 s: the steady-state column reads seconds 4 to 7 (it needs 6 or more)
    time: { type: 'string', default: '8' },
    clients: { type: 'string', default: '1,8,32' },
    repeat: { type: 'string', default: '2' },
    only: { type: 'string', default: 'mysql,postgres,pgbench,sqlite' },
    'table-size': { type: 'string', default: '100000' },
    mysql: { type: 'string', default: 'mysql://root@127.0.0.1:3306/dbsmack_perf' },
    pg: { type: 'string', default: 'postgres://root@127.0.0.1:5432/dbsmack_perf' },
    'dbsmack-args': { type: 'string', default: '' },
    'pgbench-jobs': { type: 'string', default: String(os.availableParallelism()) },
    variant: { type: 'string', multiple: true, default: [] },
  },
});

const positive = positiveIn(import.meta.url, values);
const TIME = positive('time');
const SIZE = positive('table-size');
const REPEAT = positive('repeat');
const PGBENCH_JOBS = positive('pgbench-jobs');
const CLIENTS = positivesOf(import.meta.url, 'clients', values.clients as string, true);
const ONLY = namesOf(import.meta.url, 'only', values.only as string, [
  'mysql',
  'postgres',
  'pgbench',
  'sqlite',
  'mysql-ro',
  'postgres-ro',
  'mysql-rw',
  'postgres-rw',
  'pgbench-tpcb',
  'pgbench-tpcb-simple',
  'pgbench-simple',
]);
const EXTRA = (values['dbsmack-args'] as string).split(/\s+/).filter((s) => s !== '');
/**
 * The dbsmack variants of each round: a label, the environment it runs under and options of its own (a word
 * that starts with "-" and the words after it up to the next VAR=VALUE; they follow --dbsmack-args).
 */
interface Variant {
  label: string;
  env: NodeJS.ProcessEnv;
  args: string[];
}
const VARIANTS: Variant[] = (values.variant as string[]).map((v) => {
  const env: NodeJS.ProcessEnv = { ...process.env };
  const args: string[] = [];
  for (const w of v.split(/\s+/).filter((x) => x !== '')) {
    const eq = w.indexOf('=');
    if (w.startsWith('-') || (args.length > 0 && eq <= 0)) args.push(w);
    else if (eq > 0) env[w.slice(0, eq)] = w.slice(eq + 1);
    else
      throw new Error(
        `--variant ${JSON.stringify(v)}: expected VAR=VALUE or an option, got ${JSON.stringify(w)}`,
      );
  }
  return { label: v === '' ? '(none)' : v, env, args };
});
if (VARIANTS.length === 0) VARIANTS.push({ label: '', env: process.env, args: [] });
// one measuring script at a time on this machine (tools.ts)
await measuringAlone();
const TMP = mkdtempSync(path.join(os.tmpdir(), 'dbsmack-peers-'));

/** One measured run; for dbsmack also its own figure. */
interface Sample extends PeerSample {
  /** dbsmack only: its own CPU per query over the measured part (RunResult client_cpu), start-up left out. */
  runUs?: number;
  /** The server's CPU seconds over the run, when it runs on this machine. */
  serverS?: number;
  /** Cross-CPU wake-ups on the machine over the run. */
  ipis?: number;
  /** The local MariaDB server's threads' sleeps over the run (serverSleeps). */
  sleeps?: number;
  /**
   * The machine's CPU over the run that was neither the tool's nor the server's (its /proc/stat busy time
   * less both), as a share of all its CPUs over the run's wall time: other processes, kernel threads.
   */
  othersShare?: number;
  /** The machine's steal time over the run (its CPUs ready while the host ran others), as a share likewise. */
  stealShare?: number;
}

/** Every timed run's wait for a quiet machine (tools.ts `quiet`), for the summary line. */
const quietWaits: { waitedS: number; share: number }[] = [];

/** The server's driver when its processes are on this machine, for serverCpuS. */
function localServer(url: string): string | undefined {
  const t = parseTarget(url);
  return isLocalTarget(t) ? t.driver : undefined;
}

/** Run `fn` and add what the server and the machine spent meanwhile. */
function withMachine(driver: string | undefined, fn: () => Sample): Sample {
  quietWaits.push(quiet());
  const s0 = driver === undefined ? undefined : serverCpuS(driver);
  const z0 = driver === undefined ? undefined : serverSleeps(driver);
  const i0 = ipiCount();
  const m0 = machineTicks();
  const w0 = performance.now();
  const r = fn();
  const wallS = (performance.now() - w0) / 1000;
  const m1 = machineTicks();
  // PostgreSQL's backends exit after their clients: let the postmaster reap them (their time joins its own).
  if (driver === 'postgres') spawnSync('sleep', ['0.3']);
  const s1 = driver === undefined ? undefined : serverCpuS(driver);
  const z1 = driver === undefined ? undefined : serverSleeps(driver);
  const serverS = s0 === undefined || s1 === undefined ? undefined : s1 - s0;
  // the machine's CPU seconds over the run (all its CPUs), of which the shares below are taken
  const machineS = wallS * os.cpus().length;
  const ticks =
    m0 === undefined || m1 === undefined
      ? undefined
      : { busy: m1.busy - m0.busy, steal: m1.steal - m0.steal };
  // with a server of unknown processes (not on this machine) its time would count as others'
  const othersS =
    ticks === undefined || (driver !== undefined && serverS === undefined)
      ? undefined
      : ticks.busy / clockTicks() - r.cpuS - (serverS ?? 0);
  return {
    ...r,
    serverS,
    ipis: ipiCount() - i0,
    ...(z0 === undefined || z1 === undefined ? {} : { sleeps: z1 - z0 }),
    ...(othersS === undefined ? {} : { othersShare: Math.max(0, othersS) / machineS }),
    ...(ticks === undefined ? {} : { stealShare: ticks.steal / clockTicks() / machineS }),
  };
}

/**
 * The command line of pgbench's select-only run with `n` clients, the same for pgbench and `dbsmack pgbench`:
 * for TIME seconds, or (`once`) one transaction per client.
 */
function pgbenchArgs(script: PgbenchScript, n: number, once: boolean): string[] {
  const jobs = Math.min(n, PGBENCH_JOBS);
  const limit = once ? ['-t', '1'] : ['-T', String(TIME)];
  const which = script === 'select' || script === 'select-simple' ? ['-S'] : [];
  const mode = script === 'tpcb-simple' || script === 'select-simple' ? ['-M', 'simple'] : ['-M', 'prepared'];
  return [...which, ...mode, '-n', '-c', String(n), '-j', String(jobs), ...limit];
}

/**
 * pgbench's built-in scripts the pairs run: `-S` (one point select) or its default, TPC-B (seven statements),
 * with `-M prepared`, or with pgbench's default `-M simple` (text queries).
 */
type PgbenchScript = 'select' | 'select-simple' | 'tpcb' | 'tpcb-simple';

/** Its figures count transactions (for -S, one query each). */
function pgbench(url: string, n: number, script: PgbenchScript, once = false): Sample {
  const t = parseTarget(url);
  const args = pgbenchArgs(script, n, once);
  // a timed run reports each second (-P 1, on stderr) for its steady state (steady.ts)
  const report = once ? [] : ['-P', '1'];
  const r = timed('pgbench', [...args, ...report, ...pgConn(t), t.database ?? 'test'], process.env, !once);
  return {
    queries: must(/number of transactions actually processed: (\d+)/, r.stdout, 'transactions'),
    qps: must(/tps = ([\d.]+) \(without initial connection time\)/, r.stdout, 'tps'),
    cpuS: r.cpuS,
    ...(once ? {} : { steadyUs: steadyUs(r.series, pgbenchSeconds(r.stderr), TIME) }),
  };
}

/** A variant's options in pgbench's words: `--workers N` is `-j N` (the last -j counts). */
const inPgbenchWords = (args: string[]): string[] =>
  args.flatMap((a) => (a === '--workers' ? ['-j'] : a.startsWith('--workers=') ? ['-j', a.slice(10)] : [a]));

/**
 * `dbsmack pgbench` with pgbench's own arguments: its built-in script through dbsmack's script runner. Counted
 * per transaction, as pgbench's figures are.
 */
function dbsmackPgbench(url: string, n: number, script: PgbenchScript, v: Variant, once = false): Sample {
  const args = pgbenchArgs(script, n, once);
  const r = timed(
    process.execPath,
    [
      DBSMACK_BIN,
      'pgbench',
      ...args,
      '--db',
      url,
      '--format',
      'json',
      '--no-history',
      ...inPgbenchWords(v.args),
    ],
    v.env,
    !once,
  );
  const res = JSON.parse(r.stdout) as {
    totals: { queries: number; events: number; eps: number };
    client_cpu: { us_per_query: number };
    intervals: IntervalRates[];
  };
  return {
    queries: res.totals.events,
    qps: res.totals.eps,
    cpuS: r.cpuS,
    runUs: (res.client_cpu.us_per_query * res.totals.queries) / Math.max(1, res.totals.events),
    ...(once ? {} : { steadyUs: steadyUs(r.series, dbsmackSeconds(res.intervals, 'eps'), TIME) }),
  };
}

/** `dbsmack run`: for TIME seconds, or (`once`) for one event per client. */
function dbsmack(
  v: Variant,
  workload: string,
  url: string,
  n: number,
  args: string[] = [],
  once = false,
): Sample {
  const limit = once
    ? [...dbsmackRunArgs(workload, url, n, 0, args), '--events', String(n)]
    : dbsmackRunArgs(workload, url, n, TIME, args);
  const r = timed(process.execPath, [...limit, '--no-history', '-q', ...EXTRA, ...v.args], v.env, !once);
  const res = JSON.parse(r.stdout) as {
    totals: { queries: number; qps: number };
    client_cpu: { us_per_query: number };
    intervals: IntervalRates[];
  };
  return {
    queries: res.totals.queries,
    qps: res.totals.qps,
    cpuS: r.cpuS,
    runUs: res.client_cpu.us_per_query,
    ...(once ? {} : { steadyUs: steadyUs(r.series, dbsmackSeconds(res.intervals, 'qps'), TIME) }),
  };
}

/**
 * A bare better-sqlite3 loop: prepare once, then run the statement as the sqlite driver does, for TIME s
 * (`once`: 1,024 statements, the fewest the loop runs between two looks at the clock).
 */
function bareSqlite(file: string, once = false): Sample {
  const script = `
    const Database = require('better-sqlite3');
    const db = new Database(${JSON.stringify(file)});
    const s = db.prepare('SELECT 1'); s.raw(true);
    const end = performance.now() + ${once ? 0 : TIME * 1000};
    let n = 0, t0 = performance.now(), t1;
    for (;;) { s.all().length; n++; if ((n & 1023) === 0 && (t1 = performance.now()) >= end) break; }
    db.close();
    console.log(JSON.stringify({ queries: n, qps: n / ((t1 - t0) / 1000) }));`;
  const r = timed(process.execPath, ['-e', script]);
  const o = JSON.parse(r.stdout) as { queries: number; qps: number };
  return { ...o, cpuS: r.cpuS };
}

// ---- preparing the tables once ---------------------------------------------------------------------

function ensurePgbench(url: string): void {
  const t = parseTarget(url);
  ensureDatabase(t);
  if (countRows(t, 'pgbench_accounts') === 100_000) return;
  console.error(`preparing pgbench tables (scale 1) in ${t.redactedUrl}`);
  const r = spawnSync('pgbench', ['-i', '-s', '1', '-q', ...pgConn(t), t.database ?? 'test'], {
    encoding: 'utf8',
  });
  if (r.status !== 0) throw new Error(`pgbench -i failed:\n${r.stdout}${r.stderr}`);
}

// ---- the comparisons -------------------------------------------------------------------------------

interface Pair {
  name: string;
  peer: string;
  clients: number;
  /** The server's driver when it runs on this machine (then its CPU is measured too). */
  server?: string;
  /** `once`: one event per client, to measure what a run costs besides its queries. */
  runPeer: (once?: boolean) => Sample;
  runDbsmack: (v: Variant, once?: boolean) => Sample;
}

const pairs: Pair[] = [];
const sysbenchArgs = ['--tables', '1', '--table-size', String(SIZE)];
for (const n of CLIENTS) {
  if (ONLY.has('mysql')) {
    const url = values.mysql as string;
    pairs.push({
      name: 'mariadb point_select',
      peer: 'sysbench',
      clients: n,
      server: localServer(url),
      runPeer: (once) => sysbenchRun('oltp_point_select', url, n, SIZE, TIME, once ? n : undefined, true),
      runDbsmack: (v, once) => dbsmack(v, 'oltp_point_select', url, n, sysbenchArgs, once),
    });
  }
  if (ONLY.has('postgres')) {
    const url = values.pg as string;
    pairs.push({
      name: 'postgres point_select',
      peer: 'sysbench',
      clients: n,
      server: localServer(url),
      runPeer: (once) => sysbenchRun('oltp_point_select', url, n, SIZE, TIME, once ? n : undefined, true),
      runDbsmack: (v, once) => dbsmack(v, 'oltp_point_select', url, n, sysbenchArgs, once),
    });
  }
  // transactions: read_only, 16 statements (BEGIN, 10 point selects, 4 ranges, COMMIT), read_write 22 (the
  // same and 2 updates, a DELETE and an INSERT), each statement its own round trip; dbsmack batches whole
  // transactions (ClientHandler.sequence)
  for (const [name, url, workload] of [
    ['mysql-ro', values.mysql, 'oltp_read_only'],
    ['postgres-ro', values.pg, 'oltp_read_only'],
    ['mysql-rw', values.mysql, 'oltp_read_write'],
    ['postgres-rw', values.pg, 'oltp_read_write'],
  ] as const) {
    if (!ONLY.has(name)) continue;
    pairs.push({
      name: `${name.startsWith('mysql') ? 'mariadb' : 'postgres'} ${workload.slice(5)}`,
      peer: 'sysbench',
      clients: n,
      server: localServer(url as string),
      runPeer: (once) => sysbenchRun(workload, url as string, n, SIZE, TIME, once ? n : undefined, true),
      runDbsmack: (v, once) => dbsmack(v, workload, url as string, n, sysbenchArgs, once),
    });
  }
  /** `dbsmack pgbench` against pgbench with the same command line: pgbench's own script through dbsmack's runner. */
  const samePgbench = (name: string, script: PgbenchScript): Pair => {
    const url = values.pg as string;
    return {
      name,
      peer: 'pgbench',
      clients: n,
      server: localServer(url),
      runPeer: (once) => pgbench(url, n, script, once),
      runDbsmack: (v, once) => dbsmackPgbench(url, n, script, v, once),
    };
  };
  if (ONLY.has('pgbench')) {
    const url = values.pg as string;
    pairs.push({
      name: 'postgres pgbench -S',
      peer: 'pgbench',
      clients: n,
      server: localServer(url),
      runPeer: (once) => pgbench(url, n, 'select', once),
      runDbsmack: (v, once) =>
        dbsmack(v, path.join(ROOT, 'bench', 'pgbench-select.ts'), url, n, ['--scale', '1'], once),
    });
    pairs.push(samePgbench('postgres pgbench -S script', 'select'));
  }
  if (ONLY.has('pgbench-simple')) pairs.push(samePgbench('postgres pgbench -S -M simple', 'select-simple'));
  // pgbench's default script (TPC-B): BEGIN, three updates, a select, an insert, END, each its own round trip;
  // figures per transaction
  if (ONLY.has('pgbench-tpcb'))
    pairs.push(samePgbench('postgres pgbench TPC-B -M prepared (per transaction)', 'tpcb'));
  if (ONLY.has('pgbench-tpcb-simple'))
    pairs.push(samePgbench('postgres pgbench TPC-B -M simple (per transaction)', 'tpcb-simple'));
}
if (ONLY.has('sqlite')) {
  const file = path.join(TMP, 'select1.sqlite');
  pairs.push({
    name: 'sqlite select1',
    peer: 'bare better-sqlite3',
    clients: 1,
    runPeer: (once) => bareSqlite(file, once),
    runDbsmack: (v, once) => dbsmack(v, 'select1', `sqlite:${file}`, 1, [], once),
  });
}

if (['mysql', 'mysql-ro', 'mysql-rw'].some((o) => ONLY.has(o)))
  ensureSbtest(parseTarget(values.mysql as string), SIZE);
if (['postgres', 'postgres-ro', 'postgres-rw'].some((o) => ONLY.has(o)))
  ensureSbtest(parseTarget(values.pg as string), SIZE);
if (['pgbench', 'pgbench-simple', 'pgbench-tpcb', 'pgbench-tpcb-simple'].some((o) => ONLY.has(o)))
  ensurePgbench(values.pg as string);

/**
 * One short run of each dbsmack command the pairs use, before any is measured: the first run of a kind
 * compiles its code and keeps V8's cache of it (src/code-cache.ts), which every later run reads; without
 * this the first measured run of each kind would carry that once-only cost.
 */
function warmUp(): void {
  const runs: string[][] = [];
  const short = ['--clients', '2', '--events', '200', '--no-history', '-q', ...EXTRA];
  if (ONLY.has('mysql')) runs.push(['run', 'oltp_point_select', '--db', values.mysql as string, ...short]);
  if (ONLY.has('postgres')) runs.push(['run', 'oltp_point_select', '--db', values.pg as string, ...short]);
  if (ONLY.has('mysql-ro')) runs.push(['run', 'oltp_read_only', '--db', values.mysql as string, ...short]);
  if (ONLY.has('postgres-ro')) runs.push(['run', 'oltp_read_only', '--db', values.pg as string, ...short]);
  if (ONLY.has('mysql-rw')) runs.push(['run', 'oltp_read_write', '--db', values.mysql as string, ...short]);
  if (ONLY.has('postgres-rw')) runs.push(['run', 'oltp_read_write', '--db', values.pg as string, ...short]);
  if (ONLY.has('pgbench')) {
    runs.push(['run', path.join(ROOT, 'bench', 'pgbench-select.ts'), '--db', values.pg as string, ...short]);
    runs.push(['pgbench', '-S', '-M', 'prepared', '-n', '-c', '2', '-t', '100', '--db', values.pg as string]);
  }
  if (ONLY.has('pgbench-tpcb'))
    runs.push(['pgbench', '-M', 'prepared', '-n', '-c', '2', '-t', '100', '--db', values.pg as string]);
  if (ONLY.has('pgbench-tpcb-simple'))
    runs.push(['pgbench', '-n', '-c', '2', '-t', '100', '--db', values.pg as string]);
  if (ONLY.has('pgbench-simple'))
    runs.push(['pgbench', '-S', '-n', '-c', '2', '-t', '100', '--db', values.pg as string]);
  if (ONLY.has('sqlite'))
    runs.push(['run', 'select1', '--db', `sqlite:${path.join(TMP, 'warm.sqlite')}`, ...short]);
  for (const args of runs) {
    const r = spawnSync(process.execPath, [DBSMACK_BIN, ...args], { encoding: 'utf8' });
    if (r.status !== 0) throw new Error(`dbsmack ${args.join(' ')} (warm-up) failed:\n${r.stderr}`);
  }
}
warmUp();

const f0 = (x: number): string => x.toFixed(0);
const f1 = (x: number): string => x.toFixed(1);
const f2 = (x: number): string => x.toFixed(2);
/** Spread of repeated figures as ±% of their median, the noise of this machine. */
const spread = (xs: number[]): string =>
  xs.length < 2 ? '' : `±${f0(((Math.max(...xs) - Math.min(...xs)) / 2 / median(xs)) * 100)}%`;

/**
 * With NODE_EXTRA_CA_CERTS set (some machines set it for every program), Node reads and parses those
 * certificates when it starts, before any of dbsmack's code runs, whether or not anything uses TLS: a cost in
 * every dbsmack run's start-up that no peer written in C pays. Measured here with `node -e 0`, so that the
 * start-up column can be read.
 */
function caCertsCost(): string | undefined {
  const file = process.env.NODE_EXTRA_CA_CERTS;
  if (file === undefined || file === '') return undefined;
  const { NODE_EXTRA_CA_CERTS: _, ...without } = process.env;
  const start = (env: NodeJS.ProcessEnv): number =>
    median([0, 1, 2, 3, 4].map(() => timed(process.execPath, ['-e', '0'], env).cpuS));
  return (
    `# NODE_EXTRA_CA_CERTS=${file}: node -e 0 costs ${f2(start(process.env))} s of CPU with it, ` +
    `${f2(start(without))} s without (part of dbsmack's start-up, not of the peers')`
  );
}

const header = [
  'comparison',
  'clients',
  'peer q/s',
  'dbsmack q/s',
  'ratio',
  'peer µs/q',
  'dbsmack µs/q',
  'cpu ratio',
  'dbsmack µs/q measured part',
  'start-up s peer/dbsmack',
  'µs/q after start-up peer/dbsmack',
  'ratio after start-up',
  'steady µs/q peer/dbsmack',
  'steady ratio',
  'server µs/q peer/dbsmack',
  'wake-ups/q peer/dbsmack',
  'server sleeps/q peer/dbsmack',
  "others' CPU % peer/dbsmack",
  'steal % peer/dbsmack',
  'q/s verdict: ratio of medians [95% interval] p',
  'CPU/q after start-up verdict: ratio of medians [95% interval] p',
  ...(VARIANTS.length > 1 ? ['q/s vs first variant'] : []),
];
console.log(`# dbsmack vs peers: ${TIME} s runs, ${REPEAT} rounds (A B, B A, …), ${SIZE}-row tables`);
console.log(`# load ${os.loadavg().map(f2).join(' ')}`);
console.log(machineLine(machineTraits()));
/**
 * Whether dbsmack's samples differ from the peer's beyond the noise (compareSamples, as `dbsmack compare`):
 * `better`, `worse` or `same`, the ratio of medians, its 95% bootstrap interval and the test's p. For a cost
 * (CPU a query) more is worse, as for a latency.
 */
function verdict(peer: number[], mine: number[], what: 'qps' | 'cost'): string {
  const c = compareSamples(peer, mine, what === 'qps' ? 'qps' : 'p95', 0.05, 1);
  const ci = c.ci_low === null || c.ci_high === null ? '' : ` [${f2(c.ci_low)} ${f2(c.ci_high)}]`;
  return `${c.verdict} ${f2(c.ratio)}${ci} p=${f2(c.p_value)}`;
}

const caNote = caCertsCost();
if (caNote !== undefined) console.log(caNote);
console.log(header.join('\t'));
for (const p of pairs) {
  const peer: Sample[] = [];
  // ours[v][round]: each variant's runs, each in the same round as one peer run.
  const ours: Sample[][] = VARIANTS.map(() => []);
  // the one-event runs, likewise
  const peerOnce: Sample[] = [];
  const oursOnce: Sample[][] = VARIANTS.map(() => []);
  for (let i = 0; i < REPEAT; i++) {
    // A B in even rounds, B A in odd ones: a workload that writes leaves the tables a little larger (and
    // the server's caches and autovacuum in another state) for whichever runs second, and a run right after
    // another meets the machine as that one left it. The variants' order is reversed in odd rounds too.
    const order = VARIANTS.map((_, k) => k);
    const peerFirst = i % 2 === 0;
    if (!peerFirst) order.reverse();
    if (peerFirst) peer.push(withMachine(p.server, () => p.runPeer()));
    for (const k of order) ours[k]?.push(withMachine(p.server, () => p.runDbsmack(VARIANTS[k] as Variant)));
    if (!peerFirst) peer.push(withMachine(p.server, () => p.runPeer()));
    peerOnce.push(p.runPeer(true));
    for (const k of order) oursOnce[k]?.push(p.runDbsmack(VARIANTS[k] as Variant, true));
  }
  const cpu = (s: Sample[]): number => median(s.map((x) => (x.cpuS * 1e6) / x.queries));
  const startS = (s: Sample[]): number => median(s.map((x) => x.cpuS));
  /** Each run's CPU µs per query with the median start-up (the one-event runs') taken off. */
  const afterStartEach = (s: Sample[], once: Sample[]): number[] => {
    const fixed = startS(once);
    return s.map((x) => ((x.cpuS - fixed) * 1e6) / x.queries);
  };
  const peerEach = afterStartEach(peer, peerOnce);
  const peerAfter = median(peerEach);
  const srv = (s: Sample[]): string =>
    s.some((x) => x.serverS === undefined)
      ? '-'
      : f1(median(s.map((x) => ((x.serverS as number) * 1e6) / x.queries)));
  // Each run's own figure, in run order: the wake-ups vary from run to run with the throughput.
  const ipi = (s: Sample[]): string => s.map((x) => f2((x.ipis ?? Number.NaN) / x.queries)).join(' ');
  /** Each run's share of the machine (percent), in run order, or '-' where a run has none. */
  const shares = (s: Sample[], of: (x: Sample) => number | undefined): string =>
    s.some((x) => of(x) === undefined) ? '-' : `[${s.map((x) => f0((of(x) as number) * 100)).join(' ')}]`;
  const sleeps = (s: Sample[]): string =>
    s.some((x) => x.sleeps === undefined) ? '-' : f2(median(s.map((x) => (x.sleeps as number) / x.queries)));
  /** The median of the runs' steady-state CPU a query (steady.ts), when every run has one. */
  const steady = (s: Sample[]): number | undefined => {
    const xs = s.flatMap((x) => (x.steadyUs === undefined ? [] : [x.steadyUs]));
    return xs.length > 0 && xs.length === s.length ? median(xs) : undefined;
  };
  const peerSteady = steady(peer);
  const pq = median(peer.map((s) => s.qps));
  const first = ours[0] ?? [];
  VARIANTS.forEach((v, k) => {
    const mine = ours[k] ?? [];
    const mineOnce = oursOnce[k] ?? [];
    const mineEach = afterStartEach(mine, mineOnce);
    const mineAfter = median(mineEach);
    const mineSteady = steady(mine);
    const ratios = mine.map((s, i) => s.qps / (peer[i] as Sample).qps);
    const vsFirst = k === 0 ? [] : mine.map((s, i) => s.qps / (first[i] as Sample).qps);
    console.log(
      [
        `${p.name} (${p.peer})${v.label === '' ? '' : ` [${v.label}]`}`,
        String(p.clients),
        `${f0(pq)} ${spread(peer.map((s) => s.qps))}`,
        `${f0(median(mine.map((s) => s.qps)))} ${spread(mine.map((s) => s.qps))}`,
        `${f2(median(ratios))} [${ratios.map(f2).join(' ')}]`,
        f1(cpu(peer)),
        f1(cpu(mine)),
        f2(cpu(mine) / cpu(peer)),
        f1(median(mine.map((s) => s.runUs ?? 0))),
        `${f2(startS(peerOnce))} / ${f2(startS(mineOnce))}`,
        `${f1(peerAfter)} / ${f1(mineAfter)}`,
        f2(mineAfter / peerAfter),
        `${peerSteady === undefined ? '-' : f1(peerSteady)} / ${mineSteady === undefined ? '-' : f1(mineSteady)}`,
        peerSteady === undefined || mineSteady === undefined ? '-' : f2(mineSteady / peerSteady),
        `${srv(peer)} / ${srv(mine)}`,
        `[${ipi(peer)}] / [${ipi(mine)}]`,
        `${sleeps(peer)} / ${sleeps(mine)}`,
        `${shares(peer, (x) => x.othersShare)} / ${shares(mine, (x) => x.othersShare)}`,
        `${shares(peer, (x) => x.stealShare)} / ${shares(mine, (x) => x.stealShare)}`,
        verdict(
          peer.map((x) => x.qps),
          mine.map((x) => x.qps),
          'qps',
        ),
        verdict(peerEach, mineEach, 'cost'),
        ...(VARIANTS.length > 1
          ? [k === 0 ? '-' : `${f2(median(vsFirst))} [${vsFirst.map(f2).join(' ')}]`]
          : []),
      ].join('\t'),
    );
  });
}
const waited = quietWaits.filter((q) => q.waitedS >= 1);
const busy = quietWaits.filter((q) => q.share >= QUIET_SHARE);
console.log(
  `# a quiet machine before each timed run (under ${f0(QUIET_SHARE * 100)}% of its CPUs busy over 0.5 s, ` +
    `waited for up to 10 s): ${quietWaits.length} runs, ${waited.length} waited a second or more` +
    (waited.length > 0 ? ` (longest ${f1(Math.max(...waited.map((q) => q.waitedS)))} s)` : '') +
    (busy.length > 0
      ? `; ${busy.length} started on a busy machine (${busy.map((q) => f0(q.share * 100)).join(', ')}% busy)`
      : ''),
);
rmSync(TMP, { recursive: true, force: true });
