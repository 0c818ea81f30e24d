/**
 * Scheduling experiments on the server's threads (`--server-nice`, `--server-policy`, `--server-cpus`): applied
 * to every thread of the server when the clients are connected, put back as each thread had it after the run,
 * and recorded in the RunResult under `server_sched`. Nice goes through setpriority(2) per thread
 * (`os.setPriority` takes a thread id on Linux); policy and CPU affinity through util-linux `chrt` and
 * `taskset`, run once per thread.
 */
import { execFile } from 'node:child_process';
import os from 'node:os';
import type { Connection } from '../driver/types.ts';
import type { ProbeStartInfo, RunProbe } from '../engine/run-once.ts';
import type { ProfileNote, SchedRequest, ServerSched } from '../metrics/profile-types.ts';
import { POLICY_NAMES, readTasks, type TaskReading } from './proc-tasks.ts';
import { probeConnection } from './profile-probe.ts';
import { locateServer, type ServerProcess, serverPids } from './server-process.ts';

export const POLICIES = ['fifo', 'rr', 'other', 'batch', 'idle'] as const;
const CHRT_FLAG: Record<string, string> = { fifo: '-f', rr: '-r', other: '-o', batch: '-b', idle: '-i' };
const WHAT = 'scheduling';

/** `0-2,5` → [0, 1, 2, 5]; throws on anything else. */
export function expandCpuList(list: string): number[] {
  const out = new Set<number>();
  for (const part of list.split(',')) {
    const m = /^\s*(\d+)(?:-(\d+))?\s*$/.exec(part);
    if (!m) throw new Error(`bad CPU list '${list}': use numbers and ranges like 0-1,3`);
    const a = Number(m[1]);
    const b = m[2] === undefined ? a : Number(m[2]);
    if (b < a) throw new Error(`bad CPU range '${part.trim()}' in '${list}'`);
    for (let i = a; i <= b; i++) out.add(i);
  }
  return [...out].sort((x, y) => x - y);
}

function run(cmd: string, args: string[]): Promise<void> {
  return new Promise((resolve, reject) => {
    execFile(cmd, args, { timeout: 5000 }, (err, _out, stderr) => {
      if (!err) return resolve();
      const code = (err as NodeJS.ErrnoException).code;
      if (code === 'ENOENT') return reject(new Error(`${cmd} is not installed (it comes with util-linux)`));
      reject(new Error(`${cmd} ${args.join(' ')}: ${String(stderr).trim() || err.message}`));
    });
  });
}

/** Run `fn` over items, a few at a time: one short child process per thread. */
async function eachLimited<T>(items: readonly T[], fn: (t: T) => Promise<void>): Promise<void> {
  let i = 0;
  const worker = async (): Promise<void> => {
    while (i < items.length) await fn(items[i++] as T);
  };
  await Promise.all(Array.from({ length: Math.min(8, items.length) }, worker));
}

interface Original {
  nice: number;
  policy: number;
  rtPriority: number;
  cpus: string;
}

function originalOf(t: TaskReading): Original {
  return { nice: t.nice, policy: t.policy, rtPriority: t.rtPriority, cpus: t.cpusAllowed };
}

function describe(o: Original): string {
  return `nice ${o.nice}, ${POLICY_NAMES[o.policy] ?? o.policy} ${o.rtPriority}, cpus ${o.cpus}`;
}

/** What one thread must look like after applying `req`; undefined when it does. */
function mismatch(t: TaskReading, req: SchedRequest, cpus: number[] | undefined): string | undefined {
  if (req.policy !== undefined && POLICY_NAMES[t.policy] !== req.policy)
    return `policy ${POLICY_NAMES[t.policy]}`;
  if (req.nice !== undefined && req.policy !== 'fifo' && req.policy !== 'rr' && t.nice !== req.nice)
    return `nice ${t.nice}`;
  if (cpus !== undefined && expandCpuList(t.cpusAllowed).join(',') !== cpus.join(','))
    return `cpus ${t.cpusAllowed}`;
  return undefined;
}

async function setOne(tid: number, req: SchedRequest & { priority?: number }): Promise<void> {
  if (req.policy !== undefined) {
    const prio = req.policy === 'fifo' || req.policy === 'rr' ? (req.priority ?? 1) : 0;
    await run('chrt', [CHRT_FLAG[req.policy] as string, '-p', String(prio), String(tid)]);
  }
  if (req.nice !== undefined) os.setPriority(tid, req.nice);
  if (req.cpus !== undefined) await run('taskset', ['-p', '-c', req.cpus, String(tid)]);
}

export interface SchedProbeOptions {
  serverPid?: number;
  connectTimeoutMs: number;
}

