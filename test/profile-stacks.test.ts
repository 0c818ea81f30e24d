/**
 * `--profile-stacks` and `--count-calls` against the real servers with the real perf: the functions MariaDB
 * and PostgreSQL were preempted in, calls of `open_table` against the run's own statement count, lock waits
 * by caller, the per-function ratios of a comparison with a `--server-nice` arm, and nothing left behind (no
 * uprobe, temporary directory or perf process) after a run, after Ctrl-C, and after a killed run followed
 * by the next one; a perf record that exits at once without a word is started again. Skipped with the
 * reason without perf or its rights; failing under CI=true.
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync, readlinkSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { type TestContext, test } from 'node:test';
import { loadDriver } from '../src/driver/index.ts';
import type { RunResult } from '../src/metrics/run-result.ts';
import { matchFunction, readElfSymbols } from '../src/probe/elf-symbols.ts';
import { serverIdentity } from '../src/probe/mysql-lock-callers.ts';
import { perfBlocked } from '../src/probe/perf-tool.ts';
import type { CodeProfile } from '../src/report/stacks-text.ts';
import { ROOT, runCli, startCli, tmpDir } from './helpers/cli.ts';
import { ownDatabase } from './helpers/own-database.ts';
import { needServer, SERVER_URLS } from './helpers/servers.ts';

type Profiled = RunResult & { profile: CodeProfile };

const SIZE = ['--table-size', '2000'];

async function needPerf(t: TestContext, uprobes: boolean): Promise<boolean> {
  const blocked = await perfBlocked('stacks', uprobes);
  if (blocked === undefined) return true;
  const why = `${blocked.why}${blocked.hint ? ` (${blocked.hint})` : ''}`;
  if (process.env.CI === 'true') throw new Error(`CI=true and perf cannot be used: ${why}`);
  t.skip(why);
  process.stderr.write(`# skipped: ${why}\n`);
  return false;
}

/** A database of the test's own with sbtest1 of 2000 rows, or undefined after skipping the test. */
async function sbtest(
  t: TestContext,
  driver: 'mysql' | 'postgres',
  label: string,
): Promise<string | undefined> {
  const own = await ownDatabase(t, driver, label);
  if (!own) return undefined;
  const r = await runCli(['prepare', 'oltp_read_write', '--db', own.url, ...SIZE]);
  assert.equal(r.code, 0, r.stderr);
  return own.url;
}

/** What a dbsmack process `pid` could have left: its uprobes, temporary directories and perf processes. */
function leftovers(pid: number): string[] {
  const out: string[] = [];
  for (const f of ['/sys/kernel/tracing/uprobe_events', '/sys/kernel/debug/tracing/uprobe_events']) {
    try {
      for (const line of readFileSync(f, 'utf8').split('\n'))
        if (line.includes(`:dbsmack_${pid}/`)) out.push(`uprobe ${line}`);
      break;
    } catch {
      // the other place
    }
  }
  for (const d of readdirSync(os.tmpdir()))
    if (d.startsWith(`dbsmack-stacks-${pid}-`)) out.push(`directory ${d}`);
  for (const p of readdirSync('/proc')) {
    if (!/^\d+$/.test(p)) continue;
    try {
      const cmd = readFileSync(`/proc/${p}/cmdline`, 'utf8');
      if (
        cmd.startsWith('perf\0') &&
        (cmd.includes(`dbsmack_${pid}:`) || cmd.includes(`dbsmack-stacks-${pid}-`))
      )
        out.push(`perf process ${p}`);
    } catch {
      // gone
    }
  }
  return out;
}

async function profiledRun(args: string[]): Promise<{ res: Profiled; pid: number; stderr: string }> {
  const { child, done } = startCli([...args, '--format', 'json', '--no-history']);
  const r = await done;
  assert.equal(r.code, 0, r.stderr);
  return { res: JSON.parse(r.stdout) as Profiled, pid: child.pid as number, stderr: r.stderr };
}

