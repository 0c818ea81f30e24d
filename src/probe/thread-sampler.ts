/**
 * Per-thread scheduling statistics of the server over a run, from repeated readings of /proc: the first
 * reading of each thread against its last one. Sampling during the run (not only at its ends) matters: a
 * PostgreSQL backend exits when its client disconnects, before the run's end is seen.
 */

import type { ServerThreads, ThreadStat } from '../metrics/profile-types.ts';
import { round } from '../numbers.ts';
import type { ThreadLockWait } from './mysql-thread-locks.ts';
import { clockTicks, POLICY_NAMES, readTasks, type TaskReading } from './proc-tasks.ts';
import { type ServerProcess, serverPids } from './server-process.ts';

/** Name a thread and say whether it serves one of the run's connections. */
export type ThreadLabeler = (t: TaskReading) => Promise<{ name: string; session: boolean }>;

interface Seen {
  first: TaskReading;
  last: TaskReading;
  /** Born after the baseline: its counters since birth all fall in the run. */
  born: boolean;
  name: string;
  session: boolean;
}

export class ThreadSampler {
  private readonly seen = new Map<number, Seen>();
  private baseNs: bigint | undefined;
  private ended = 0;

  constructor(
    private readonly server: ServerProcess,
    private readonly label: ThreadLabeler,
  ) {}

  /** Read every thread of the server; the first call is the baseline. */
  async sample(): Promise<number> {
    const readings = await readTasks(await serverPids(this.server));
    const baseline = this.baseNs === undefined;
    if (baseline) this.baseNs = process.hrtime.bigint();
    for (const r of readings) {
      const s = this.seen.get(r.tid);
      if (s) {
        s.last = r;
        continue;
      }
      const { name, session } = await this.label(r);
      this.seen.set(r.tid, { first: r, last: r, born: !baseline, name, session });
    }
    return readings.length;
  }

  /** Take the last reading and turn the differences into per-thread rows. */
  async finish(queries: number, locks?: Map<number, ThreadLockWait>): Promise<ServerThreads> {
    const before = new Set(this.seen.keys());
    const last = await readTasks(await serverPids(this.server));
    const now = new Set(last.map((r) => r.tid));
    for (const r of last) {
      const s = this.seen.get(r.tid);
      if (s) s.last = r;
    }
    for (const tid of before) if (!now.has(tid)) this.ended++;
    const tck = clockTicks();
    const base = this.baseNs ?? process.hrtime.bigint();
    const rows: ThreadStat[] = [];
    const totals: ServerThreads['totals'] = {
      threads: 0,
      cpu_s: 0,
      usr_s: 0,
      sys_s: 0,
      lat_s: 0,
      vcx: 0,
      icx: 0,
      cpu_us_per_query: 0,
    };
    let started = 0;
    for (const s of this.seen.values()) {
      const a = s.born ? zeroLike(s.first) : s.first;
      const b = s.last;
      if (s.born) started++;
      const fromNs = s.born ? base : a.atNs;
      const observed = Math.max(1e-9, Number(b.atNs - fromNs) / 1e9);
      const usr = (b.utimeTicks - a.utimeTicks) / tck;
      const sys = (b.stimeTicks - a.stimeTicks) / tck;
      const run = (b.runNs - a.runNs) / 1e9;
      const lat = (b.waitNs - a.waitNs) / 1e9;
      const row: ThreadStat = {
        pid: b.pid,
        tid: b.tid,
        name: s.name,
        session: s.session,
        usr_pct: pct(usr, observed),
        sys_pct: pct(sys, observed),
        lat_pct: pct(lat, observed),
        cpu_pct: pct(run, observed),
        lat_ms: round(lat * 1000, 3),
        vcx: b.voluntary - a.voluntary,
        icx: b.involuntary - a.involuntary,
        nice: a.nice,
        policy: POLICY_NAMES[a.policy] ?? String(a.policy),
        observed_s: round(observed, 3),
      };
      const lk = locks?.get(b.tid);
      if (lk !== undefined) {
        row.lck_ms = round(lk.lck_ms, 3);
        row.lck_pct = pct(lk.lck_ms / 1000, Math.max(1e-9, lk.observed_s));
        totals.lck_s = (totals.lck_s ?? 0) + lk.lck_ms / 1000;
      } else if (locks !== undefined) {
        row.lck_pct = 0;
        row.lck_ms = 0;
      }
      rows.push(row);
      totals.threads++;
      totals.cpu_s += run;
      totals.usr_s += usr;
      totals.sys_s += sys;
      totals.lat_s += lat;
      totals.vcx += row.vcx;
      totals.icx += row.icx;
    }
    rows.sort((x, y) => y.cpu_pct - x.cpu_pct || y.vcx + y.icx - (x.vcx + x.icx) || x.tid - y.tid);
    totals.cpu_us_per_query = queries > 0 ? round((totals.cpu_s * 1e6) / queries, 2) : 0;
    totals.cpu_s = round(totals.cpu_s, 4);
    totals.usr_s = round(totals.usr_s, 3);
    totals.sys_s = round(totals.sys_s, 3);
    totals.lat_s = round(totals.lat_s, 4);
    if (totals.lck_s !== undefined) totals.lck_s = round(totals.lck_s, 4);
    return {
      pid: this.server.pid,
      command: this.server.command,
      found_by: this.server.foundBy,
      threads: rows,
      totals,
      ended: this.ended,
      started,
    };
  }
}

function zeroLike(r: TaskReading): TaskReading {
  return {
    ...r,
    utimeTicks: 0,
    stimeTicks: 0,
    runNs: 0,
    waitNs: 0,
    timeslices: 0,
    voluntary: 0,
    involuntary: 0,
  };
}

function pct(part: number, whole: number): number {
  return round(Math.min(100, Math.max(0, (part / whole) * 100)), 2);
}
