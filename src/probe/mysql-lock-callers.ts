/**
 * Lock waits by caller on MariaDB/MySQL from the performance schema: the waits of the window on mutexes,
 * rwlocks and table/metadata locks, grouped by instrument and source location (`SOURCE`, file:line of the
 * code that took the lock), like plockstat's "Count nsec Lock Caller". `events_waits_history_long` is a ring
 * (10,000 rows by default, `performance_schema_events_waits_history_long_size`), so it is read ten times a
 * second from where the last read ended (by `TIMER_END`) and the waits the ring lost are counted against the
 * instruments' summary: the result says how many of the window's waits it saw.
 *
 * The consumers it needs (`events_waits_current`, `events_waits_history_long`) and the wait instruments are
 * turned on for the window when they are off, and put back as they were after it.
 *
 * Some servers leave `SOURCE` empty (MariaDB 10.11 as Debian builds it fills no source location for any wait);
 * `sourceless` then says so, and the callers come from the recorded stacks instead (switch-stacks.ts).
 */
import type { Connection } from '../driver/types.ts';
import type { ProfileNote } from '../metrics/profile-types.ts';
import type { LockCaller } from '../metrics/stacks-types.ts';
import { round3 } from '../numbers.ts';

const PS = 'performance_schema';
const PS_TO_MS = 1e-9;
const LOCK_EVENTS = `(EVENT_NAME LIKE 'wait/synch/%' OR EVENT_NAME LIKE 'wait/lock/%') AND EVENT_NAME NOT LIKE 'wait/synch/cond/%'`;
const CONSUMERS = [
  'global_instrumentation',
  'thread_instrumentation',
  'events_waits_current',
  'events_waits_history_long',
];

/** What dbsmack turned on, to be put back: written down while it is on, so that a killed run can be undone. */
export interface PsChanges {
  consumers: string[];
  instruments: Array<{ name: string; enabled: string; timed: string }>;
}

export interface LockCallersResult {
  rows: LockCaller[];
  seen: number;
  total: number;
  /** Every wait seen had an empty SOURCE: this server does not record where locks are taken. */
  sourceless: boolean;
}

export class MysqlLockCallers {
  private consumersOff: string[] = [];
  private instrumentsOff: Array<{ name: string; enabled: string; timed: string }> = [];
  private watermark = 0;
  private ownThread = -1;
  private total0 = 0;
  private readonly acc = new Map<string, { count: number; ps: number }>();
  private seen = 0;
  private withSource = 0;
  private total = 0;
  private polling: Promise<void> | undefined;

  /** `changed` hears what is on now (and empty lists once it is all put back). */
  constructor(
    private readonly conn: Connection,
    private readonly changed: (c: PsChanges) => void = () => {},
  ) {}

  /** Turn on what is needed and take the baseline; a note when it cannot. */
  async begin(): Promise<ProfileNote | undefined> {
    const [on] = await this.conn.all('SELECT @@performance_schema AS ps');
    if (Number(on?.ps) !== 1)
      return {
        what: 'lock callers',
        why: 'the performance schema is off',
        hint: 'start the server with --performance-schema=ON',
      };
    try {
      const [me] = await this.conn.all(
        `SELECT THREAD_ID AS id FROM ${PS}.threads WHERE PROCESSLIST_ID = CONNECTION_ID()`,
      );
      this.ownThread = Number(me?.id ?? -1);
      const consumers = await this.conn.all(
        `SELECT NAME AS name, ENABLED AS enabled FROM ${PS}.setup_consumers WHERE NAME IN (${CONSUMERS.map(() => '?').join(', ')})`,
        CONSUMERS,
      );
      const off = consumers.filter((c) => String(c.enabled) !== 'YES').map((c) => String(c.name));
      if (off.length > 0) {
        await this.conn.query(
          `UPDATE ${PS}.setup_consumers SET ENABLED = 'YES' WHERE NAME IN (${off.map(() => '?').join(', ')})`,
          off,
        );
        this.consumersOff = off;
      }
      const instr = await this.conn.all(
        `SELECT NAME AS name, ENABLED AS enabled, TIMED AS timed FROM ${PS}.setup_instruments WHERE (NAME LIKE 'wait/synch/%' OR NAME LIKE 'wait/lock/%') AND NAME NOT LIKE 'wait/synch/cond/%' AND (ENABLED = 'NO' OR TIMED = 'NO')`,
      );
      if (instr.length > 0) {
        await this.conn.query(
          `UPDATE ${PS}.setup_instruments SET ENABLED = 'YES', TIMED = 'YES' WHERE (NAME LIKE 'wait/synch/%' OR NAME LIKE 'wait/lock/%') AND NAME NOT LIKE 'wait/synch/cond/%' AND (ENABLED = 'NO' OR TIMED = 'NO')`,
        );
        this.instrumentsOff = instr.map((r) => ({
          name: String(r.name),
          enabled: String(r.enabled),
          timed: String(r.timed),
        }));
      }
    } catch (e) {
      await this.restore();
      return {
        what: 'lock callers',
        why: `cannot turn on the wait history (${(e as Error).message})`,
        hint: `UPDATE on ${PS}.setup_consumers and ${PS}.setup_instruments is needed`,
      };
    }
    this.changed({ consumers: this.consumersOff, instruments: this.instrumentsOff });
    const [w] = await this.conn.all(`SELECT MAX(TIMER_END) AS m FROM ${PS}.events_waits_history_long`);
    this.watermark = Number(w?.m ?? 0);
    this.total0 = await this.totalWaits();
    return undefined;
  }