/** The server's own functions lead the ranking: of the first 20, nearly all are in its binary or its libraries. */
function assertServerFunctions(res: Profiled, binary: RegExp, must: string[]): void {
  const s = res.profile.stacks;
  assert.ok(s, `no stacks: ${JSON.stringify(res.profile.notes)}`);
  assert.ok(s.involuntary > 0 && s.voluntary > 0, `${s.involuntary} involuntary, ${s.voluntary} voluntary`);
  const top = s.preempted_in.slice(0, 20);
  const own = top.filter((f) => binary.test(f.module ?? '') || /^lib/.test(f.module ?? ''));
  assert.ok(own.length >= top.length - 1, top.map((f) => `${f.function} (${f.module})`).join(', '));
  const names = s.preempted_in.map((f) => f.function);
  for (const m of must) assert.ok(names.includes(m), `${m} not in ${names.slice(0, 30).join(', ')}`);
  for (let i = 1; i < s.preempted_in.length; i++)
    assert.ok((s.preempted_in[i - 1]?.count ?? 0) >= (s.preempted_in[i]?.count ?? 0), 'sorted by count');
  assert.ok(s.preempted_stacks.length > 0 && s.off_cpu !== undefined, 'stacks for the flame graphs');
}

/** Calls of a function against the statements the run sent in the window: the same order of magnitude. */
function assertCallsPerStatement(res: Profiled, fn: string, low: number, high: number): void {
  const calls = res.profile.calls?.[fn];
  const w = res.profile.code_window;
  assert.ok(calls !== undefined && w !== undefined, JSON.stringify(res.profile.notes));
  const statements = res.totals.qps * w.length_s;
  const perStatement = calls / statements;
  assert.ok(
    perStatement > low && perStatement < high,
    `${calls} calls of ${fn} for about ${statements.toFixed(0)} statements in ${w.length_s} s (${perStatement.toFixed(2)} each)`,
  );
}

