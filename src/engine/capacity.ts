/**
 * What the machine offers the load generator, and what a run asks of it: the default number of load
 * workers (`defaultWorkers`) and why a run would not fit (`capacityProblem`), which the run layer's planning
 * (run/plan.ts) asks before a run. Measured figures of a worker's and a client's memory are written beside
 * the constants.
 */
import { closeSync, openSync, readFileSync, readSync } from 'node:fs';
import os from 'node:os';
import {
  SHARED_IO_MIN_CLIENTS,
  SHARED_LOOP_CPU_VENDORS,
  SOLO_IO_MAX_CLIENTS,
  SOLO_IO_READS_MAX_CLIENTS,
} from '../driver/native-core.ts';
import type { RunPlan } from './protocol.ts';

/**
 * Resident memory of one load worker thread: its own V8 isolate, the modules it loads and its heap. Measured
 * with /usr/bin/time (maximum RSS) on Node 20 running select1 on SQLite: 1 client 90 MB, 32 clients in 32
 * workers 564 MB, 64 in 64 workers 1,079 MB, so about 15.3 MB per worker (and 0.26 s of CPU to start one);
 * rounded up here.
 */
export const WORKER_BYTES = 16 * 2 ** 20;

/**
 * Memory of one client beyond its worker's: its connection, statements, random generator and recorder
 * slots. SQLite: 4,000 select1 clients over 4 workers took 786 MB against 161 MB for 4 clients, about
 * 156 KB each (its page cache, up to SQLite's default 2 MB, grows with the pages a workload touches).
 * Network clients: bench/soak.ts's 1024 clients took 134 MB against 115 MB for 64, about 20 KB each;
 * both rounded up here.
 */
export const CLIENT_BYTES: Record<RunPlan['target']['driver'], number> = {
  sqlite: 256 * 1024,
  mysql: 64 * 1024,
  postgres: 64 * 1024,
};

/**
 * Share of the machine's memory the load generator may plan for: the database under test, and whatever
 * else runs, need the rest.
 */
export const LOAD_MEMORY_SHARE = 0.5;

/**
 * SQLite worker threads per core by default. A thread per client makes clients really concurrent
 * (preempted mid-statement, as processes are), but beyond a few threads per core more of them only add
 * start-up time (0.26 s of CPU each) and memory; the clients beyond share threads, cooperatively (see
 * `sqliteDriver`). Measured on 2 cores, select1, 32 clients: 32 workers 80,000 q/s at 10.7-11.1 µs of
 * client CPU per query, 8 workers 65,000-78,000 q/s at 6.8-7.3 µs (a loaded machine: the CPU is the figure).
 */
export const SQLITE_WORKERS_PER_CORE = 8;

/** What the machine offers the load generator. */
export interface MachineLimits {
  cores: number;
  totalMemBytes: number;
  /** Open files a process may have (RLIMIT_NOFILE), when it can be read. */
  fileLimit?: number | undefined;
  /** The CPU's vendor as /proc/cpuinfo names it (`GenuineIntel`, `AuthenticAMD`), when it can be read. */
  cpuVendor?: string | undefined;
}

/** The soft limit of open files, from /proc/self/limits (Linux); undefined elsewhere. */
function openFileLimit(): number | undefined {
  try {
    const m = /^Max open files\s+(\d+|unlimited)/m.exec(readFileSync('/proc/self/limits', 'utf8'));
    return m?.[1] === undefined || m[1] === 'unlimited' ? undefined : Number(m[1]);
  } catch {
    return undefined;
  }
}

let vendor: string | undefined | null = null;

/**
 * /proc/cpuinfo's first `vendor_id` (Linux; read once); undefined elsewhere. Only the file's first KiB, the
 * first CPU's lines: the kernel makes the rest CPU by CPU, which on a machine of many cores costs milliseconds.
 */
