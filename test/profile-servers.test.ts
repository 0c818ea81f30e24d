/**
 * `--profile` against the real servers: MariaDB's waits by name from the performance schema, PostgreSQL's
 * wait events of the run's backends, and the server's thread table checked against an independent reading of
 * /proc taken before and after the run.
 */
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { type TestContext, test } from 'node:test';
import { loadDriver } from '../src/driver/index.ts';
import type { Connection, Target } from '../src/driver/types.ts';
import { parseTarget } from '../src/driver/url.ts';
import { isLocalTarget, locateServer } from '../src/probe/server-process.ts';
import { renderProfileComparison, renderProfileText } from '../src/report/profile.ts';
import { ROOT, runCli } from './helpers/cli.ts';
import { missing } from './helpers/preconditions.ts';
import {
  MYSQL_URL,
  needLocalServerPid,
  needServer,
  PG_URL,
  SERVER_STATE_LOCK,
  withServerLock,
} from './helpers/servers.ts';

const WORKLOAD = path.join(ROOT, 'test', 'fixtures', 'workloads', 'profile-insert.ts');
const TABLE = `dbsmack_prof_${process.pid}`;

interface Switches {
  vcx: number;
  icx: number;
}

/** Context switches of every thread of `pid`, read straight from /proc (not through dbsmack's reader). */
function switchesOf(pid: number): Map<number, Switches> {
  const out = new Map<number, Switches>();
  for (const tid of readdirSync(`/proc/${pid}/task`)) {
    try {
      const s = readFileSync(`/proc/${pid}/task/${tid}/status`, 'utf8');
      out.set(Number(tid), {
        vcx: Number(/^voluntary_ctxt_switches:\s*(\d+)/m.exec(s)?.[1]),
        icx: Number(/^nonvoluntary_ctxt_switches:\s*(\d+)/m.exec(s)?.[1]),
      });
    } catch {
      // the thread ended while we read
    }
  }
  return out;
}

async function connect(target: Target): Promise<Connection> {
  return (await loadDriver(target.driver)).connect(target, { connectTimeoutMs: 5000 });
}

interface Row {
  tid: number;
  session: boolean;
  vcx: number;
  icx: number;
  usr_pct: number;
  sys_pct: number;
  lat_pct: number;
  cpu_pct: number;
}