/** The RunProbe of the scheduling experiments (key `server_sched`). */
export class SchedProbe implements RunProbe {
  readonly key = 'server_sched';
  private server: ServerProcess | undefined;
  private originals = new Map<number, Original>();
  private fallback: Original | undefined;
  private record: ServerSched;

  constructor(
    private readonly req: SchedRequest,
    private readonly opts: SchedProbeOptions,
  ) {
    this.record = { requested: req, applied: false, threads: 0, restored: false, notes: [] };
  }

  async start(info: ProbeStartInfo): Promise<void> {
    this.record = { requested: this.req, applied: false, threads: 0, restored: false, notes: [] };
    this.originals.clear();
    this.server = undefined;
    let conn: Connection | undefined;
    try {
      if (info.target.driver !== 'sqlite' && this.opts.serverPid === undefined)
        conn = await probeConnection(info.target, this.opts.connectTimeoutMs).catch(() => undefined);
      const located = await locateServer(info.target, conn, info.sessionIds, this.opts.serverPid);
      if ('note' in located) {
        this.note(`not applied: ${located.note.why}`, located.note.hint);
        return;
      }
      this.server = located.server;
      this.record.pid = located.server.pid;
      await this.apply();
    } catch (e) {
      this.note(`not applied: ${(e as Error).message}`);
    } finally {
      await conn?.close().catch(() => {});
    }
  }

  async stop(): Promise<ServerSched> {
    try {
      if (this.server !== undefined && this.originals.size > 0) await this.restore();
    } catch (e) {
      // A probe never costs the run its result: say what is left as it was set.
      this.note(`could not restore the server's threads: ${(e as Error).message}`);
    }
    return this.record;
  }

  private async apply(): Promise<void> {
    const server = this.server as ServerProcess;
    const tasks = await readTasks(await serverPids(server));
    for (const t of tasks) this.originals.set(t.tid, originalOf(t));
    const main = tasks.find((t) => t.tid === server.pid);
    this.fallback = main ? originalOf(main) : undefined;
    this.record.before = mostCommon(tasks.map((t) => describe(originalOf(t))));
    const cpus = this.req.cpus !== undefined ? expandCpuList(this.req.cpus) : undefined;
    const errors: string[] = [];
    await eachLimited(tasks, (t) => setOne(t.tid, this.req).catch((e: Error) => void errors.push(e.message)));
    const after = await readTasks(await serverPids(server));
    const wrong = after.filter((t) => this.originals.has(t.tid) && mismatch(t, this.req, cpus) !== undefined);
    this.record.threads = after.length;
    if (errors.length === 0 && wrong.length === 0) {
      this.record.applied = true;
      return;
    }
    const first = wrong[0];
    const why =
      errors[0] ?? (first ? `thread ${first.tid} still has ${mismatch(first, this.req, cpus)}` : 'unknown');
    this.note(
      `could not apply the setting to ${Math.max(errors.length, wrong.length)} of ${tasks.length} threads (${why}); the run went on with the settings restored`,
      /EPERM|EACCES|not permitted|denied/i.test(why)
        ? "changing another user's threads, a lower nice value or a real-time policy needs root or CAP_SYS_NICE"
        : undefined,
    );
    await this.restore();
  }

  private async restore(): Promise<void> {
    const server = this.server as ServerProcess;
    const tasks = await readTasks(await serverPids(server));
    const errors: string[] = [];
    await eachLimited(tasks, async (t) => {
      const o = this.originals.get(t.tid) ?? this.fallback;
      if (o === undefined) return;
      const policy = POLICY_NAMES[o.policy];
      try {
        if (this.req.policy !== undefined && policy !== undefined && policy !== POLICY_NAMES[t.policy]) {
          await run('chrt', [CHRT_FLAG[policy] as string, '-p', String(o.rtPriority), String(t.tid)]);
        }
        if (this.req.nice !== undefined && t.nice !== o.nice) os.setPriority(t.tid, o.nice);
        if (this.req.cpus !== undefined && t.cpusAllowed !== o.cpus)
          await run('taskset', ['-p', '-c', o.cpus, String(t.tid)]);
      } catch (e) {
        errors.push((e as Error).message);
      }
    });
    this.originals.clear();
    this.record.restored = errors.length === 0;
    if (errors.length > 0) this.note(`could not restore ${errors.length} threads: ${errors[0]}`);
  }

  private note(why: string, hint?: string): void {
    const n: ProfileNote = { what: WHAT, why };
    if (hint) n.hint = hint;
    this.record.notes.push(n);
  }
}

function mostCommon(values: string[]): string | undefined {
  const counts = new Map<string, number>();
  for (const v of values) counts.set(v, (counts.get(v) ?? 0) + 1);
  return [...counts.entries()].sort((a, b) => b[1] - a[1])[0]?.[0];
}
