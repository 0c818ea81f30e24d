/**
 * Where a load thread a client and its PostgreSQL backend run: on one CPU, or on two. A run of dbsmack's
 * point select with a load thread a client (the default up to 8 PostgreSQL clients that only read), sampled
 * from /proc while it runs:
 *
 *   node --import tsx bench/colocation.ts [--clients 8] [--time 10] [--every-ms 2]
 *        [--pg postgres://root@127.0.0.1:5432/dbsmack_perf] [--table-size 100000] [--dbsmack-args "..."]
 *
 * Between second 3 and two seconds before the end, every `--every-ms`, each of dbsmack's threads that waits
 * to read its connection (`recvfrom` or `read` in /proc/PID/task/TID/syscall, whose first argument is the
 * descriptor) is matched with the backend at the other end of that socket (the descriptor's socket inode,
 * its ports in /proc/net/tcp, and the postgres process holding the socket whose ports are the other way
 * round), and the CPU each last ran on (field 39 of their stat lines) is compared. It prints the pairs seen,
 * the samples, and the share in which both were on one CPU, overall and per pair.
 *
 * Why: a thread each made 10-20% more queries than the shared loop on the Xeon guests at about the same CPU,
 * and cost 15-20% more CPU on the AMD EPYC guests (docs/performance.md). On the Xeon KVM guest (2026-12-07,
 * thirty-third session) every sampled pair was on one CPU (100% in three runs): each wake-up between a
 * client thread and its backend stays on its CPU there. Whether the AMD guests keep the pairs apart is the
 * question this answers there. Threads waiting in `poll` or `epoll_wait` (sysbench's libpq, the shared loop)
 * name no one descriptor, so only a layout whose threads read their connection with blocking calls is seen.
 * The sampling takes CPU of its own (the line says how much), beside the run it reads. The table must be there (bench/peers
 * prepares it; so does this script, through sysbench, when it is missing).
 */
import { spawn } from 'node:child_process';
import { readdirSync, readFileSync, readlinkSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { parseTarget } from '../src/driver/url.ts';
import { parseStat, statField } from '../src/probe/proc-tasks.ts';
import { benchArgs, positiveIn } from './args.ts';
import { dbsmackRunArgs, ensureSbtest, measuringAlone } from './tools.ts';

/** /proc/net/tcp's (or tcp6's) rows: each socket's inode to its [local port, remote port]. */
export function tcpPorts(text: string): Map<string, [number, number]> {
  const out = new Map<string, [number, number]>();
  for (const line of text.split('\n').slice(1)) {
    const f = line.trim().split(/\s+/);
    const local = f[1]?.split(':')[1];
    const remote = f[2]?.split(':')[1];
    const inode = f[9];
    if (local === undefined || remote === undefined || inode === undefined || inode === '0') continue;
    out.set(inode, [Number.parseInt(local, 16), Number.parseInt(remote, 16)]);
  }
  return out;
}

/** x86-64's numbers of the calls a thread reading its connection waits in: read, recvfrom. */
const READING_CALLS = new Set(['0', '45']);

/**
 * The descriptor a thread waits to read from, from its /proc/…/syscall line (the call's number, then its
 * arguments in hexadecimal), or undefined when it is in another call, running, or the line is unreadable.
 */
export function readingFd(line: string): number | undefined {
  const f = line.trim().split(/\s+/);
  if (f.length < 2 || !READING_CALLS.has(f[0] as string)) return undefined;
  const fd = Number.parseInt(f[1] as string, 16);
  return Number.isFinite(fd) ? fd : undefined;
}

/** The socket inode behind each of a process's descriptors. */
function socketsOf(pid: number): Map<number, string> {
  const out = new Map<number, string>();
  let fds: string[];
  try {
    fds = readdirSync(`/proc/${pid}/fd`);
  } catch {
    return out;
  }
  for (const fd of fds) {
    try {
      const m = /^socket:\[(\d+)\]$/.exec(readlinkSync(`/proc/${pid}/fd/${fd}`));
      if (m) out.set(Number(fd), m[1] as string);
    } catch {
      // closed meanwhile
    }
  }
  return out;
}

function readOr(file: string): string | undefined {
  try {
    return readFileSync(file, 'latin1');
  } catch {
    return undefined;
  }
}

/** The CPU a task last ran on, from its stat line, or undefined. */
function lastCpu(statFile: string): number | undefined {
  const s = readOr(statFile);
  if (s === undefined) return undefined;
  const cpu = statField(parseStat(s).fields, 39);
  return Number.isFinite(cpu) ? cpu : undefined;
}

const sleepMs = (ms: number): void => {
  Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);
};

