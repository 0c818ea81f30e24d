import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { ProfileData, ServerSched, ThreadStat } from '../src/metrics/profile-types.ts';
import type { RunResult } from '../src/metrics/run-result.ts';
import { PERFORMANCE_SCHEMA_HINT } from '../src/probe/mysql-waits.ts';
import { getFormat } from '../src/report/formats.ts';
import { profileSummaryLine, renderProfileComparison, renderProfileText } from '../src/report/profile.ts';

function thread(tid: number, session: boolean, cpu: number, vcx: number): ThreadStat {
  return {
    pid: 100,
    tid,
    name: session ? `sql/one_connection #${tid}` : 'innodb/page_cleaner_thread',
    session,
    usr_pct: cpu * 0.7,
    sys_pct: cpu * 0.3,
    lat_pct: cpu / 10,
    cpu_pct: cpu,
    lat_ms: cpu,
    vcx,
    icx: vcx / 10,
    nice: 0,
    policy: 'other',
    observed_s: 10,
  };
}

function result(
  qps: number,
  lockOpenMs: number,
  sched?: ServerSched,
  profile?: Partial<ProfileData>,
): RunResult {
  const p: ProfileData = {
    elapsed_s: 10,
    waits: {
      kind: 'mysql',
      instruments_enabled: 12,
      waits: [
        { event: 'wait/synch/mutex/sql/LOCK_open', count: 5000, wait_ms: lockOpenMs },
        { event: 'wait/synch/cond/mysys/COND_timer', count: 3, wait_ms: 9000 },
        { event: 'wait/io/file/innodb/innodb_log_file', count: 300, wait_ms: 40 },
      ],
      idle_ms: 1234,
      digests: [],
      statements: [{ event: 'statement/com/Execute', count: 1000, wait_ms: 80 }],
    },
    threads: {
      pid: 100,
      command: 'mariadbd',
      found_by: 'pid_file',
      threads: [thread(11, true, 40, 1000), thread(12, true, 30, 800), thread(3, false, 1, 20)],
      totals: {
        threads: 3,
        cpu_s: 7.1,
        usr_s: 5,
        sys_s: 2.1,
        lat_s: 0.7,
        vcx: 1820,
        icx: 182,
        cpu_us_per_query: 71,
      },
      ended: 0,
      started: 0,
    },
    load_avg: { start: [1, 1, 1], end: [2, 1.2, 1.1], max_1m: 2.5 },
    client_cpu_us_per_query: 20,
    notes: [],
    ...profile,
  };
  return {
    clients: 4,
    totals: { queries: qps * 10, events: qps * 10, errors: 0, retries: 0, reconnects: 0, qps, eps: qps },
    client_cpu: { user_s: 1, system_s: 1, us_per_query: 20 },
    profile: p,
    ...(sched ? { server_sched: sched } : {}),
  } as unknown as RunResult;
}

const NICE: ServerSched = {
  requested: { nice: 5, policy: 'batch' },
  applied: true,
  pid: 100,
  threads: 3,
  before: 'nice 0, other 0, cpus 0-1',
  restored: true,
  notes: [],
};

test('the profile section shows waits by name, statements, the thread table and load', () => {
  const text = renderProfileText(result(1000, 900)) ?? '';
  assert.match(
    text,
    /server waits \(performance_schema, 12 wait instruments turned on for the run\), 3 event names/,
  );
  assert.match(text, /wait\/synch\/mutex\/sql\/LOCK_open\s+5000\s+900\.00\s+90\.00\s+180\.00/);
  // Parked threads do not lead the table: the mutex does.
  assert.match(text, /avg µs\nwait\/synch\/mutex\/sql\/LOCK_open/);
  assert.match(text, /condition waits \(threads parked, mostly idle\): mysys\/COND_timer 3× 9000\.0 ms/);
  assert.match(text, /statements by kind: com\/Execute 1000 \(80\.0 ms\)/);
  assert.match(text, /server mariadbd pid 100: 3 threads, CPU 0\.71 of a core/);
  assert.match(text, /CPU per query: server 71\.0 µs vs dbsmack 20\.0 µs/);
  assert.match(
    text,
    /^11\*\s+28\.0\s+12\.0\s+4\.0\s+40\.0\s+1000\s+100\s+0\s+other\s+sql\/one_connection #11$/m,
  );
  assert.match(
    text,
    /load average: 1\.00 1\.00 1\.00 at the start, 2\.00 1\.20 1\.10 at the end \(1-min max 2\.50\)/,
  );
  assert.equal(renderProfileText({ ...result(1, 1), profile: undefined } as unknown as RunResult), undefined);
});

test('a server without the performance schema: the report says so and how to turn it on', () => {
  const r = result(1000, 0, undefined, {
    notes: [{ what: 'server waits', why: 'the performance schema is off', hint: PERFORMANCE_SCHEMA_HINT }],
  });
  delete (r as { profile?: ProfileData }).profile?.waits;
  const text = renderProfileText(r) ?? '';
  assert.match(
    text,
    /not measured:\n {2}server waits: the performance schema is off\n {4}hint: start the server with --performance-schema=ON/,
  );
});

test('the text format prints the profile below the summary', () => {
  const render = getFormat('text');
  assert.ok(render);
  const r = result(1000, 900);
  // Only the sections matter here: a text section follows the workload's own layout (a smack file's Query
  // Barrel Report, empty without groups), and the classic layout leaves it out.
  const smack = { workload: { textLayout: 'barrel' } as never };
  const bare = { ...r, groups: [], status: 'complete' } as RunResult;
  assert.match(render(bare, smack), /^\n\nprofile \(10\.00 s observed\):/);
  assert.equal(render(bare, { ...smack, classic: true }), '\n');
});

test('renderProfileComparison puts a baseline and a scheduling experiment side by side', () => {
  const text = renderProfileComparison([
    { label: 'baseline', result: result(1000, 900) },
    { label: 'nice5', result: result(1280, 300, NICE) },
  ]);
  const lines = text.split('\n');
  assert.match(lines[0] ?? '', /^\s+baseline\s+nice5$/);
  assert.match(text, /scheduling\s+as found\s+nice 5, policy batch/);
  assert.match(text, /queries\/s\s+1000\.00\s+1280\.00/);
  assert.match(text, /server CPU µs\/query\s+71\.0\s+71\.0/);
  assert.match(text, /connection threads\s+2\s+2/);
  assert.match(text, /wait\/synch\/mutex\/sql\/LOCK_open\s+90\.00\s+30\.00/);
  assert.match(text, /wait\/io\/file\/innodb\/innodb_log_file\s+4\.00\s+4\.00/);
});

test('profileSummaryLine: one line per run for sweeps', () => {
  const line = profileSummaryLine(result(1280, 300, NICE) as never) ?? '';
  assert.match(
    line,
    /^nice 5, policy batch; server mariadbd pid 100: .*; top wait wait\/synch\/mutex\/sql\/LOCK_open 300\.0 ms; load 1\.00→2\.00$/,
  );
  assert.equal(profileSummaryLine({ totals: {} } as never), undefined);
});
