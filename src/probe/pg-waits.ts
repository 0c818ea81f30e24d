/**
 * PostgreSQL wait profile: PostgreSQL keeps no cumulative wait counters, so the run's own backends are
 * sampled in pg_stat_activity at a fixed rate, and each (wait_event_type, wait_event) is reported as a share
 * of the samples; an ungranted pg_locks entry at the same moment names the lock waited for.
 */
import type { Connection } from '../driver/types.ts';
import type { PgLockShare, PgWaitProfile, PgWaitShare } from '../metrics/profile-types.ts';
import { round } from '../numbers.ts';

const SAMPLE_SQL = `SELECT a.pid, a.state, a.wait_event_type AS wtype, a.wait_event AS wevent, l.locktype, l.mode
  FROM pg_stat_activity a
  LEFT JOIN LATERAL (SELECT locktype, mode FROM pg_locks WHERE pid = a.pid AND NOT granted LIMIT 1) l ON true
  WHERE a.pid = ANY(?::int[])`;

/** How one sampled backend is counted: a wait event, or `CPU` when active without one. */
export function classifySample(
  state: unknown,
  wtype: unknown,
  wevent: unknown,
): { type: string; event: string } {
  if (wtype !== null && wtype !== undefined && wtype !== '')
    return { type: String(wtype), event: String(wevent) };
  if (state === 'active') return { type: 'CPU', event: 'running' };
  return { type: 'none', event: String(state ?? 'unknown') };
}

export class PgWaitSampler {
  private readonly events = new Map<string, { type: string; event: string; samples: number }>();
  private readonly locks = new Map<string, { locktype: string; mode: string; samples: number }>();
  private readonly backends = new Set<number>();
  private rounds = 0;
  private samples = 0;
  private timer: NodeJS.Timeout | undefined;
  private inFlight: Promise<void> | undefined;
  private stopped = false;
  error: string | undefined;

  constructor(
    private readonly conn: Connection,
    private readonly pids: readonly number[],
    private readonly rateHz: number,
  ) {}

  start(): void {
    const periodMs = 1000 / this.rateHz;
    const tick = (): void => {
      if (this.stopped) return;
      const t0 = Date.now();
      this.inFlight = this.sampleOnce()
        .catch((e: unknown) => {
          this.error = (e as Error).message;
          this.stopped = true;
        })
        .finally(() => {
          if (!this.stopped) this.timer = setTimeout(tick, Math.max(0, periodMs - (Date.now() - t0)));
        });
    };
    tick();
  }

  async stop(): Promise<PgWaitProfile> {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    await this.inFlight;
    const share = (n: number): number => (this.samples > 0 ? round(n / this.samples, 4) : 0);
    const events: PgWaitShare[] = [...this.events.values()]
      .map((e) => ({ ...e, share: share(e.samples) }))
      .sort((a, b) => b.samples - a.samples);
    const locks: PgLockShare[] = [...this.locks.values()]
      .map((l) => ({ ...l, share: share(l.samples) }))
      .sort((a, b) => b.samples - a.samples);
    return {
      kind: 'postgres',
      rate_hz: this.rateHz,
      rounds: this.rounds,
      samples: this.samples,
      backends: this.backends.size,
      events,
      locks,
    };
  }

  private async sampleOnce(): Promise<void> {
    const rows = await this.conn.all(SAMPLE_SQL, [`{${this.pids.join(',')}}`]);
    this.rounds++;
    for (const r of rows) {
      this.samples++;
      this.backends.add(Number(r.pid));
      const c = classifySample(r.state, r.wtype, r.wevent);
      const k = `${c.type}\0${c.event}`;
      const e = this.events.get(k) ?? { ...c, samples: 0 };
      e.samples++;
      this.events.set(k, e);
      if (r.locktype !== null && r.locktype !== undefined) {
        const lk = `${String(r.locktype)}\0${String(r.mode)}`;
        const l = this.locks.get(lk) ?? { locktype: String(r.locktype), mode: String(r.mode), samples: 0 };
        l.samples++;
        this.locks.set(lk, l);
      }
    }
  }
}