async function mariadbProfile(t: TestContext, target: Target): Promise<void> {
  const conn = await connect(target);
  try {
    const [ps] = await conn.all('SELECT @@performance_schema AS on_');
    if (Number(ps?.on_) !== 1) {
      return missing(
        t,
        'the performance schema is off: restart MariaDB with --performance-schema=ON (.ci/run does)',
      );
    }
    const pid = await needLocalServerPid(t, 'mysql');
    if (pid === undefined) return;
    const instruments = async (): Promise<string> =>
      JSON.stringify(
        await conn.all(
          "SELECT NAME, ENABLED, TIMED FROM performance_schema.setup_instruments WHERE NAME LIKE 'wait/%' ORDER BY NAME",
        ),
      );
    const instrumentsBefore = await instruments();
    const before = switchesOf(pid);
    const r = await runCli([
      'run',
      WORKLOAD,
      '--table',
      TABLE,
      '--db',
      MYSQL_URL,
      '--clients',
      '2',
      '--events',
      '300',
      '--profile',
      '--format',
      'json',
    ]);
    const after = switchesOf(pid);
    assert.equal(r.code, 0, r.stderr);
    const res = JSON.parse(r.stdout);
    const p = res.profile;
    assert.equal(p.waits.kind, 'mysql', JSON.stringify(p.notes));
    const waits = p.waits.waits as Array<{ event: string; count: number; wait_ms: number }>;
    assert.ok(
      waits.some((w) => w.event.startsWith('wait/synch/mutex/') && w.count > 0),
      `no mutex waits in ${waits.map((w) => w.event).join(', ')}`,
    );
    assert.ok(
      waits.some((w) => w.event.startsWith('wait/io/') && w.count > 0),
      `no I/O waits in ${waits.map((w) => w.event).join(', ')}`,
    );
    // Prepared executions: MariaDB counts them by kind, not by digest.
    const stmts = p.waits.statements as Array<{ event: string; count: number }>;
    const executed = stmts.find((x) => x.event === 'statement/com/Execute')?.count ?? 0;
    const digested = (p.waits.digests as Array<{ text: string; count: number }>)
      .filter((d) => /INSERT INTO/i.test(d.text))
      .reduce((s, d) => s + d.count, 0);
    assert.ok(executed + digested >= 300, `only ${executed} executions and ${digested} INSERT digests`);
    // The instruments dbsmack turned on for the run are off again.
    assert.equal(await instruments(), instrumentsBefore);

    // The thread table: the server's threads, the run's two connections among them, and counts that fit in
    // what /proc shows for the same threads over a longer window around the run.
    const th = p.threads;
    assert.equal(th.pid, pid);
    assert.equal(th.found_by, 'pid_file');
    const rows = th.threads as Row[];
    assert.equal(rows.filter((x) => x.session).length, 2);
    let checked = 0;
    for (const row of rows) {
      for (const k of ['usr_pct', 'sys_pct', 'lat_pct', 'cpu_pct'] as const) {
        assert.ok(row[k] >= 0 && row[k] <= 100, `${k} ${row[k]}`);
      }
      const a = before.get(row.tid);
      const b = after.get(row.tid);
      if (a === undefined || b === undefined) continue;
      checked++;
      assert.ok(
        row.vcx >= 0 && row.vcx <= b.vcx - a.vcx,
        `tid ${row.tid}: vcx ${row.vcx} vs /proc ${b.vcx - a.vcx}`,
      );
      assert.ok(
        row.icx >= 0 && row.icx <= b.icx - a.icx,
        `tid ${row.tid}: icx ${row.icx} vs /proc ${b.icx - a.icx}`,
      );
    }
    assert.ok(checked >= 3, `only ${checked} threads lived through the run`);
    for (const s of rows.filter((x) => x.session)) {
      assert.ok(s.vcx > 0, `session thread ${s.tid} never switched`);
      // prstat's LCK: lock wait from the performance schema's per-thread summary.
      const lck = (s as unknown as { lck_pct?: number }).lck_pct;
      assert.ok(lck !== undefined && lck >= 0 && lck <= 100, `session thread ${s.tid}: LCK ${lck}`);
    }
    assert.ok(th.totals.lck_s > 0, `no lock wait at all: ${th.totals.lck_s}`);
    assert.equal(
      th.totals.vcx,
      rows.reduce((s, x) => s + x.vcx, 0),
    );

    const text = renderProfileText(res) ?? '';
    assert.match(text, /server waits \(performance_schema/);
    assert.match(text, /wait\/(synch|io)\//);
    assert.match(text, /top threads \(of \d+/);
    assert.match(text, /TID\s+USR\s+SYS\s+LCK\s+LAT\s+CPU\s+VCX\s+ICX/);
    assert.match(text, /CPU per query: server [\d.]+ µs vs dbsmack [\d.]+ µs/);
    const cmp = renderProfileComparison([
      { label: 'A', result: res },
      { label: 'B', result: res },
    ]);
    assert.match(cmp, /server waits, ms of wait per second of run/);
  } finally {
    await conn.query(`DROP TABLE IF EXISTS ${TABLE}`).catch(() => {});
    await conn.close();
  }
}

test('MariaDB with the performance schema: mutex and I/O waits by name, and a thread table that matches /proc', async (t) => {
  const target = await needServer(t, 'mysql');
  if (!target) return;
  // --profile turns wait instruments on for the run and back off after it: server-wide state.
  await withServerLock(SERVER_STATE_LOCK, () => mariadbProfile(t, target));
});

test("PostgreSQL: wait events of the run's own backends, and its backends in the thread table", async (t) => {
  const target = await needServer(t, 'postgres');
  if (!target) return;
  const conn = await connect(target);
  try {
    // The thread table needs the server's processes in this host's /proc, as seen from here.
    if ((await needLocalServerPid(t, 'postgres')) === undefined) return;
    const r = await runCli([
      'run',
      WORKLOAD,
      '--table',
      TABLE,
      '--db',
      PG_URL,
      '--clients',
      '2',
      '--time',
      '1',
      '--profile',
      '--profile-rate',
      '50',
      '--format',
      'json',
    ]);
    assert.equal(r.code, 0, r.stderr);
    const res = JSON.parse(r.stdout);
    const w = res.profile.waits;
    assert.equal(w.kind, 'postgres', JSON.stringify(res.profile.notes));
    assert.equal(w.backends, 2);
    assert.ok(w.rounds > 0 && w.samples >= w.rounds, `${w.rounds} rounds, ${w.samples} samples`);
    const total = (w.events as Array<{ samples: number; share: number }>).reduce((s, e) => s + e.samples, 0);
    assert.equal(total, w.samples);
    assert.ok(
      w.events.some((e: { type: string }) => e.type === 'Client' || e.type === 'CPU' || e.type === 'IO'),
      JSON.stringify(w.events),
    );
    const th = res.profile.threads;
    assert.ok(th, `the thread table of a server on this host: ${JSON.stringify(res.profile.notes)}`);
    assert.equal(th.found_by, 'backend_pid');
    const rows = th.threads as Row[];
    assert.equal(rows.filter((x) => x.session).length, 2);
    assert.ok(rows.some((x) => (x as unknown as { name: string }).name === 'postmaster'));
    const text = renderProfileText(res) ?? '';
    assert.match(text, /server waits \(pg_stat_activity at 50 Hz/);
    assert.match(text, /lock waits \(pg_locks, not granted\)/);
  } finally {
    await conn.query(`DROP TABLE IF EXISTS ${TABLE}`).catch(() => {});
    await conn.close();
  }
});

test('a server on another host is a note naming the host, not a guess', async () => {
  for (const url of ['mysql://root@db.example.invalid:3306/x', 'postgres://root@10.255.255.1/x']) {
    const target = parseTarget(url);
    assert.equal(isLocalTarget(target), false);
    const located = await locateServer(target, undefined, [], undefined);
    assert.ok('note' in located);
    assert.match(located.note.why, /is not on this host/);
    assert.match(located.note.hint ?? '', /--server-pid/);
  }
  for (const url of ['mysql://root@127.0.0.1/x', 'postgres://root@localhost/x', 'mysql://root@[::1]/x']) {
    assert.equal(isLocalTarget(parseTarget(url)), true, url);
  }
});
