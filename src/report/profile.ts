/**
 * Text reports of `--profile` and of the scheduling experiments: below one run's summary
 * (`renderProfileText`), one line per run for sweeps (`profileSummaryLine`), and several runs side by side
 * for `compare` (`renderProfileComparison`). Pure functions of RunResults.
 */
import { describeSched } from '../analysis/compare.ts';
import type { SweepResult } from '../analysis/types.ts';
import type {
  ProfileData,
  ProfileNote,
  ServerSched,
  ServerThreads,
  ThreadStat,
} from '../metrics/profile-types.ts';
import type { RunResult } from '../metrics/run-result.ts';
import { fmtRate, table } from './format.ts';
import { functionRatioTables } from './stacks-compare.ts';
import { codeProfileLines, codeSummary } from './stacks-text.ts';

/** The optional fields this feature adds to a RunResult. */
export type ProfiledResult = RunResult & { profile?: ProfileData; server_sched?: ServerSched };

const TOP_WAITS = 15;
const TOP_THREADS = 10;
const TOP_DIGESTS = 5;

/**
 * Condition waits are where threads park when they have nothing to do (a timer thread, an idle purge
 * thread): long, but not contention. They are listed apart so that mutexes and I/O lead the table.
 */
const isCond = (event: string): boolean => event.startsWith('wait/synch/cond/');

const f1 = (v: number): string => v.toFixed(1);
const f2 = (v: number): string => v.toFixed(2);
const pctOf = (share: number): string => `${(share * 100).toFixed(1)}%`;

function schedLine(s: ServerSched): string {
  const where = s.pid !== undefined ? ` to ${s.threads} threads of pid ${s.pid}` : '';
  const before = s.before ? ` (before: ${s.before})` : '';
  if (!s.applied) return `scheduling: ${describeSched(s)}${before}`;
  return `scheduling: ${describeSched(s)} applied${where}${before}; ${s.restored ? 'restored after the run' : 'NOT fully restored'}`;
}

/** The one-line summary of the server's threads over a run. */
export function threadsSummary(t: ServerThreads, elapsedS: number, clientUsPerQuery?: number): string {
  const e = elapsedS > 0 ? elapsedS : 1;
  const c = t.totals;
  const client = clientUsPerQuery !== undefined ? ` vs dbsmack ${f1(clientUsPerQuery)} µs` : '';
  return (
    `server ${t.command} pid ${t.pid}: ${c.threads} threads, CPU ${f2(c.cpu_s / e)} of a core ` +
    `(usr ${f2(c.usr_s)} s, sys ${f2(c.sys_s)} s), run-queue wait ${f2(c.lat_s)} s, ` +
    (c.lck_s !== undefined ? `lock wait ${f2(c.lck_s)} s, ` : '') +
    `${fmtRate(c.vcx / e)} vcx/s, ${fmtRate(c.icx / e)} icx/s; ` +
    `CPU per query: server ${f1(c.cpu_us_per_query)} µs${client}`
  );
}

/** One line per run for sweep tables and logs; undefined when the run has no profile. */
export function profileSummaryLine(r: ProfiledResult): string | undefined {
  const p = r.profile;
  if (p === undefined && r.server_sched === undefined) return undefined;
  const parts: string[] = [];
  if (r.server_sched) parts.push(describeSched(r.server_sched));
  if (p?.threads) parts.push(threadsSummary(p.threads, p.elapsed_s, p.client_cpu_us_per_query));
  const w = p?.waits;
  const top = w?.kind === 'mysql' ? w.waits.find((x) => !isCond(x.event)) : undefined;
  if (top) parts.push(`top wait ${top.event} ${f1(top.wait_ms)} ms`);
  if (w?.kind === 'postgres' && w.events[0])
    parts.push(`top wait ${w.events[0].type}:${w.events[0].event} ${pctOf(w.events[0].share)}`);
  if (w?.kind === 'sqlite')
    parts.push(`${w.busy.reduce((s, b) => s + b.count, 0)} busy, ${w.retries} retries`);
  if (p?.load_avg) parts.push(`load ${f2(p.load_avg.start[0] ?? 0)}→${f2(p.load_avg.end[0] ?? 0)}`);
  const code = codeSummary(r);
  if (code) parts.push(code);
  return parts.join('; ');
}

