/**
 * MariaDB/MySQL wait profile: the difference over the run of the performance schema's wait summary by event
 * name (how often and how long threads waited on each mutex, rwlock, condition, file or table) and of the
 * statement digests. Wait instruments that are off are turned on for the run and back off after, so that a
 * server started with the schema's defaults still shows its mutexes by name.
 */
import type { Connection } from '../driver/types.ts';
import type {
  MysqlDigestRow,
  MysqlWaitProfile,
  MysqlWaitRow,
  ProfileNote,
} from '../metrics/profile-types.ts';
import { round } from '../numbers.ts';

const PS = 'performance_schema';
/** Picoseconds to milliseconds. */
const PS_TO_MS = 1e-9;

export const PERFORMANCE_SCHEMA_HINT =
  'start the server with --performance-schema=ON (or performance_schema=ON under [mysqld] in my.cnf); it cannot be turned on while the server runs';

type WaitSnap = Map<string, { count: number; wait: number }>;
type DigestSnap = Map<string, MysqlDigestRow & { timer: number; lock: number }>;

export class MysqlWaits {
  private changed: Array<{ name: string; enabled: string; timed: string }> = [];
  private waits0: WaitSnap | undefined;
  private statements0: WaitSnap | undefined;
  private digests0: DigestSnap | undefined;

  constructor(private readonly conn: Connection) {}

  /** Check the schema, turn on wait instruments, and take the baseline. A note when it cannot. */
  async begin(): Promise<ProfileNote | undefined> {
    let on: boolean;
    try {
      const [row] = await this.conn.all('SELECT @@performance_schema AS ps');
      on = Number(row?.ps) === 1;
    } catch (e) {
      return { what: 'server waits', why: `cannot read @@performance_schema: ${(e as Error).message}` };
    }
    if (!on) {
      return { what: 'server waits', why: 'the performance schema is off', hint: PERFORMANCE_SCHEMA_HINT };
    }
    let note: ProfileNote | undefined;
    try {
      const off = await this.conn.all(
        `SELECT NAME AS name, ENABLED AS enabled, TIMED AS timed FROM ${PS}.setup_instruments WHERE NAME LIKE 'wait/%' AND (ENABLED = 'NO' OR TIMED = 'NO')`,
      );
      if (off.length > 0) {
        await this.conn.query(
          `UPDATE ${PS}.setup_instruments SET ENABLED = 'YES', TIMED = 'YES' WHERE NAME LIKE 'wait/%' AND (ENABLED = 'NO' OR TIMED = 'NO')`,
        );
        this.changed = off.map((r) => ({
          name: String(r.name),
          enabled: String(r.enabled),
          timed: String(r.timed),
        }));
      }
    } catch (e) {
      note = {
        what: 'server waits',
        why: `some wait instruments are off and could not be turned on (${(e as Error).message}): their waits are missing`,
        hint: `UPDATE ${PS}.setup_instruments SET ENABLED='YES', TIMED='YES' WHERE NAME LIKE 'wait/%' needs the UPDATE privilege on ${PS}`,
      };
    }
    this.waits0 = await this.readWaits();
    this.statements0 = await this.readStatementEvents();
    this.digests0 = await this.readDigests();
    return note;
  }

