/**
 * Per-thread lock wait of a MariaDB/MySQL server (prstat's LCK column): the time each thread spent waiting on
 * mutexes, rwlocks and table/metadata locks, from the performance schema's per-thread wait summary. Sampled
 * during the run, because a connection's row disappears when its client disconnects, before the run's end.
 * Condition waits are left out: threads park on conditions when idle, which is sleep, not lock contention.
 */
import type { Connection } from '../driver/types.ts';

const SQL = `SELECT t.THREAD_ID AS id, t.THREAD_OS_ID AS tid, SUM(w.SUM_TIMER_WAIT) AS ps
  FROM performance_schema.events_waits_summary_by_thread_by_event_name w
  JOIN performance_schema.threads t ON t.THREAD_ID = w.THREAD_ID
  WHERE w.COUNT_STAR > 0 AND (w.EVENT_NAME LIKE 'wait/synch/mutex/%' OR w.EVENT_NAME LIKE 'wait/synch/rwlock/%'
    OR w.EVENT_NAME LIKE 'wait/synch/sxlock/%' OR w.EVENT_NAME LIKE 'wait/lock/%')
  GROUP BY t.THREAD_ID, t.THREAD_OS_ID`;

interface Reading {
  tid: number;
  ps: number;
  atNs: bigint;
}

/** Lock wait per OS thread id over the observed window: milliseconds and seconds observed. */
export interface ThreadLockWait {
  lck_ms: number;
  observed_s: number;
}

export class MysqlThreadLocks {
  private readonly first = new Map<number, Reading>();
  private readonly last = new Map<number, Reading>();
  private baseNs: bigint | undefined;

  constructor(private readonly conn: Connection) {}

  async sample(): Promise<void> {
    const rows = await this.conn.all(SQL);
    const at = process.hrtime.bigint();
    const baseline = this.baseNs === undefined;
    if (baseline) this.baseNs = at;
    for (const r of rows) {
      const id = Number(r.id);
      const reading = { tid: Number(r.tid), ps: Number(r.ps), atNs: at };
      // A thread id first seen after the baseline started counting within the run: its base is zero.
      if (!this.first.has(id))
        this.first.set(id, baseline ? reading : { ...reading, ps: 0, atNs: this.baseNs! });
      this.last.set(id, reading);
    }
  }

  /** Per OS thread id (a cached OS thread may have served several connections: they add up). */
  result(): Map<number, ThreadLockWait> {
    const out = new Map<number, ThreadLockWait>();
    for (const [id, b] of this.last) {
      const a = this.first.get(id);
      if (a === undefined) continue;
      const prev = out.get(b.tid) ?? { lck_ms: 0, observed_s: 0 };
      out.set(b.tid, {
        lck_ms: prev.lck_ms + (b.ps - a.ps) / 1e9,
        observed_s: Math.max(prev.observed_s, Number(b.atNs - a.atNs) / 1e9),
      });
    }
    return out;
  }
}