/** Each lock caller is a function of the server: a source location, or a symbol of its binary. */
function assertLockCallers(res: Profiled, binary: string): void {
  const w = res.profile.code_window;
  const rows = res.profile.lock_callers ?? [];
  assert.ok(rows.length > 0, `no lock waits by caller: ${JSON.stringify(res.profile.notes)}`);
  for (const r of rows) assert.ok(r.count > 0 && r.wait_ms >= 0 && r.lock !== '', JSON.stringify(r));
  if (w?.lock_callers_from === 'performance_schema') {
    for (const r of rows)
      assert.match(r.caller, /^[\w.-]+\.(cc|c|h|ic|cpp):\d+$/, 'file:line of the server source');
    return;
  }
  assert.equal(w?.lock_callers_from, 'stacks');
  if (res.target.driver === 'mysql')
    assert.match(
      JSON.stringify(res.profile.notes),
      /SOURCE empty|showed no lock waits in the window|the performance schema is off/,
      'why the performance schema was not used',
    );
  const elf = readElfSymbols(binary);
  const named = rows.filter((r) => !/[<>(]|operator/.test(r.caller));
  assert.ok(named.length > 0);
  for (const r of named)
    assert.ok(
      matchFunction(elf.functions, r.caller).length > 0,
      `${r.caller} is not a function of ${binary}`,
    );
}

const binaryOf = (pid: number): string => readlinkSync(`/proc/${pid}/exe`);

test('MariaDB oltp_read_only: preempted in its own functions (dispatch_command), open_table once per select', async (t) => {
  if (!(await needPerf(t, true))) return;
  const url = await sbtest(t, 'mysql', 'ro');
  if (!url) return;
  const { res, pid } = await profiledRun([
    'run',
    'oltp_read_only',
    '--db',
    url,
    ...SIZE,
    '--clients',
    '8',
    '--time',
    '6',
    '--stacks-window',
    '3',
    '--profile-stacks',
    '--count-calls',
    'open_table',
  ]);
  assertServerFunctions(res, /^mariadbd|^mysqld/, ['dispatch_command']);
  // 14 of oltp_read_only's 16 statements are selects on sbtest1
  assertCallsPerStatement(res, 'open_table', 0.3, 3);
  assert.equal(res.profile.code_window?.calls_probes?.open_table, 1);
  assert.deepEqual(leftovers(pid), []);
});

test('a perf record that exits at once without a word is started again (a server thread ended while it attached)', async (t) => {
  if (!(await needPerf(t, false))) return;
  const url = await sbtest(t, 'mysql', 'retry');
  if (!url) return;
  // a perf of our own first on PATH: its first `record` exits 255 with nothing on stderr, as perf -q does
  // when a thread of the server ends while it attaches; everything else goes to the real one
  const real = (process.env.PATH ?? '')
    .split(':')
    .map((d) => path.join(d, 'perf'))
    .find((f) => existsSync(f));
  assert.ok(real, 'perf on PATH');
  const dir = tmpDir('dbsmack-fake-perf-');
  const mark = path.join(dir, 'failed-once');
  writeFileSync(
    path.join(dir, 'perf'),
    `#!/bin/sh\nif [ "$1" = record ] && [ ! -e ${JSON.stringify(mark)} ]; then : > ${JSON.stringify(mark)}; exit 255; fi\nexec ${JSON.stringify(real)} "$@"\n`,
    { mode: 0o755 },
  );
  const { child, done } = startCli(
    [
      'run',
      'oltp_point_select',
      '--db',
      url,
      ...SIZE,
      '--clients',
      '2',
      '--time',
      '4',
      '--stacks-window',
      '1',
      '--profile-stacks',
      '--format',
      'json',
      '--no-history',
    ],
    { env: { PATH: `${dir}:${process.env.PATH ?? ''}` } },
  );
  const r = await done;
  assert.equal(r.code, 0, r.stderr);
  const res = JSON.parse(r.stdout) as Profiled;
  assert.ok(existsSync(mark), 'the first perf record failed');
  assert.ok(res.profile.stacks, `no stacks after the second try: ${JSON.stringify(res.profile.notes)}`);
  assert.ok(res.profile.stacks.involuntary + res.profile.stacks.voluntary > 0);
  assert.doesNotMatch(JSON.stringify(res.profile.notes ?? []), /could not start/);
  assert.deepEqual(leftovers(child.pid as number), []);
});

test('MariaDB oltp_read_write: the lock waits by caller name the server’s code', async (t) => {
  if (!(await needPerf(t, false))) return;
  const url = await sbtest(t, 'mysql', 'rw');
  if (!url) return;
  const dir = tmpDir('dbsmack-stacks-test-');
  const folded = path.join(dir, 'rw.folded');
  const { res, pid } = await profiledRun([
    'run',
    'oltp_read_write',
    '--db',
    url,
    ...SIZE,
    '--clients',
    '8',
    '--time',
    '6',
    '--stacks-window',
    '3',
    '--profile-stacks',
    '--stacks-out',
    folded,
  ]);
  assertServerFunctions(res, /^mariadbd|^mysqld/, ['dispatch_command']);
  const stacks = res.profile.stacks;
  assert.ok(stacks);
  const server = Number(/^process (\d+)/.exec(stacks.recorded)?.[1]);
  assertLockCallers(res, binaryOf(server));
  assert.equal(stacks.folded_file, folded);
  const lines = readFileSync(folded, 'utf8').trim().split('\n');
  const total = lines.reduce((s, l) => s + Number(l.slice(l.lastIndexOf(' ') + 1)), 0);
  assert.equal(total, stacks.involuntary + stacks.voluntary, 'every switch in the folded file');
  assert.ok(readFileSync(stacks.off_cpu_file ?? '', 'utf8').length > 0);
  assert.deepEqual(leftovers(pid), []);
});

for (const workload of ['oltp_read_only', 'oltp_read_write'] as const) {
  test(`PostgreSQL ${workload}: the run's backends preempted in postgres's own functions`, async (t) => {
    if (!(await needPerf(t, workload === 'oltp_read_only'))) return;
    const url = await sbtest(t, 'postgres', workload === 'oltp_read_only' ? 'pg_ro' : 'pg_rw');
    if (!url) return;
    const { res, pid } = await profiledRun([
      'run',
      workload,
      '--db',
      url,
      ...SIZE,
      '--clients',
      '8',
      '--time',
      '6',
      '--stacks-window',
      '3',
      '--profile-stacks',
      // concurrent deletes and inserts of the same id collide on PostgreSQL (sysbench's clients meet it too)
      ...(workload === 'oltp_read_only' ? ['--count-calls', 'PortalRun'] : ['--ignore-errors', '23505']),
    ]);
    assertServerFunctions(res, /^postgres$/, ['PostgresMain']);
    assert.match(res.profile.stacks?.recorded ?? '', /the run's 8 backends of postmaster \d+/);
    // every statement, BEGIN and COMMIT too, runs a portal
    if (workload === 'oltp_read_only') assertCallsPerStatement(res, 'PortalRun', 0.3, 3);
    assert.deepEqual(leftovers(pid), []);
  });
}

test('compare of a baseline and a --server-nice arm gives the per-function ratios of preemptions', async (t) => {
  if (!(await needPerf(t, false))) return;
  const url = await sbtest(t, 'mysql', 'cmp');
  if (!url) return;
  const dir = tmpDir('dbsmack-stacks-compare-');
  const common = [
    'run',
    'oltp_read_only',
    '--db',
    url,
    ...SIZE,
    '--clients',
    '8',
    '--time',
    '4',
    '--profile-stacks',
    '--no-history',
    '-q',
  ];
  for (const [label, extra] of [
    ['base', []],
    ['nice', ['--server-nice', '10']],
  ] as const) {
    const r = await runCli([...common, '--label', label, ...extra, '-o', path.join(dir, `${label}.json`)]);
    assert.equal(r.code, 0, r.stderr);
  }
  const c = await runCli(['compare', path.join(dir, 'base.json'), path.join(dir, 'nice.json')]);
  assert.equal(c.code, 0, c.stderr);
  assert.match(
    c.stdout,
    /preempted when in function, switches per second of the stacks window \(candidate\/base\):/,
  );
  assert.match(c.stdout, /^function +base +nice +nice\/base$/m);
  assert.match(c.stdout, /^dispatch_command +[\d.]+ +[\d.]+ +([\d.]+×|new)$/m);
});

/** Resolve once `stderr` of a running dbsmack shows `lines` interval lines (the window is open by then). */
function intervals(child: ReturnType<typeof startCli>['child'], lines: number): Promise<void> {
  return new Promise((resolve, reject) => {
    let text = '';
    const timer = setTimeout(
      () => reject(new Error(`no ${lines} interval lines within 120 s:\n${text}`)),
      120_000,
    );
    child.stderr?.on('data', (d: Buffer) => {
      text += d.toString();
      if ((text.match(/^\[ *\d+s \]/gm) ?? []).length >= lines) {
        clearTimeout(timer);
        resolve();
      }
    });
  });
}

const LONG = ['--clients', '4', '--time', '20', '--stacks-window', '16', '--profile-stacks', '--progress'];

test('Ctrl-C in the window: the partial result keeps what was recorded, and nothing is left behind', async (t) => {
  if (!(await needPerf(t, true))) return;
  const url = await sbtest(t, 'mysql', 'int');
  if (!url) return;
  const args = ['run', 'oltp_read_only', '--db', url, ...SIZE, ...LONG, '--count-calls', 'open_table'];
  const { child, done } = startCli([...args, '--format', 'json', '--no-history', '--report-interval', '1']);
  await intervals(child, 4);
  const pid = child.pid as number;
  assert.ok(
    leftovers(pid).some((l) => l.startsWith('uprobe')),
    'the probes are in place while it runs',
  );
  child.kill('SIGINT');
  const r = await done;
  assert.equal(r.code, 130, r.stderr);
  const res = JSON.parse(r.stdout) as Profiled;
  assert.equal(res.status, 'partial');
  assert.ok(res.profile.stacks && res.profile.calls, JSON.stringify(res.profile.notes));
  assert.match(JSON.stringify(res.profile.notes), /shorter than planned/);
  assert.deepEqual(leftovers(pid), []);
});

test('a killed run leaves its probes, directory and perf behind; the next run removes them', async (t) => {
  if (!(await needPerf(t, true))) return;
  const url = await sbtest(t, 'mysql', 'kill');
  if (!url) return;
  const args = ['run', 'oltp_read_only', '--db', url, ...SIZE, ...LONG, '--count-calls', 'open_table'];
  const { child, done } = startCli([...args, '--format', 'json', '--no-history']);
  await intervals(child, 3);
  const pid = child.pid as number;
  child.kill('SIGKILL');
  await done;
  const left = leftovers(pid);
  assert.ok(
    left.some((l) => l.startsWith('uprobe')),
    left.join('; '),
  );
  assert.ok(
    left.some((l) => l.startsWith('directory')),
    left.join('; '),
  );
  const next = await runCli([
    'run',
    'select1',
    '--db',
    url,
    '--time',
    '1',
    '--count-calls',
    'dispatch_command',
    '--no-history',
  ]);
  assert.equal(next.code, 0, next.stderr);
  assert.match(
    next.stderr,
    new RegExp(`cleaned up after an earlier dbsmack that was killed: .*dbsmack_${pid}`),
  );
  assert.deepEqual(leftovers(pid), []);
});

test('without perf the run goes on, with a note that says how to get it', async (t) => {
  const target = await needServer(t, 'mysql');
  if (!target) return;
  const empty = tmpDir('dbsmack-no-perf-');
  const r = await runCli(
    [
      'run',
      'select1',
      '--db',
      SERVER_URLS.mysql,
      '--time',
      '1',
      '--profile-stacks',
      '--format',
      'json',
      '--no-history',
    ],
    { env: { PATH: empty } },
  );
  assert.equal(r.code, 0, r.stderr);
  const res = JSON.parse(r.stdout) as Profiled;
  assert.equal(res.status, 'complete');
  const note = res.profile.notes.find((n) => n.what === 'stacks');
  assert.equal(note?.why, 'perf is not installed');
  assert.match(note?.hint ?? '', /apt-get install linux-perf/);
  assert.equal(res.profile.stacks, undefined);
});

test('without the rights (not root) the run goes on, with a note that says which rights', async (t) => {
  const target = await needServer(t, 'mysql');
  if (!target || !(await needPerf(t, true))) return;
  if (process.geteuid?.() !== 0) {
    // already not root: the note is what any run here gets, checked by the tests above being skipped
    t.skip('runs as root to become another user');
    return;
  }
  const server = Number(readFileSync('/run/mysqld/mysqld.pid', 'utf8').trim());
  const child = spawn(
    process.execPath,
    [
      path.join(ROOT, 'bin', 'dbsmack.js'),
      'run',
      'select1',
      '--db',
      SERVER_URLS.mysql,
      '--time',
      '1',
      '--profile-stacks',
      '--count-calls',
      'open_table',
      '--server-pid',
      String(server),
      '--format',
      'json',
      '--no-history',
    ],
    { uid: 65534, gid: 65534, cwd: os.tmpdir(), stdio: ['ignore', 'pipe', 'pipe'] },
  );
  let out = '';
  let err = '';
  child.stdout.on('data', (d: Buffer) => {
    out += d.toString();
  });
  child.stderr.on('data', (d: Buffer) => {
    err += d.toString();
  });
  const code = await new Promise<number | null>((resolve) => child.on('close', resolve));
  assert.equal(code, 0, err);
  const res = JSON.parse(out) as Profiled;
  const notes = JSON.stringify(res.profile.notes);
  assert.match(notes, /needs root or CAP_PERFMON \(kernel\.perf_event_paranoid is -?\d+\)/);
  assert.match(notes, /uprobes.*only root/);
  assert.deepEqual(leftovers(child.pid as number), []);
});

test('performance schema settings a killed run left changed are put back by the next run on that server', async (t) => {
  const target = await needServer(t, 'mysql');
  if (!target) return;
  const conn = await (await loadDriver('mysql')).connect(target, { connectTimeoutMs: 5000 });
  const consumer = async (): Promise<string> =>
    String(
      (
        await conn.all(
          "SELECT ENABLED AS e FROM performance_schema.setup_consumers WHERE NAME = 'events_waits_history'",
        )
      )[0]?.e,
    );
  const before = await consumer();
  if (before !== 'NO') {
    await conn.close();
    t.skip(`events_waits_history is ${before} on this server: the test needs it off to turn it on`);
    return;
  }
  try {
    // a dbsmack that turned the consumer on and was killed: its pid is gone, its marker is left
    const dead = await new Promise<number>((resolve) => {
      const c = startCli(['--version']);
      void c.done.then(() => resolve(c.child.pid as number));
    });
    const dir = path.join(os.tmpdir(), `dbsmack-stacks-${dead}-test`);
    mkdirSync(dir, { recursive: true });
    writeFileSync(
      path.join(dir, 'server-settings.json'),
      JSON.stringify({
        server: await serverIdentity(conn),
        url: target.redactedUrl,
        changes: { consumers: ['events_waits_history'], instruments: [] },
      }),
    );
    await conn.query(
      "UPDATE performance_schema.setup_consumers SET ENABLED = 'YES' WHERE NAME = 'events_waits_history'",
    );
    const r = await runCli([
      'run',
      'select1',
      '--db',
      SERVER_URLS.mysql,
      '--time',
      '0.5',
      '--profile-stacks',
      '--no-history',
    ]);
    assert.equal(r.code, 0, r.stderr);
    assert.match(
      r.stderr,
      /put back the performance schema settings an earlier dbsmack that was killed left changed/,
    );
    assert.equal(await consumer(), 'NO');
    assert.equal(existsSync(dir), false);
  } finally {
    await conn.query(
      "UPDATE performance_schema.setup_consumers SET ENABLED = 'NO' WHERE NAME = 'events_waits_history'",
    );
    await conn.close();
  }
});