  /** The difference since `begin`, and instruments put back as they were. */
  async end(): Promise<MysqlWaitProfile | undefined> {
    if (this.waits0 === undefined || this.digests0 === undefined) return undefined;
    try {
      const waits1 = await this.readWaits();
      const statements1 = await this.readStatementEvents();
      const digests1 = await this.readDigests();
      const rows: MysqlWaitRow[] = [];
      let idle = 0;
      for (const [event, v] of waits1) {
        const a = this.waits0.get(event) ?? { count: 0, wait: 0 };
        const count = v.count - a.count;
        if (count <= 0) continue;
        const waitMs = (v.wait - a.wait) * PS_TO_MS;
        if (event === 'idle') idle = waitMs;
        else rows.push({ event, count, wait_ms: round(waitMs, 4) });
      }
      rows.sort((x, y) => y.wait_ms - x.wait_ms || y.count - x.count);
      const digests: MysqlDigestRow[] = [];
      for (const [key, d] of digests1) {
        const a = this.digests0.get(key);
        const count = d.count - (a?.count ?? 0);
        if (count <= 0) continue;
        digests.push({
          schema: d.schema,
          digest: d.digest,
          text: d.text,
          count,
          total_ms: round((d.timer - (a?.timer ?? 0)) * PS_TO_MS, 3),
          lock_ms: round((d.lock - (a?.lock ?? 0)) * PS_TO_MS, 3),
          rows_examined: d.rows_examined - (a?.rows_examined ?? 0),
          rows_sent: d.rows_sent - (a?.rows_sent ?? 0),
        });
      }
      digests.sort((x, y) => y.total_ms - x.total_ms);
      const statements: MysqlWaitRow[] = [];
      for (const [event, v] of statements1) {
        const a = this.statements0?.get(event) ?? { count: 0, wait: 0 };
        const count = v.count - a.count;
        if (count > 0) statements.push({ event, count, wait_ms: round((v.wait - a.wait) * PS_TO_MS, 3) });
      }
      statements.sort((x, y) => y.wait_ms - x.wait_ms || y.count - x.count);
      return {
        kind: 'mysql',
        instruments_enabled: this.changed.length,
        waits: rows,
        idle_ms: round(idle, 3),
        digests: digests.slice(0, 20),
        statements,
      };
    } finally {
      await this.restore();
    }
  }

  /** Put the instruments dbsmack turned on back as they were. */
  async restore(): Promise<void> {
    const byState = new Map<string, string[]>();
    for (const c of this.changed) {
      const k = `${c.enabled}/${c.timed}`;
      byState.set(k, [...(byState.get(k) ?? []), c.name]);
    }
    this.changed = [];
    for (const [k, names] of byState) {
      const [enabled, timed] = k.split('/');
      for (let i = 0; i < names.length; i += 200) {
        const chunk = names.slice(i, i + 200);
        await this.conn
          .query(
            `UPDATE ${PS}.setup_instruments SET ENABLED = ?, TIMED = ? WHERE NAME IN (${chunk.map(() => '?').join(', ')})`,
            [enabled, timed, ...chunk],
          )
          .catch(() => {});
      }
    }
  }

  private async readWaits(): Promise<WaitSnap> {
    const rows = await this.conn.all(
      `SELECT EVENT_NAME AS e, COUNT_STAR AS c, SUM_TIMER_WAIT AS w FROM ${PS}.events_waits_summary_global_by_event_name WHERE COUNT_STAR > 0`,
    );
    return new Map(rows.map((r) => [String(r.e), { count: Number(r.c), wait: Number(r.w) }]));
  }

  /** Statements by kind: prepared statements show here (`statement/com/Execute`) though MariaDB digests none. */
  private async readStatementEvents(): Promise<WaitSnap> {
    const rows = await this.conn.all(
      `SELECT EVENT_NAME AS e, COUNT_STAR AS c, SUM_TIMER_WAIT AS w FROM ${PS}.events_statements_summary_global_by_event_name WHERE COUNT_STAR > 0`,
    );
    return new Map(rows.map((r) => [String(r.e), { count: Number(r.c), wait: Number(r.w) }]));
  }

  private async readDigests(): Promise<DigestSnap> {
    const rows = await this.conn.all(
      `SELECT SCHEMA_NAME AS s, DIGEST AS d, DIGEST_TEXT AS t, COUNT_STAR AS c, SUM_TIMER_WAIT AS w, SUM_LOCK_TIME AS l, SUM_ROWS_EXAMINED AS re, SUM_ROWS_SENT AS rs FROM ${PS}.events_statements_summary_by_digest`,
    );
    const out: DigestSnap = new Map();
    for (const r of rows) {
      const text = String(r.t ?? '');
      // The probe's own queries are not the workload's.
      if (/performance_schema|@@performance_schema|@@pid_file/i.test(text)) continue;
      const schema = r.s === null || r.s === undefined ? null : String(r.s);
      out.set(`${schema}\0${String(r.d)}`, {
        schema,
        digest: String(r.d),
        text,
        count: Number(r.c),
        timer: Number(r.w),
        lock: Number(r.l),
        total_ms: 0,
        lock_ms: 0,
        rows_examined: Number(r.re),
        rows_sent: Number(r.rs),
      });
    }
    return out;
  }
}
