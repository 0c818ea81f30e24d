/**
 * The pieces of sweeps, history, compare, profile and report working together, as real commands: a report
 * of history labels carries the ratio table `dbsmack compare` prints; a sweep shows live progress and runs
 * every run with the profile probes; compare shows the runs' profiles and scheduling side by side.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import type { CompareResult, SweepResult } from '../src/analysis/types.ts';
import { mark, ratio } from '../src/report/compare-text.ts';
import type { ProfiledResult } from '../src/report/profile.ts';
import { runCli, tmpDir } from './helpers/cli.ts';
import { needRoot } from './helpers/preconditions.ts';
import {
  MYSQL_URL,
  needLocalServerPid,
  needServer,
  PG_URL,
  SERVER_STATE_LOCK,
  withServerLock,
} from './helpers/servers.ts';

const readJson = <T>(file: string): T => JSON.parse(readFileSync(file, 'utf8')) as T;

function setup(): { dir: string; env: NodeJS.ProcessEnv } {
  const dir = tmpDir('dbsmack-wire-');
  return { dir, env: { DBSMACK_HISTORY: path.join(dir, 'history.sqlite') } };
}

/** A small sweep into the history; `extra` holds it back (--rate) or profiles it. */
async function sweep(
  dir: string,
  env: NodeJS.ProcessEnv,
  label: string,
  db: string,
  extra: string[] = [],
  repeat = 3,
): Promise<{ stdout: string; stderr: string; doc: SweepResult }> {
  const out = path.join(dir, `${label}.json`);
  const r = await runCli(
    [
      'sweep',
      'select1',
      '--db',
      db,
      '--clients',
      '1,2',
      '--repeat',
      String(repeat),
      '--events',
      '150',
      '--label',
      label,
      '--out',
      out,
      ...extra,
    ],
    { cwd: dir, env },
  );
  assert.equal(r.code, 0, r.stderr);
  return { stdout: r.stdout, stderr: r.stderr, doc: readJson<SweepResult>(out) };
}

/** Every ratio cell of `c` appears in the page as compare prints it: ratio, mark, interval. */
function assertSameRatios(page: string, c: CompareResult): void {
  for (const row of c.rows) {
    for (const [name, cell] of Object.entries(row.candidates)) {
      const marked = `<td class="n">${ratio(cell.ratio)} ${mark(cell)}</td>`;
      assert.ok(page.includes(marked), `${name} at ${row.clients} clients: ${marked}`);
      if (cell.ci_low !== null && cell.ci_high !== null)
        assert.ok(page.includes(`${ratio(cell.ci_low)}–${ratio(cell.ci_high)}`), 'the bootstrap interval');
    }
  }
}

test('sqlite: report of history labels has the ratio table of dbsmack compare; ids too; unknown labels exit 2', async () => {
  const { dir, env } = setup();
  const db = `sqlite://${path.join(dir, 'w.db')}`;
  // Five repeats: 150 unthrottled events take a millisecond or so, so on a loaded machine A's repeats can
  // spread too wide for a t-test on three; five give the exact rank test its p = 0.008.
  await sweep(dir, env, 'A', db, [], 5);
  await sweep(dir, env, 'B', db, ['--rate', '150'], 5);

  const cmp = await runCli(['compare', 'A', 'B', '--format', 'json'], { cwd: dir, env });
  assert.equal(cmp.code, 0, cmp.stderr);
  const c = JSON.parse(cmp.stdout) as CompareResult;
  assert.deepEqual(
    c.rows.map((r) => r.candidates.B?.verdict),
    ['worse', 'worse'],
    'held back by --rate: significantly slower',
  );

  const html = path.join(dir, 'r.html');
  const md = path.join(dir, 'r.md');
  const r = await runCli(['report', 'A', 'B', '--html', html, '--markdown', md], { cwd: dir, env });
  assert.equal(r.code, 0, r.stderr);
  assert.equal(r.stdout, '', 'nothing on stdout');
  const page = readFileSync(html, 'utf8');
  assertSameRatios(page, c);
  assert.match(page, /computed as by dbsmack compare A B/);
  assert.match(page, /<figure id="ratio-qps"/, 'the ratio chart');
  assert.match(page, /limits\.rate/, 'the rate that held B back is among the settings that differ');
  assert.ok(!page.includes('test fixture'));
  const text = readFileSync(md, 'utf8');
  for (const row of c.rows) assert.ok(text.includes(`${ratio(row.candidates.B!.ratio)} -`), 'markdown');

  // A history id of a sweep works as well as its label, and the figures are the same.
  const hist = await runCli(['history', '--format', 'json'], { cwd: dir, env });
  const idA = (JSON.parse(hist.stdout) as { id: number; label: string }[]).find((e) => e.label === 'A')!.id;
  const byId = await runCli(['report', String(idA), 'B', '--html', html], { cwd: dir, env });
  assert.equal(byId.code, 0, byId.stderr);
  assertSameRatios(readFileSync(html, 'utf8'), c);

  // p95: the computed table follows --metric as compare does
  const cmp95 = await runCli(['compare', 'A', 'B', '--metric', 'p95', '--format', 'json'], { cwd: dir, env });
  const r95 = await runCli(['report', 'A', 'B', '--metric', 'p95', '--html', html], { cwd: dir, env });
  assert.equal(r95.code, 0, r95.stderr);
  assertSameRatios(readFileSync(html, 'utf8'), JSON.parse(cmp95.stdout) as CompareResult);

  const bad = await runCli(['report', 'A', 'nope', '--html', html], { cwd: dir, env });
  assert.equal(bad.code, 2);
  assert.match(bad.stderr, /no label 'nope' in the history/);
  assert.match(bad.stderr, /labels there: .*A/);
  const none = await runCli(['report', 'A', '--no-history', '--html', html], { cwd: dir, env });
  assert.equal(none.code, 2, none.stderr);
});