function threadRows(rows: ThreadStat[], lck: boolean): string[][] {
  return rows.map((t) => [
    `${t.tid}${t.session ? '*' : ''}`,
    f1(t.usr_pct),
    f1(t.sys_pct),
    ...(lck ? [f1(t.lck_pct ?? 0)] : []),
    f1(t.lat_pct),
    f1(t.cpu_pct),
    String(t.vcx),
    String(t.icx),
    String(t.nice),
    t.policy,
    t.name.length > 48 ? `${t.name.slice(0, 47)}…` : t.name,
  ]);
}

function notesText(notes: ProfileNote[]): string[] {
  return notes.map((n) => `  ${n.what}: ${n.why}${n.hint ? `\n    hint: ${n.hint}` : ''}`);
}

/** The profile section below a run's text summary; undefined when the run was not profiled. */
export function renderProfileText(res: RunResult): string | undefined {
  const r = res as ProfiledResult;
  const p = r.profile;
  if (p === undefined && r.server_sched === undefined) return undefined;
  const out: string[] = [];
  out.push(`profile${p ? ` (${f2(p.elapsed_s)} s observed)` : ''}:`);
  if (r.server_sched) out.push(schedLine(r.server_sched));
  const w = p?.waits;
  if (w?.kind === 'mysql') {
    const e = p && p.elapsed_s > 0 ? p.elapsed_s : 1;
    out.push(
      `server waits (performance_schema${w.instruments_enabled > 0 ? `, ${w.instruments_enabled} wait instruments turned on for the run` : ''}), ${w.waits.length} event names:`,
    );
    out.push(
      table(
        ['event', 'count', 'total ms', 'ms/s', 'avg µs'],
        w.waits
          .filter((x) => !isCond(x.event))
          .slice(0, TOP_WAITS)
          .map((x) => [
            x.event,
            String(x.count),
            f2(x.wait_ms),
            f2(x.wait_ms / e),
            f2((x.wait_ms * 1000) / Math.max(1, x.count)),
          ]),
      ),
    );
    const conds = w.waits.filter((x) => isCond(x.event));
    if (conds.length > 0) {
      out.push(
        `condition waits (threads parked, mostly idle): ${conds
          .slice(0, 4)
          .map((x) => `${x.event.replace(/^wait\/synch\/cond\//, '')} ${x.count}× ${f1(x.wait_ms)} ms`)
          .join(', ')}`,
      );
    }
    out.push(`idle (connections waiting for their client): ${f1(w.idle_ms)} ms`);
    if (w.statements.length > 0) {
      out.push(
        `statements by kind: ${w.statements
          .slice(0, 6)
          .map((x) => `${x.event.replace(/^statement\//, '')} ${x.count} (${f1(x.wait_ms)} ms)`)
          .join(', ')}`,
      );
    }
    if (w.digests.length > 0) {
      out.push('statements by total time (digests):');
      out.push(
        table(
          ['count', 'total ms', 'lock ms', 'rows exam', 'statement'],
          w.digests
            .slice(0, TOP_DIGESTS)
            .map((d) => [
              String(d.count),
              f2(d.total_ms),
              f2(d.lock_ms),
              String(d.rows_examined),
              d.text.length > 70 ? `${d.text.slice(0, 69)}…` : d.text,
            ]),
        ),
      );
    }
  } else if (w?.kind === 'postgres') {
    out.push(
      `server waits (pg_stat_activity at ${w.rate_hz} Hz: ${w.rounds} rounds, ${w.samples} samples of ${w.backends} backends):`,
    );
    out.push(
      table(
        ['wait_event_type', 'wait_event', 'share', 'samples'],
        w.events.map((x) => [x.type, x.event, pctOf(x.share), String(x.samples)]),
      ),
    );
    if (w.locks.length > 0) {
      out.push('lock waits (pg_locks, not granted):');
      out.push(
        table(
          ['locktype', 'mode', 'share', 'samples'],
          w.locks.map((l) => [l.locktype, l.mode, pctOf(l.share), String(l.samples)]),
        ),
      );
    } else out.push('lock waits (pg_locks, not granted): none seen');
  } else if (w?.kind === 'sqlite') {
    const busy = w.busy.map((b) => `${b.code} ${b.count}`).join(', ') || 'none';
    out.push(
      `SQLite waits: busy errors ${busy}; ${w.retries} retries; busy_timeout ${w.busy_timeout_ms} ms; clients inside events ${pctOf(w.client_busy_share)} of the time`,
    );
  }
  if (p?.threads) {
    const t = p.threads;
    out.push(threadsSummary(t, p.elapsed_s, p.client_cpu_us_per_query));
    out.push(
      `top threads (of ${t.threads.length}; * = the run's own connections; % of each thread's time; ${t.started} started, ${t.ended} ended during the run):`,
    );
    const lck = t.totals.lck_s !== undefined;
    out.push(
      table(
        ['TID', 'USR', 'SYS', ...(lck ? ['LCK'] : []), 'LAT', 'CPU', 'VCX', 'ICX', 'NICE', 'POLICY', 'NAME'],
        threadRows(t.threads.slice(0, TOP_THREADS), lck),
      ),
    );
  } else if (p?.client_cpu_us_per_query !== undefined) {
    out.push(`dbsmack CPU per query: ${f1(p.client_cpu_us_per_query)} µs (server threads not measured)`);
  }
  if (p?.load_avg) {
    const l = p.load_avg;
    out.push(
      `load average: ${l.start.map(f2).join(' ')} at the start, ${l.end.map(f2).join(' ')} at the end (1-min max ${f2(l.max_1m)})`,
    );
  }
  out.push(...codeProfileLines(r));
  const notes = [...(r.server_sched?.notes ?? []), ...(p?.notes ?? [])];
  if (notes.length > 0) {
    out.push('not measured:');
    out.push(...notesText(notes));
  }
  return `${out.join('\n')}\n`;
}

/** A run with the label it goes by in a comparison. */
export interface LabelledResult {
  label: string;
  result: RunResult;
}

function threadGroup(t: ServerThreads | undefined, session: boolean, elapsedS: number) {
  if (t === undefined) return undefined;
  const rows = t.threads.filter((x) => x.session === session);
  const e = elapsedS > 0 ? elapsedS : 1;
  const sumOf = (f: (x: ThreadStat) => number): number => rows.reduce((s, x) => s + f(x), 0);
  // Shares are of each thread's own time; weighting by that time gives the group's share of thread-time.
  const time = sumOf((x) => x.observed_s) || 1;
  return {
    n: rows.length,
    cpu: sumOf((x) => x.cpu_pct * x.observed_s) / time,
    lat: sumOf((x) => x.lat_pct * x.observed_s) / time,
    lck: t.totals.lck_s !== undefined ? sumOf((x) => (x.lck_pct ?? 0) * x.observed_s) / time : undefined,
    vcx: sumOf((x) => x.vcx) / e,
    icx: sumOf((x) => x.icx) / e,
  };
}

/** One table of the side-by-side profile comparison, for text and HTML alike. */
export interface ProfileTable {
  /** What the table shows, with its unit; empty for the first (overview) table. */
  title: string;
  header: string[];
  rows: string[][];
}

/**
 * Several runs side by side as tables: throughput, the scheduling set-up, CPU per query of server and
 * client, thread statistics (the run's connection threads and the rest), the wait profiles, and what could
 * not be measured. Columns are the runs.
 */
export function profileComparisonTables(runs: readonly LabelledResult[]): {
  tables: ProfileTable[];
  notes: string[];
} {
  const header = ['', ...runs.map((r) => r.label)];
  const rs = runs.map((r) => r.result as ProfiledResult);
  const row = (name: string, f: (r: ProfiledResult) => string | undefined): string[] => [
    name,
    ...rs.map((r) => f(r) ?? '-'),
  ];
  const rows: string[][] = [
    row('clients', (r) => String(r.clients)),
    row('queries/s', (r) => fmtRate(r.totals.qps)),
    row('scheduling', (r) => describeSched(r.server_sched)),
    row('server CPU µs/query', (r) =>
      r.profile?.threads ? f1(r.profile.threads.totals.cpu_us_per_query) : undefined,
    ),
    row('dbsmack CPU µs/query', (r) => (r.client_cpu ? f1(r.client_cpu.us_per_query) : undefined)),
  ];
  for (const [session, what] of [
    [true, 'connection threads'],
    [false, 'other threads'],
  ] as const) {
    const g = (r: ProfiledResult) => threadGroup(r.profile?.threads, session, r.profile?.elapsed_s ?? 0);
    rows.push(row(`${what}`, (r) => (g(r) ? String(g(r)?.n) : undefined)));
    rows.push(row('  CPU %', (r) => (g(r) ? f1(g(r)?.cpu ?? 0) : undefined)));
    rows.push(row('  LAT % (run queue)', (r) => (g(r) ? f2(g(r)?.lat ?? 0) : undefined)));
    rows.push(row('  LCK % (lock wait)', (r) => (g(r)?.lck !== undefined ? f2(g(r)?.lck ?? 0) : undefined)));
    rows.push(row('  VCX/s', (r) => (g(r) ? fmtRate(g(r)?.vcx ?? 0) : undefined)));
    rows.push(row('  ICX/s', (r) => (g(r) ? fmtRate(g(r)?.icx ?? 0) : undefined)));
  }
  rows.push(
    row('load avg 1-min max', (r) => (r.profile?.load_avg ? f2(r.profile.load_avg.max_1m) : undefined)),
  );
  const tables: ProfileTable[] = [{ title: '', header, rows }];

  // Wait events: the union of each run's top events, in ms of wait per second of run (MySQL) or share of
  // samples (PostgreSQL), so that runs of different lengths compare.
  const mysql = new Map<string, number>();
  const pg = new Map<string, number>();
  for (const r of rs) {
    const w = r.profile?.waits;
    const e = r.profile && r.profile.elapsed_s > 0 ? r.profile.elapsed_s : 1;
    if (w?.kind === 'mysql')
      for (const x of w.waits.filter((y) => !isCond(y.event)).slice(0, TOP_WAITS))
        mysql.set(x.event, Math.max(mysql.get(x.event) ?? 0, x.wait_ms / e));
    if (w?.kind === 'postgres')
      for (const x of w.events)
        pg.set(`${x.type}:${x.event}`, Math.max(pg.get(`${x.type}:${x.event}`) ?? 0, x.share));
  }
  if (mysql.size > 0) {
    const names = [...mysql.entries()].sort((a, b) => b[1] - a[1]).map(([n]) => n);
    tables.push({
      title: 'server waits, ms of wait per second of run (performance_schema)',
      header: ['event', ...runs.map((r) => r.label)],
      rows: names.slice(0, TOP_WAITS).map((n) =>
        row(n, (r) => {
          const w = r.profile?.waits;
          if (w?.kind !== 'mysql') return undefined;
          const x = w.waits.find((y) => y.event === n);
          return f2((x?.wait_ms ?? 0) / (r.profile && r.profile.elapsed_s > 0 ? r.profile.elapsed_s : 1));
        }),
      ),
    });
  }
  if (pg.size > 0) {
    const names = [...pg.entries()].sort((a, b) => b[1] - a[1]).map(([n]) => n);
    tables.push({
      title: 'server waits, share of backend samples (pg_stat_activity)',
      header: ['wait', ...runs.map((r) => r.label)],
      rows: names.slice(0, TOP_WAITS).map((n) =>
        row(n, (r) => {
          const w = r.profile?.waits;
          if (w?.kind !== 'postgres') return undefined;
          const x = w.events.find((y) => `${y.type}:${y.event}` === n);
          return pctOf(x?.share ?? 0);
        }),
      ),
    });
  }
  tables.push(...functionRatioTables(runs));
  const notes = runs.flatMap((l) => {
    const r = l.result as ProfiledResult;
    return [...(r.server_sched?.notes ?? []), ...(r.profile?.notes ?? [])].map(
      (n) => `${l.label}: ${n.what}: ${n.why}`,
    );
  });
  return { tables, notes };
}

/**
 * Several runs side by side: throughput, the scheduling set-up, CPU per query of server and client, thread
 * statistics (the run's connection threads and the rest) and the wait profiles. Columns are the runs.
 */
export function renderProfileComparison(runs: readonly LabelledResult[]): string {
  const { tables, notes } = profileComparisonTables(runs);
  const out: string[] = [];
  for (const t of tables) {
    if (t.title) out.push('', `${t.title}:`);
    out.push(table(t.header, t.rows));
  }
  if (notes.length > 0) out.push('', 'not measured:', ...notes.map((n) => `  ${n}`));
  return `${out.join('\n')}\n`;
}

/** Below a sweep's table: the profile summary line of every run that has one; undefined when none has. */
export function renderSweepProfiles(s: SweepResult): string | undefined {
  const lines: string[] = [];
  for (const p of s.points) {
    for (const r of p.runs) {
      const line = r.result ? profileSummaryLine(r.result as ProfiledResult) : undefined;
      if (line) lines.push(`  ${p.clients} clients, repeat ${r.repeat}: ${line}`);
    }
  }
  return lines.length > 0 ? `\nprofile per run:\n${lines.join('\n')}\n` : undefined;
}