/** Each backend's remote (client) port, for the processes named postgres holding a socket on `serverPort`. */
function backendsByClientPort(ports: Map<string, [number, number]>, serverPort: number): Map<number, number> {
  const out = new Map<number, number>();
  for (const p of readdirSync('/proc')) {
    if (!/^\d+$/.test(p)) continue;
    if (!(readOr(`/proc/${p}/comm`) ?? '').startsWith('postgres')) continue;
    for (const inode of socketsOf(Number(p)).values()) {
      const pr = ports.get(inode);
      if (pr !== undefined && pr[0] === serverPort) out.set(pr[1], Number(p));
    }
  }
  return out;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const { values } = benchArgs(import.meta.url, {
    options: {
      clients: { type: 'string', default: '8' },
      time: { type: 'string', default: '10' },
      'every-ms': { type: 'string', default: '2' },
      pg: { type: 'string', default: 'postgres://root@127.0.0.1:5432/dbsmack_perf' },
      'table-size': { type: 'string', default: '100000' },
      'dbsmack-args': { type: 'string', default: '' },
    },
  });
  const positive = positiveIn(import.meta.url, values);
  const clients = positive('clients');
  const time = positive('time');
  const everyMs = positive('every-ms');
  const size = positive('table-size');
  if (time < 6) {
    process.stderr.write(
      `${fileURLToPath(import.meta.url)}: --time must be 6 or more (seconds 3 to T-2 are read)\n`,
    );
    process.exit(2);
  }
  // one measuring script at a time on this machine (tools.ts)
  await measuringAlone();
  const target = parseTarget(values.pg);
  const serverPort = target.port ?? 5432;
  ensureSbtest(target, size);
  const extra = values['dbsmack-args'].split(/\s+/).filter((a) => a !== '');
  const args = [
    ...dbsmackRunArgs('oltp_point_select', values.pg, clients, time, ['--table-size', String(size)]),
    '--no-history',
    '-q',
    ...extra,
  ];
  const child = spawn(process.execPath, args, { stdio: ['ignore', 'ignore', 'inherit'] });
  const ended = new Promise<number | null>((resolve) => child.on('exit', resolve));
  sleepMs(3000);
  const pid = child.pid as number;
  const ports = new Map([
    ...tcpPorts(readOr('/proc/net/tcp') ?? ''),
    ...tcpPorts(readOr('/proc/net/tcp6') ?? ''),
  ]);
  const backends = backendsByClientPort(ports, serverPort);
  // each of dbsmack's descriptors to the server: its backend
  const backendOfFd = new Map<number, number>();
  for (const [fd, inode] of socketsOf(pid)) {
    const pr = ports.get(inode);
    const b = pr !== undefined && pr[1] === serverPort ? backends.get(pr[0]) : undefined;
    if (b !== undefined) backendOfFd.set(fd, b);
  }
  const seen = new Map<string, { n: number; same: number }>();
  const t0 = performance.now();
  const c0 = process.cpuUsage();
  const until = t0 + (time - 5) * 1000;
  while (performance.now() < until) {
    let tids: string[] = [];
    try {
      tids = readdirSync(`/proc/${pid}/task`);
    } catch {
      break;
    }
    for (const tid of tids) {
      const fd = readingFd(readOr(`/proc/${pid}/task/${tid}/syscall`) ?? '');
      const b = fd === undefined ? undefined : backendOfFd.get(fd);
      if (b === undefined) continue;
      const a = lastCpu(`/proc/${pid}/task/${tid}/stat`);
      const c = lastCpu(`/proc/${b}/stat`);
      if (a === undefined || c === undefined) continue;
      const key = `${tid}/${b}`;
      const s = seen.get(key) ?? { n: 0, same: 0 };
      s.n++;
      if (a === c) s.same++;
      seen.set(key, s);
    }
    sleepMs(everyMs);
  }
  const cpu = process.cpuUsage(c0);
  const ownShare = (cpu.user + cpu.system) / 1000 / (performance.now() - t0);
  const code = await ended;
  const all = [...seen.values()];
  const n = all.reduce((x, s) => x + s.n, 0);
  const same = all.reduce((x, s) => x + s.same, 0);
  const pct = (a: number, b: number): string => `${b === 0 ? 0 : Math.round((100 * a) / b)}%`;
  console.log(
    `# ${clients} clients (${target.redactedUrl}${extra.length > 0 ? `, ${extra.join(' ')}` : ''}): ` +
      `${seen.size} client thread and backend pairs seen, ${n} samples; on one CPU in ${pct(same, n)}` +
      (seen.size > 0 ? ` (each pair: ${all.map((s) => pct(s.same, s.n)).join(' ')})` : '') +
      `; the sampling took ${pct(ownShare, 1)} of a CPU` +
      (code === 0 ? '' : `; dbsmack exited with ${code}`),
  );
  if (seen.size === 0)
    console.log(
      '# no thread was seen reading its connection: a layout of epoll loops (--workers 1, many clients)',
    );
}
