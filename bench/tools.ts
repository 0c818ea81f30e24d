/**
 * What the bench scripts share: a command timed by the kernel's accounting, sysbench's point-select run,
 * and SQL through the servers' own command-line clients (mysql, psql) for set-up checks.
 */
import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseTarget } from '../src/driver/url.ts';
import { clockTicks, parseStat, statField } from '../src/probe/proc-tasks.ts';
import { sysbenchDbArgs } from '../test/helpers/sysbench.ts';
import { startSampling, steadyUs, stopSampling, sysbenchSeconds } from './steady.ts';

type Target = ReturnType<typeof parseTarget>;

/** dbsmack's command, as a user runs it. */
export const DBSMACK_BIN = path.join(path.resolve(import.meta.dirname, '..'), 'bin', 'dbsmack.js');

/**
 * The arguments of `node` for `dbsmack run WORKLOAD --db URL EXTRA… --threads N --time S --format json`
 * (sysbench's option names, so that one line reads as the peer's).
 */
export function dbsmackRunArgs(
  workload: string,
  url: string,
  threads: number,
  time: number,
  extra: string[] = [],
): string[] {
  return [
    DBSMACK_BIN,
    'run',
    workload,
    '--db',
    url,
    ...extra,
    '--threads',
    String(threads),
    '--time',
    String(time),
    '--format',
    'json',
  ];
}

/** One peer or dbsmack run: what the tool reported and what the kernel charged its process. */
export interface Sample {
  qps: number;
  queries: number;
  cpuS: number;
  /** CPU µs a query over the run's steady seconds (steady.ts), when asked for and the run long enough. */
  steadyUs?: number;
}

/**
 * Run a command under /usr/bin/time and return its output and CPU seconds (user + system, children too);
 * `sampled`: its CPU sampled while it runs too (steady.ts), as [seconds since the start, CPU seconds].
 */