function cpuVendor(): string | undefined {
  if (vendor !== null) return vendor;
  vendor = undefined;
  let fd: number | undefined;
  try {
    fd = openSync('/proc/cpuinfo', 'r');
    const head = Buffer.alloc(1024);
    const n = readSync(fd, head, 0, head.length, 0);
    vendor = /^vendor_id\s*:\s*(\S+)/m.exec(head.toString('latin1', 0, n))?.[1];
  } catch {
    // not Linux, or no /proc: no vendor
  } finally {
    if (fd !== undefined) closeSync(fd);
  }
  return vendor;
}

export function machineLimits(): MachineLimits {
  return {
    cores: cpuCount(),
    totalMemBytes: os.totalmem(),
    fileLimit: openFileLimit(),
    cpuVendor: cpuVendor(),
  };
}

/** The most load worker threads the machine can hold (in LOAD_MEMORY_SHARE of its memory). */
export function maxWorkers(m: MachineLimits = machineLimits()): number {
  return Math.max(1, Math.floor((m.totalMemBytes * LOAD_MEMORY_SHARE) / WORKER_BYTES));
}

/**
 * Default number of load workers, bounded on every driver. SQLite: one per client (its driver blocks the
 * thread) up to SQLITE_WORKERS_PER_CORE per core and what the memory holds; clients beyond share them.
 * Network clients get one worker per two cores (the database under test usually shares the machine), but
 * two where there are two cores or more: with the native I/O core and statement batches, one load thread
 * was the limit on a 2-core box (its replies wait while it runs JavaScript or sleeps in epoll), and a second
 * raised PostgreSQL point selects at 8 clients from 0.77 to 1.12 of sysbench's throughput at 10% less CPU
 * per query, and MariaDB's at 32 clients from 0.8 to 0.9, at 8 clients neither better nor worse
 * (docs/performance.md, 2026-12-01). Measured again on 2026-12-03 with the start-up and compile savings
 * since, one worker against two at 2 to 32 clients (bench/peers --variant="--workers 1"): one made 0.66 to
 * 1.00 of two's queries per second (PostgreSQL at 2 clients 0.66, everywhere else 0.91 to 1.00), with 0.05
 * to 0.08 s less start-up and, on PostgreSQL from 4 clients up, 4 to 21% less CPU per query (24% more at
 * 2), but on MariaDB at 32 clients 19% more: two stay. Before the native core a second worker only cost CPU.
 * Where those two would be the default and the run has SHARED_IO_MIN_CLIENTS PostgreSQL clients or more on
 * the native core (`sharedIo`: connectors.ts `sharedIoOf`), one load thread whose core runs every second
 * connection's batches on a native I/O thread of its own (design 4) does the second thread's system calls
 * without a second V8 isolate: less CPU a query and start-up at the same or higher throughput (2026-12-05;
 * from 8 clients since 2026-12-06: native-core.ts SHARED_IO_MIN_CLIENTS). Up to SOLO_IO_MAX_CLIENTS (4)
 * PostgreSQL clients on the native core (`soloIo`: connectors.ts `soloIoOf`) on two cores or more, a load
 * thread each, which reads its one connection as sysbench's threads do: more throughput at less server CPU
 * a query than two load threads there (native-core.ts SOLO_IO_MAX_CLIENTS, 2026-12-06); up to
 * SOLO_IO_READS_MAX_CLIENTS (8) where the workload only reads (`readOnly`: its `Workload.readOnly`), whose
 * statements do not wait in the server as commits and row locks do, but not on an AMD EPYC machine, where
 * one load thread made as many queries at less CPU (`soloIoMaxClients`, native-core.ts
 * SHARED_LOOP_CPU_VENDORS).
 */