  private async totalWaits(): Promise<number> {
    const [r] = await this.conn.all(
      `SELECT SUM(COUNT_STAR) AS n FROM ${PS}.events_waits_summary_global_by_event_name WHERE ${LOCK_EVENTS}`,
    );
    return Number(r?.n ?? 0);
  }

  /** Read the waits that ended since the last read. */
  poll(): Promise<void> {
    this.polling ??= this.read().finally(() => {
      this.polling = undefined;
    });
    return this.polling;
  }

  private async read(): Promise<void> {
    const rows = await this.conn.all(
      `SELECT EVENT_NAME AS e, SOURCE AS s, COUNT(*) AS c, SUM(TIMER_WAIT) AS w, MAX(TIMER_END) AS m FROM ${PS}.events_waits_history_long WHERE TIMER_END > ? AND THREAD_ID <> ? AND ${LOCK_EVENTS} GROUP BY EVENT_NAME, SOURCE`,
      [this.watermark, this.ownThread],
    );
    let top = this.watermark;
    for (const r of rows) {
      const source = String(r.s ?? '');
      const key = `${String(r.e)}\0${source}`;
      const a = this.acc.get(key) ?? { count: 0, ps: 0 };
      const n = Number(r.c);
      a.count += n;
      a.ps += Number(r.w ?? 0);
      this.acc.set(key, a);
      this.seen += n;
      if (source !== '') this.withSource += n;
      top = Math.max(top, Number(r.m ?? 0));
    }
    this.watermark = top;
  }

  /** The last read, the total from the summary, and everything put back as it was. */
  async end(): Promise<LockCallersResult> {
    try {
      await this.polling?.catch(() => {});
      await this.read();
      this.total = Math.max(0, (await this.totalWaits()) - this.total0);
    } finally {
      await this.restore();
    }
    return this.result();
  }

  result(): LockCallersResult {
    const rows = [...this.acc.entries()]
      .map(([k, v]) => {
        const [lock, caller] = k.split('\0');
        return {
          lock: lock ?? '',
          caller: caller ?? '',
          count: v.count,
          wait_ms: round3(v.ps * PS_TO_MS),
        };
      })
      .sort((a, b) => b.wait_ms - a.wait_ms || b.count - a.count);
    return {
      rows,
      seen: this.seen,
      total: Math.max(this.total, this.seen),
      sourceless: this.seen > 0 && this.withSource === 0,
    };
  }

  /** Put the consumers and instruments turned on back off. */
  async restore(): Promise<void> {
    const c = { consumers: this.consumersOff, instruments: this.instrumentsOff };
    this.consumersOff = [];
    this.instrumentsOff = [];
    if (c.consumers.length === 0 && c.instruments.length === 0) return;
    if (await putBack(this.conn, c)) this.changed({ consumers: [], instruments: [] });
  }
}

/** Put performance schema consumers and instruments back as `c` says they were; false when a statement failed. */
export async function putBack(conn: Connection, c: PsChanges): Promise<boolean> {
  let ok = true;
  const fail = (): void => {
    ok = false;
  };
  if (c.consumers.length > 0) {
    await conn
      .query(
        `UPDATE ${PS}.setup_consumers SET ENABLED = 'NO' WHERE NAME IN (${c.consumers.map(() => '?').join(', ')})`,
        c.consumers,
      )
      .catch(fail);
  }
  const byState = new Map<string, string[]>();
  for (const i of c.instruments) {
    const k = `${i.enabled}/${i.timed}`;
    byState.set(k, [...(byState.get(k) ?? []), i.name]);
  }
  for (const [k, names] of byState) {
    const [enabled, timed] = k.split('/');
    for (let i = 0; i < names.length; i += 200) {
      const chunk = names.slice(i, i + 200);
      await conn
        .query(
          `UPDATE ${PS}.setup_instruments SET ENABLED = ?, TIMED = ? WHERE NAME IN (${chunk.map(() => '?').join(', ')})`,
          [enabled, timed, ...chunk],
        )
        .catch(fail);
    }
  }
  return ok;
}

/** Which server a connection reaches, to match a killed run's leftovers with the server they were left on. */
export async function serverIdentity(conn: Connection): Promise<string> {
  const [r] = await conn.all('SELECT @@hostname AS h, @@port AS p, @@server_id AS s');
  return `${String(r?.h)}:${String(r?.p)}#${String(r?.s)}`;
}
