/**
 * `--profile`: where the server waits while the run is measured. One RunProbe (stored under `profile`) that
 * gathers the server's wait profile, the per-thread scheduling statistics of its threads on this host, and
 * the host's load averages. Whatever cannot be measured becomes a note; the run itself always goes on.
 */
import { loadDriver } from '../driver/index.ts';
import type { Connection, Target } from '../driver/types.ts';
import type { ProbeStartInfo, RunProbe } from '../engine/run-once.ts';
import type { ProfileData, ProfileNote, SqliteBusyProfile, WaitProfile } from '../metrics/profile-types.ts';
import type { RunResult } from '../metrics/run-result.ts';
import { round } from '../numbers.ts';
import { MysqlThreadLocks } from './mysql-thread-locks.ts';
import { MysqlWaits } from './mysql-waits.ts';
import { PgWaitSampler } from './pg-waits.ts';
import { processInfo, readLoadAvg } from './proc-tasks.ts';
import { locateServer, type ServerProcess } from './server-process.ts';
import { type ThreadLabeler, ThreadSampler } from './thread-sampler.ts';

export interface ProfileProbeOptions {
  /** pg_stat_activity samples per second. */
  rateHz: number;
  serverPid?: number;
  connectTimeoutMs: number;
}

/** /proc is read at most this often: often enough to catch backends before they exit, cheap on 2 cores. */
const THREAD_SAMPLE_HZ = 4;

/** Open a connection of the probe's own, beside the run's. */
export async function probeConnection(target: Target, connectTimeoutMs: number): Promise<Connection> {
  const driver = await loadDriver(target.driver);
  return driver.connect(target, { connectTimeoutMs });
}

export class ProfileProbe implements RunProbe {
  readonly key = 'profile';
  private notes: ProfileNote[] = [];
  private conn: Connection | undefined;
  private mysql: MysqlWaits | undefined;
  private locks: MysqlThreadLocks | undefined;
  private ticks = 0;
  private pg: PgWaitSampler | undefined;
  private threads: ThreadSampler | undefined;
  private threadTimer: NodeJS.Timeout | undefined;
  private threadInFlight: Promise<unknown> | undefined;
  /** Cleared by stop(), so that a sample in flight does not schedule another one. */
  private sampling = false;
  private baseline: Promise<void> | undefined;
  private load: { start: number[]; max1: number } | undefined;
  private t0 = 0n;
  private target: Target | undefined;

  constructor(private readonly opts: ProfileProbeOptions) {}

  async start(info: ProbeStartInfo): Promise<void> {
    // A probe object may serve many runs (a sweep): start clean each time.
    this.notes = [];
    this.mysql = undefined;
    this.locks = undefined;
    this.ticks = 0;
    this.pg = undefined;
    this.threads = undefined;
    this.load = undefined;
    this.target = info.target;
    const target = info.target;
    if (target.driver !== 'sqlite') {
      try {
        this.conn = await probeConnection(target, this.opts.connectTimeoutMs);
      } catch (e) {
        this.note('server waits', `the profile's own connection failed: ${(e as Error).message}`);
      }
    }
    try {
      const located = await locateServer(target, this.conn, info.sessionIds, this.opts.serverPid);
      if ('note' in located) this.notes.push(located.note);
      else
        this.threads = new ThreadSampler(located.server, await this.labeler(located.server, info.sessionIds));
    } catch (e) {
      this.note('server threads', (e as Error).message);
    }
    // The baseline is taken when the measured part starts: without a warm-up, now, before start() returns
    // (the run waits for it); after a warm-up, on a timer. Until 2026-12-07 it was on the timer either way,
    // 20 ms ahead, and the run's first statements could come while it was being read: MariaDB's statement
    // counts for the run came out a few short (294 executions of 300 in a CI run).
    if (info.warmupS <= 0) {
      this.baseline = this.takeBaseline(info);
      await this.baseline;
      return;
    }
    const delay = Math.max(0, info.measureAtMs - Date.now());
    this.baseline = new Promise<void>((resolve) => setTimeout(resolve, delay)).then(() =>
      this.takeBaseline(info),
    );
    if (delay === 0) await this.baseline;
  }

  /** The measured part is over and the run's connections are still open: the last samples of them. */
  async measured(): Promise<void> {
    await this.baseline?.catch(() => {});
    await this.stopSampling();
    await Promise.all([
      this.threads?.sample().catch((e: unknown) => this.failed('server threads', e)),
      this.locks?.sample().catch((e: unknown) => this.failed('thread lock waits', e)),
    ]);
  }

  private async stopSampling(): Promise<void> {
    this.sampling = false;
    if (this.threadTimer) clearTimeout(this.threadTimer);
    this.threadTimer = undefined;
    await this.threadInFlight?.catch(() => {});
  }

  async stop(result: RunResult | undefined): Promise<ProfileData> {
    await this.baseline?.catch(() => {});
    await this.stopSampling();
    const elapsed = Number(process.hrtime.bigint() - this.t0) / 1e9;
    const data: ProfileData = { elapsed_s: round(elapsed, 3), notes: [] };
    let waits: WaitProfile | undefined;
    if (this.locks) await this.locks.sample().catch((e: unknown) => this.failed('thread lock waits', e));
    if (this.mysql) waits = await this.mysql.end().catch((e: unknown) => this.failed('server waits', e));
    if (this.pg) {
      waits = await this.pg.stop();
      if (this.pg.error) this.note('server waits', `sampling pg_stat_activity failed: ${this.pg.error}`);
    }
    if (this.target?.driver === 'sqlite' && result) waits = sqliteBusy(this.target, result);
    if (waits) data.waits = waits;
    if (this.threads) {
      const t = await this.threads
        .finish(result?.totals.queries ?? 0, this.locks?.result())
        .catch((e: unknown) => this.failed('server threads', e));
      if (t) data.threads = t;
    }
    const end = await readLoadAvg();
    if (this.load && end) {
      data.load_avg = { start: this.load.start, end, max_1m: Math.max(this.load.max1, end[0] ?? 0) };
    }
    if (result) data.client_cpu_us_per_query = result.client_cpu.us_per_query;
    await this.conn?.close().catch(() => {});
    this.conn = undefined;
    data.notes = this.notes;
    return data;
  }