export function timed(
  cmd: string,
  args: string[],
  env: NodeJS.ProcessEnv = process.env,
  sampled = false,
): { stdout: string; stderr: string; cpuS: number; series: [number, number][] } {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'dbsmack-bench-'));
  const tfile = path.join(dir, 'time');
  try {
    if (sampled) startSampling();
    const r = spawnSync('/usr/bin/time', ['-f', '%U %S', '-o', tfile, cmd, ...args], {
      encoding: 'utf8',
      maxBuffer: 64 * 1024 * 1024,
      env,
    });
    const series = sampled ? stopSampling() : [];
    if (r.status !== 0)
      throw new Error(`${cmd} ${args.join(' ')} failed (${r.status}):\n${r.stdout}${r.stderr}`);
    const [u, s] = readFileSync(tfile, 'utf8').trim().split('\n').pop()?.split(' ').map(Number) ?? [];
    return { stdout: r.stdout, stderr: r.stderr, cpuS: (u ?? 0) + (s ?? 0), series };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** The number the first group of `re` finds in `text`, or an error naming `what`. */
export function must(re: RegExp, text: string, what: string): number {
  const m = re.exec(text);
  if (!m) throw new Error(`no ${what} in:\n${text}`);
  return Number(m[1]);
}

/** `sysbench oltp_point_select run` on sbtest1 (`size` rows) with `n` threads for `time` seconds. */
/**
 * sysbench's `workload` (oltp_point_select, oltp_read_only, …) on sbtest1 with `n` threads; `steady`: with
 * its per-second report, and the steady state's CPU a query (steady.ts) of a timed run.
 */
export function sysbenchRun(
  workload: string,
  url: string,
  n: number,
  size: number,
  time: number,
  events?: number,
  steady = false,
): Sample {
  const args = [workload, ...sysbenchDbArgs(parseTarget(url)), '--tables=1', `--table-size=${size}`];
  // `events`: stop after that many events in all, with no time limit (a run that measures start-up)
  const limit = events === undefined ? [`--time=${time}`] : [`--events=${events}`, '--time=0'];
  const sample = steady && events === undefined;
  const report = sample ? ['--report-interval=1'] : [];
  const r = timed('sysbench', [...args, `--threads=${n}`, ...limit, ...report, 'run'], process.env, sample);
  return {
    queries: must(/^\s+queries:\s+(\d+)/m, r.stdout, 'queries'),
    qps: must(/^\s+queries:\s+\d+\s+\(([\d.]+) per sec\.\)/m, r.stdout, 'qps'),
    cpuS: r.cpuS,
    ...(sample ? { steadyUs: steadyUs(r.series, sysbenchSeconds(r.stdout), time) } : {}),
  };
}

/** psql/pgbench connection options of a target. */
export function pgConn(t: Target): string[] {
  return ['-h', t.host ?? '127.0.0.1', '-p', String(t.port ?? 5432), '-U', t.user ?? 'root'];
}

/**
 * One SQL statement through `mysql -N -e` or `psql -At -c`, in database `db` (none for MySQL when empty);
 * its output trimmed, or an error with the client's message.
 */
export function cliSql(t: Target, sql: string, db: string): string {
  const r =
    t.driver === 'mysql'
      ? spawnSync(
          'mysql',
          [
            '-h',
            t.host ?? '127.0.0.1',
            '-P',
            String(t.port ?? 3306),
            '-u',
            t.user ?? 'root',
            '-N',
            ...(db ? [db] : []),
            '-e',
            sql,
          ],
          { encoding: 'utf8', env: { ...process.env, MYSQL_PWD: t.password ?? '' } },
        )
      : spawnSync('psql', [...pgConn(t), '-At', '-c', sql, db], { encoding: 'utf8' });
  if (r.status !== 0)
    throw new Error(`${t.driver === 'mysql' ? 'mysql' : 'psql'}: "${sql}" failed: ${r.stderr}`);
  return r.stdout.trim();
}

/** Rows of `table` in the target's database, or -1 when it cannot be counted (missing table). */
export function countRows(t: Target, table: string): number {
  try {
    return Number(cliSql(t, `SELECT COUNT(*) FROM ${table}`, t.database ?? 'test'));
  } catch {
    return -1;
  }
}

/** Create the target's database when it is missing (through the mysql/psql clients). */
export function ensureDatabase(t: Target): void {
  const db = t.database;
  if (!db || !/^\w+$/.test(db))
    throw new Error(`${t.redactedUrl}: name a database of plain letters, digits and _`);
  if (t.driver === 'mysql') cliSql(t, `CREATE DATABASE IF NOT EXISTS \`${db}\``, '');
  else if (cliSql(t, `SELECT 1 FROM pg_database WHERE datname = '${db}'`, 'postgres') !== '1') {
    cliSql(t, `CREATE DATABASE "${db}"`, 'postgres');
  }
}

/**
 * Make sbtest1 with `size` rows through sysbench (cleanup, prepare) unless it is already there, and on
 * PostgreSQL give it the planner's statistics (ANALYZE, also when it was there), as autovacuum would within a
 * minute of the prepare: sysbench's prepare does not analyze, and autovacuum is off on the machines these
 * scripts were measured on, so the table never had statistics. Measured (2026-12-05, `oltp_read_only`, 8
 * clients, 100,000 rows, on a table prepared hours before and read all day): without statistics sysbench
 * 33.4-33.6k queries a second against dbsmack's 24.6-25.8k, the server's CPU the same; after ANALYZE 28.0k
 * both (and bench/peers 1.01 and 1.11 at 8 and 32 clients). Not explained: on a table just prepared, without
 * statistics too, the two were level (sysbench 23.5-26.0k, dbsmack 23.1-25.8k), with the parameters'
 * types declared as sysbench declares them (OltpClient) and without.
 */
export function ensureSbtest(t: Target, size: number): void {
  ensureDatabase(t);
  if (countRows(t, 'sbtest1') !== size) {
    console.error(`preparing sbtest1 (${size} rows) in ${t.redactedUrl}`);
    const base = ['oltp_point_select', ...sysbenchDbArgs(t), '--tables=1', `--table-size=${size}`];
    spawnSync('sysbench', [...base, 'cleanup'], { encoding: 'utf8' });
    const r = spawnSync('sysbench', [...base, 'prepare'], { encoding: 'utf8' });
    if (r.status !== 0) throw new Error(`sysbench prepare failed:\n${r.stdout}${r.stderr}`);
  }
  if (t.driver === 'postgres') cliSql(t, 'ANALYZE sbtest1', t.database ?? 'test');
}

/**
 * CPU seconds the local server has used so far, by the kernel's accounting, or undefined when its process
 * is not on this machine. MariaDB/MySQL: the mariadbd (mysqld) process. PostgreSQL: the postmaster, the
 * backends it has reaped (its children's time, stat fields 16 and 17) and those alive now, so that a backend
 * that started and ended within a run is counted; sample after the run's clients have gone (their backends
 * reaped). One pass over /proc: each process's stat is read once.
 */
export function serverCpuS(driver: string): number | undefined {
  const procs: { pid: number; comm: string; fields: string[] }[] = [];
  for (const d of readdirSync('/proc')) {
    if (!/^\d+$/.test(d)) continue;
    try {
      procs.push({ pid: Number(d), ...parseStat(readFileSync(`/proc/${d}/stat`, 'utf8')) });
    } catch {
      // exited while we looked
    }
  }
  const ticks = (f: string[], ...n: number[]): number => n.reduce((s, i) => s + statField(f, i), 0);
  const tick = clockTicks();
  if (driver === 'mysql') {
    const p = procs.find((x) => x.comm === 'mariadbd' || x.comm === 'mysqld');
    return p ? ticks(p.fields, 14, 15) / tick : undefined;
  }
  if (driver === 'postgres') {
    const pg = new Set(procs.filter((x) => x.comm === 'postgres').map((x) => x.pid));
    const master = procs.find((x) => x.comm === 'postgres' && !pg.has(statField(x.fields, 4)));
    if (!master) return undefined;
    let s = ticks(master.fields, 14, 15, 16, 17);
    for (const x of procs) if (statField(x.fields, 4) === master.pid) s += ticks(x.fields, 14, 15);
    return s / tick;
  }
  return undefined;
}

/**
 * How many times the local MariaDB/MySQL server's threads have gone to sleep so far (voluntary context
 * switches, summed over /proc/PID/task/N/status), or undefined elsewhere. Per query it says how often a
 * server thread found no next statement waiting when it looked for one: near 0 under sysbench, whose client
 * thread preempts the server thread it wakes and sends before the server reads, 0.6-0.9 under a client that
 * answers many connections from one thread (docs/performance.md). PostgreSQL's backends are processes that
 * leave with their clients, their counts with them: not counted.
 */
export function serverSleeps(driver: string): number | undefined {
  if (driver !== 'mysql') return undefined;
  for (const d of readdirSync('/proc')) {
    if (!/^\d+$/.test(d)) continue;
    let comm: string;
    try {
      comm = readFileSync(`/proc/${d}/comm`, 'utf8').trim();
    } catch {
      continue;
    }
    if (comm !== 'mariadbd' && comm !== 'mysqld') continue;
    let n = 0;
    for (const t of readdirSync(`/proc/${d}/task`)) {
      try {
        const m = /^voluntary_ctxt_switches:\s+(\d+)/m.exec(
          readFileSync(`/proc/${d}/task/${t}/status`, 'utf8'),
        );
        if (m) n += Number(m[1]);
      } catch {
        // a thread that ended while we looked
      }
    }
    return n;
  }
  return undefined;
}

/**
 * Cross-CPU wake-ups so far, all CPUs: rescheduling and function-call interrupts (/proc/interrupts RES and
 * CAL). On a virtual machine each one sent to a halted CPU is an exit to the hypervisor; per query they tell
 * a run where clients and server threads kept to their CPUs from one where they did not, the main cause of
 * this 2-core guest's bimodal throughput (sysbench included).
 */
export function ipiCount(): number {
  let n = 0;
  try {
    for (const line of readFileSync('/proc/interrupts', 'utf8').split('\n')) {
      const m = /^\s*(RES|CAL):((?:\s+\d+)+)/.exec(line);
      if (m) for (const v of (m[2] as string).trim().split(/\s+/)) n += Number(v);
    }
  } catch {
    return Number.NaN;
  }
  return n;
}

/** The whole machine's CPU so far from /proc/stat's first line, in clock ticks. */
export interface MachineTicks {
  /**
   * user, nice, system, irq and softirq: every task's time (with tick accounting the kernel charges a
   * tick's softirq to the task it interrupted too; a guest's own guests are in user)
   */
  busy: number;
  /** time a virtual CPU was ready but its host ran something else */
  steal: number;
  /** all of it, idle and iowait included */
  total: number;
}

/** /proc/stat's aggregate `cpu` line read into MachineTicks, or undefined when there is none. */
export function machineTicksFrom(stat: string): MachineTicks | undefined {
  const m = /^cpu\s+([\d\s]+)$/m.exec(stat);
  if (!m) return undefined;
  const [user = 0, nice = 0, system = 0, idle = 0, iowait = 0, irq = 0, softirq = 0, steal = 0] = (
    m[1] as string
  )
    .trim()
    .split(/\s+/)
    .map(Number);
  return {
    busy: user + nice + system + irq + softirq,
    steal,
    total: user + nice + system + idle + iowait + irq + softirq + steal,
  };
}

export function machineTicks(): MachineTicks | undefined {
  try {
    return machineTicksFrom(readFileSync('/proc/stat', 'utf8'));
  } catch {
    return undefined;
  }
}

/** Busy share of the machine below which it counts as quiet (bench/peers' `quiet`). */
export const QUIET_SHARE = 0.1;

/**
 * Wait, up to `maxS` seconds, until the machine is quiet: less than QUIET_SHARE of all its CPUs busy over a
 * 0.5 s window. What a run leaves behind (PostgreSQL's checkpointer and autovacuum after writes, InnoDB's
 * purge, backends still exiting) would otherwise run during the next run and take its CPUs from whichever
 * tool comes next. Returns the seconds waited and the busy share of the last window.
 */
export function quiet(maxS = 10): { waitedS: number; share: number } {
  const t0 = performance.now();
  let share = 1;
  for (;;) {
    const a = machineTicks();
    spawnSync('sleep', ['0.5']);
    const b = machineTicks();
    if (a === undefined || b === undefined || b.total === a.total) return { waitedS: 0, share: 0 };
    share = (b.busy - a.busy) / (b.total - a.total);
    const waitedS = (performance.now() - t0) / 1000;
    if (share < QUIET_SHARE || waitedS >= maxS) return { waitedS, share };
  }
}

/** This process's script and its arguments, as the waiting message names it: `bench/peers.ts --clients 8`. */
function thisScript(): string {
  const file = process.argv[1] ?? 'a measuring script';
  const dir = path.basename(path.dirname(file));
  return [`${dir}/${path.basename(file)}`, ...process.argv.slice(2)].join(' ');
}

/** The lock every measuring script of this machine takes (`measuringAlone`), whichever clone it runs from. */
export const MEASURING_LOCK = path.join(os.tmpdir(), 'dbsmack-measuring.lock');

/**
 * Wait until no other measuring script runs on this machine, then hold that until this process ends. Two at
 * once share the CPUs and the servers, and both sets of figures are worthless, with nothing in them to say
 * so but a column of others' CPU (a session started one bench/peers while another was in its last row,
 * 2026-12-08: that row's dbsmack run met 11% of the machine's CPU from elsewhere). The lock is the kernel's
 * (flock(1) holding `lock` while a `cat` reads this process's pipe): it goes when the process does, however
 * it ends, so no stale lock outlives a killed run. Who holds it is in `lock`.who, for the waiting message.
 * Without flock(1) (util-linux), a note and no lock. Returns once the lock is held.
 */
export async function measuringAlone(lock = MEASURING_LOCK, script = thisScript()): Promise<void> {
  const holder = spawn('flock', [lock, 'sh', '-c', 'echo held; exec cat'], {
    stdio: ['pipe', 'pipe', 'inherit'],
  });
  const held = await new Promise<boolean>((resolve) => {
    let told = false;
    const tell = setTimeout(() => {
      told = true;
      let who = 'another measuring script';
      try {
        who = readFileSync(`${lock}.who`, 'utf8').trim() || who;
      } catch {}
      console.error(`# waiting for ${who} to finish (two measuring runs at once spoil both)`);
    }, 300);
    holder.stdout.once('data', () => {
      clearTimeout(tell);
      if (told) console.error('# the other measuring run has finished');
      resolve(true);
    });
    holder.once('error', (e) => {
      clearTimeout(tell);
      console.error(`# flock(1) not found (${e.message}): not guarding against other measuring runs`);
      resolve(false);
    });
    holder.once('exit', (code) => {
      clearTimeout(tell);
      console.error(`# flock(1) on ${lock} ended (${code}): not guarding against other measuring runs`);
      resolve(false);
    });
  });
  // said once, while waiting: a holder that ends with this process (Ctrl-C reaches both) says nothing
  holder.removeAllListeners('exit');
  holder.removeAllListeners('error');
  holder.on('error', () => {});
  if (!held) return;
  try {
    writeFileSync(`${lock}.who`, `${script} (pid ${process.pid}, started ${new Date().toISOString()})\n`);
  } catch {
    // another user's file: the lock holds all the same, the waiting message names no one
  }
  // the pipe to `cat` stays open while this process lives; nothing of it keeps the process alive
  holder.unref();
  (holder.stdin as unknown as { unref(): void }).unref();
  (holder.stdout as unknown as { unref(): void }).unref();
}