export function defaultWorkers(
  driver: RunPlan['target']['driver'],
  clients: number,
  cores: number = cpuCount(),
  m: MachineLimits = machineLimits(),
  sharedIo = false,
  soloIo = false,
  readOnly = false,
): number {
  if (soloIo && cores >= 2 && clients <= soloIoMaxClients(readOnly, m))
    return Math.max(1, Math.min(clients, maxWorkers(m)));
  const perCores =
    driver === 'sqlite'
      ? Math.max(4, SQLITE_WORKERS_PER_CORE * cores)
      : Math.max(Math.min(2, cores), Math.floor(cores / 2));
  if (sharedIo && perCores === 2 && clients >= SHARED_IO_MIN_CLIENTS) return 1;
  return Math.max(1, Math.min(clients, perCores, maxWorkers(m)));
}

/**
 * Most PostgreSQL clients on the native core that get a load thread each: SOLO_IO_READS_MAX_CLIENTS where the
 * workload only reads, unless the machine's CPU is of SHARED_LOOP_CPU_VENDORS (there readers share load
 * threads as writers do: native-core.ts says what was measured); else SOLO_IO_MAX_CLIENTS.
 */
export function soloIoMaxClients(readOnly: boolean, m: MachineLimits = machineLimits()): number {
  return readOnly && !SHARED_LOOP_CPU_VENDORS.includes(m.cpuVendor ?? '')
    ? SOLO_IO_READS_MAX_CLIENTS
    : SOLO_IO_MAX_CLIENTS;
}

/** Open files a client needs: its socket; SQLite the database, its WAL and its shared-memory file. */
const FILES_PER_CLIENT: Record<RunPlan['target']['driver'], number> = { sqlite: 3, mysql: 1, postgres: 1 };

/** Why a run would not fit the machine, and what to do instead. */
export interface CapacityProblem {
  reason: string;
  hint: string;
}

/**
 * Why CLIENTS clients in WORKERS workers would not fit the machine (memory in LOAD_MEMORY_SHARE, open
 * files), or undefined when they fit. Checked before a run, so that too many clients are refused with the
 * reason instead of crashing the process (out of memory, EMFILE) minutes into it.
 */
export function capacityProblem(
  driver: RunPlan['target']['driver'],
  clients: number,
  workers: number,
  m: MachineLimits = machineLimits(),
): CapacityProblem | undefined {
  const w = Math.max(1, Math.min(workers, clients));
  const mib = (b: number): string => `${Math.round(b / 2 ** 20)} MiB`;
  const share = `${Math.round(LOAD_MEMORY_SHARE * 100)}% of its ${mib(m.totalMemBytes)}`;
  const most = maxWorkers(m);
  if (w > most) {
    return {
      reason: `${w} load worker threads need about ${mib(w * WORKER_BYTES)} (${mib(WORKER_BYTES)} each); this machine holds ${most} (in ${share})`,
      hint: `give --workers ${most} or fewer: the clients share the workers`,
    };
  }
  const have = m.totalMemBytes * LOAD_MEMORY_SHARE;
  const need = w * WORKER_BYTES + clients * CLIENT_BYTES[driver];
  if (need > have) {
    const fit = Math.max(1, Math.floor((have - w * WORKER_BYTES) / CLIENT_BYTES[driver]));
    return {
      reason: `${clients} ${driver} clients need about ${mib(need)} (${Math.round(CLIENT_BYTES[driver] / 1024)} KiB each, ${mib(WORKER_BYTES)} per worker thread); this machine offers ${mib(have)} (${share})`,
      hint: `give at most about ${fit} clients here, or run several dbsmack processes on several machines`,
    };
  }
  const files = clients * FILES_PER_CLIENT[driver] + 64;
  if (m.fileLimit !== undefined && files > m.fileLimit) {
    return {
      reason: `${clients} ${driver} clients need about ${files} open files; this process may open ${m.fileLimit}`,
      hint: `raise the limit (ulimit -n ${files}) or give fewer clients`,
    };
  }
  return undefined;
}

export const cpuCount = (): number => os.availableParallelism?.() ?? os.cpus().length;