  private async takeBaseline(info: ProbeStartInfo): Promise<void> {
    this.t0 = process.hrtime.bigint();
    const la = await readLoadAvg();
    if (la) this.load = { start: la, max1: la[0] };
    if (this.conn && info.target.driver === 'mysql') {
      const m = new MysqlWaits(this.conn);
      const note = await m.begin().catch((e: unknown) => this.failed('server waits', e));
      if (note) this.notes.push(note);
      if (note === undefined || /some wait instruments/.test(note.why)) this.mysql = m;
      if (this.mysql && this.threads) {
        const locks = new MysqlThreadLocks(this.conn);
        await locks
          .sample()
          .then(() => {
            this.locks = locks;
          })
          .catch((e: unknown) => this.failed('thread lock waits', e));
      }
    } else if (this.conn && info.target.driver === 'postgres') {
      const pids = info.sessionIds.filter((n) => n > 0);
      if (pids.length === 0) this.note('server waits', 'the run reported no backend pids to sample');
      else {
        this.pg = new PgWaitSampler(this.conn, pids, this.opts.rateHz);
        this.pg.start();
      }
    }
    if (this.threads) {
      try {
        await this.threads.sample();
        this.sampling = true;
        this.scheduleThreadSample();
      } catch (e) {
        this.failed('server threads', e);
        this.threads = undefined;
      }
    }
  }

  private scheduleThreadSample(): void {
    if (!this.sampling) return;
    this.threadTimer = setTimeout(() => {
      // Per-thread lock waits cost the server a query: every other tick is enough.
      const lockSample = this.locks && this.ticks++ % 2 === 1 ? this.locks.sample() : undefined;
      this.threadInFlight = Promise.all([this.threads?.sample(), readLoadAvg(), lockSample])
        .then(([, la]) => {
          if (la && this.load) this.load.max1 = Math.max(this.load.max1, la[0]);
          this.scheduleThreadSample();
        })
        .catch(() => {});
    }, 1000 / THREAD_SAMPLE_HZ);
  }

  /** Names for the server's threads: the performance schema's for MariaDB/MySQL, the process title for PostgreSQL. */
  private async labeler(server: ServerProcess, sessionIds: readonly number[]): Promise<ThreadLabeler> {
    const sessions = new Set(sessionIds);
    const own = this.conn?.sessionId;
    if (server.withChildren) {
      return async (t) => {
        if (t.pid === own) return { name: "dbsmack's profile connection", session: false };
        const p = await processInfo(t.pid);
        const title = p?.cmdline.replace(/^postgres:\s*(\S+:\s*)?/, '') ?? t.comm;
        return { name: t.pid === server.pid ? 'postmaster' : title, session: sessions.has(t.pid) };
      };
    }
    const byTid = new Map<number, { name: string; conn: number | null }>();
    if (this.conn && this.target?.driver === 'mysql') {
      try {
        const rows = await this.conn.all(
          'SELECT THREAD_OS_ID AS tid, NAME AS name, PROCESSLIST_ID AS conn FROM performance_schema.threads',
        );
        for (const r of rows) {
          byTid.set(Number(r.tid), {
            name: String(r.name).replace(/^thread\//, ''),
            conn: r.conn === null ? null : Number(r.conn),
          });
        }
      } catch {
        // schema off: thread names from /proc below
      }
    }
    return async (t) => {
      const m = byTid.get(t.tid);
      if (m === undefined)
        return { name: t.tid === server.pid ? `${t.comm} (main)` : t.comm, session: false };
      if (m.conn !== null && m.conn === own) return { name: "dbsmack's profile connection", session: false };
      const session = m.conn !== null && sessions.has(m.conn);
      return { name: m.conn !== null ? `${m.name} #${m.conn}` : m.name, session };
    };
  }

  private note(what: string, why: string, hint?: string): void {
    this.notes.push({ what, why, ...(hint ? { hint } : {}) });
  }

  private failed(what: string, e: unknown): undefined {
    const code = (e as NodeJS.ErrnoException).code;
    if (code === 'EACCES' || code === 'EPERM') {
      this.note(
        what,
        `permission denied reading ${(e as NodeJS.ErrnoException).path ?? '/proc'}: the server runs as another user and /proc hides its threads`,
        "run dbsmack as root or as the server's user (or mount /proc without hidepid)",
      );
    } else this.note(what, `failed: ${(e as Error).message}`);
    return undefined;
  }
}

/** SQLite has no server: its waits are the busy errors and retries the clients met. */
export function sqliteBusy(target: Target, r: RunResult): SqliteBusyProfile {
  const busy = r.errors
    .filter((e) => /^SQLITE_(BUSY|LOCKED)/.test(e.code))
    .map((e) => ({ code: e.code, count: e.count }));
  const timeout = Number(target.params.busy_timeout ?? 5000);
  const share =
    r.client_stats.length > 0 && r.elapsed_s > 0
      ? r.client_stats.reduce((s, c) => s + c.busy_s, 0) / r.client_stats.length / r.elapsed_s
      : 0;
  return {
    kind: 'sqlite',
    busy_timeout_ms: Number.isFinite(timeout) ? timeout : 5000,
    busy,
    retries: r.totals.retries,
    client_busy_share: round(Math.min(1, share), 4),
  };
}