test('sqlite sweep: --progress gives a line per interval on stderr, --profile profiles every run, compare shows them side by side', async () => {
  const { dir, env } = setup();
  const db = `sqlite://${path.join(dir, 'w.db')}`;
  const base = await sweep(dir, env, 'plain', db);
  const prof = await sweep(dir, env, 'profiled', db, [
    '--profile',
    '--progress',
    '--report-interval',
    '0.05',
  ]);

  // progress: plain lines off a terminal, each naming the run and repeat; nothing of it on stdout
  assert.match(prof.stderr, /^\[run 1\/6 repeat 1\] .*qps: /m);
  assert.match(prof.stderr, /^\[run 6\/6 repeat 3\] /m);
  assert.doesNotMatch(prof.stdout, /\[run \d/);
  assert.doesNotMatch(base.stderr, /\[run \d/, 'no --progress, no terminal: no interval lines');

  // --profile reached every run, and each run's summary line is printed
  for (const p of prof.doc.points)
    for (const r of p.runs) {
      const res = r.result as ProfiledResult;
      assert.equal(res.profile?.waits?.kind, 'sqlite', `run at ${p.clients} clients, repeat ${r.repeat}`);
    }
  assert.equal(prof.stderr.match(/^dbsmack: {3}profile: /gm)?.length, 6);
  assert.match(prof.stdout, /profile per run:\n {2}1 clients, repeat 1: .*busy/);
  assert.doesNotMatch(base.stdout, /profile per run/);

  const cmp = await runCli(['compare', 'plain', 'profiled'], { cwd: dir, env });
  assert.equal(cmp.code, 0, cmp.stderr);
  assert.match(cmp.stdout, /profiles side by side \(one median run each at 2 clients\)/);
  assert.match(cmp.stdout, /dbsmack CPU µs\/query/);
});

test('mariadb: a sweep with --server-nice compared to a baseline shows the scheduling and the profiles in one output', async (t) => {
  if (!(await needServer(t, 'mysql'))) return;
  // Renicing the server's threads (another user's) needs root, and the server on this host to find them.
  if (!needRoot(t, "changing the MariaDB server's nice value needs CAP_SYS_NICE")) return;
  if (!(await needLocalServerPid(t, 'mysql'))) return;
  const { dir, env } = setup();
  // --profile's wait instruments and --server-nice are server-wide, put back after each run: under the lock.
  const exp = await withServerLock(SERVER_STATE_LOCK, async () => {
    await sweep(dir, env, 'baseline', MYSQL_URL, ['--profile']);
    return sweep(dir, env, 'nice5', MYSQL_URL, ['--profile', '--server-nice', '5']);
  });
  for (const p of exp.doc.points) {
    for (const run of p.runs) {
      const sched = (run.result as ProfiledResult).server_sched;
      assert.deepEqual(sched?.requested, { nice: 5 }, 'the run records the scheduling request');
      assert.equal(sched?.applied, true, JSON.stringify(sched?.notes));
      assert.equal(sched?.restored, true);
    }
  }
  const cmp = await runCli(['compare', 'baseline', 'nice5'], { cwd: dir, env });
  assert.equal(cmp.code, 0, cmp.stderr);
  // the differences table and the side-by-side profile both name the experiment
  assert.match(cmp.stdout, /server\.scheduling\s+as found\s+nice 5/);
  assert.match(cmp.stdout, /scheduling\s+as found\s+nice 5/);
  assert.match(cmp.stdout, /connection threads/);
  assert.match(cmp.stdout, /VCX\/s/);

  const html = path.join(dir, 'r.html');
  const r = await runCli(['report', 'baseline', 'nice5', '--html', html], { cwd: dir, env });
  assert.equal(r.code, 0, r.stderr);
  const page = readFileSync(html, 'utf8');
  assert.match(page, /<td>server\.scheduling<\/td><td>as found<\/td><td>nice 5/);
  assert.match(page, /<td>scheduling<\/td><td class="n">as found<\/td><td class="n">nice 5/);
});

test('postgres: a report of two labelled sweeps has the computed ratio table and the wait events of the backends', async (t) => {
  if (!(await needServer(t, 'postgres'))) return;
  const { dir, env } = setup();
  await sweep(dir, env, 'pg-a', PG_URL, ['--profile']);
  await sweep(dir, env, 'pg-b', PG_URL, ['--profile', '--rate', '100']);
  const cmp = await runCli(['compare', 'pg-a', 'pg-b', '--format', 'json'], { cwd: dir, env });
  assert.equal(cmp.code, 0, cmp.stderr);
  const html = path.join(dir, 'r.html');
  const r = await runCli(['report', 'pg-a', 'pg-b', '--html', html], { cwd: dir, env });
  assert.equal(r.code, 0, r.stderr);
  const page = readFileSync(html, 'utf8');
  assertSameRatios(page, JSON.parse(cmp.stdout) as CompareResult);
  assert.match(page, /One run per label: the median-throughput repeat/);
  assert.match(page, /share of backend samples \(pg_stat_activity\)/);
});
