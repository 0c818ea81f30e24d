/**
 * `dbsmack experiment PLAN`: arms that differ by a run option need no --allow-shell (SQLite); a plan with
 * server commands is refused without it; and the story's case: a private MariaDB restarted between a thread
 * per connection and the thread pool, interrupted halfway, resumed, one table with both arms and every run
 * once in the history.
 */
import assert from 'node:assert/strict';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { after, test } from 'node:test';
import type { ExperimentDocument } from '../src/analysis/experiment.ts';
import { History } from '../src/store/history.ts';
import { ROOT, runCli, startCli, tmpDir } from './helpers/cli.ts';
import { type MariaDbInstance, startMariaDb } from './helpers/mariadb-instance.ts';
import { waitFor } from './helpers/wait.ts';

const readDoc = (file: string): ExperimentDocument =>
  JSON.parse(readFileSync(file, 'utf8')) as ExperimentDocument;

/** Runs per (arm, clients, repeat) in the history: every key must appear once. */
function historyRuns(file: string): Map<string, number> {
  const h = History.open(file, { create: false });
  try {
    const out = new Map<string, number>();
    for (const e of h.list({ kind: 'run', sweepRuns: true })) {
      const k = `${e.label}|${e.clients}|${e.repeat}`;
      out.set(k, (out.get(k) ?? 0) + 1);
    }
    return out;
  } finally {
    h.close();
  }
}

test('arms that differ only by a run option run without --allow-shell, interleaved, one table', async () => {
  const dir = tmpDir();
  const plan = path.join(dir, 'nice.yaml');
  writeFileSync(
    plan,
    `name: nice-only
target: sqlite:${path.join(dir, 'db.sqlite')}
workload: select1
clients: [1, 2]
repeat: 2
time: 0.3
arms:
  - label: base
  - label: nice5
    options: { server-nice: 5 }
`,
  );
  const out = path.join(dir, 'doc.json');
  const historyFile = path.join(dir, 'h.sqlite');
  const r = await runCli(['experiment', plan, '--out', out], { env: { DBSMACK_HISTORY: historyFile } });
  assert.equal(r.code, 0, r.stderr);
  const doc = readDoc(out);
  assert.equal(doc.schema, 'dbsmack/experiment@1');
  assert.equal(doc.status, 'complete');
  assert.deepEqual(
    doc.arms.map((a) => [a.label, a.baseline, a.runs.length]),
    [
      ['base', true, 4],
      ['nice5', false, 4],
    ],
  );
  // interleaved and rotated: base, nice5 in repeat 1; nice5, base in repeat 2
  const order = doc.arms
    .flatMap((a) => a.runs.map((x) => ({ seq: x.seq, what: `${a.label}:${x.clients}:${x.repeat}` })))
    .sort((a, b) => a.seq - b.seq)
    .map((x) => x.what);
  assert.deepEqual(order, [
    'base:1:1',
    'base:2:1',
    'nice5:1:1',
    'nice5:2:1',
    'nice5:1:2',
    'nice5:2:2',
    'base:1:2',
    'base:2:2',
  ]);
  for (const a of doc.arms)
    for (const x of a.runs)
      assert.deepEqual(
        Object.keys(x)
          .filter((k) => ['clients', 'repeat', 'status'].includes(k))
          .sort(),
        ['clients', 'repeat', 'status'],
      );
  const nice = doc.arms[1]!.runs[0]!.result as unknown as { server_sched?: { requested: { nice?: number } } };
  assert.equal(nice.server_sched?.requested.nice, 5);
  // where a setting cannot take effect, the experiment says so (SQLite has no server process to renice)
  assert.match(
    doc.warnings.join('\n'),
    /arm nice5: its scheduling options did not take effect \(.*no server process\)/,
  );
  assert.match(r.stdout, /warning: arm nice5: its scheduling options did not take effect/);
  assert.equal(doc.arms[1]!.runs[0]!.result.experiment?.arm, 'nice5');
  // the story's table: the baseline's figure and the arm's ratio per client count
  assert.match(r.stdout, /Thrd +base q\/s +stability +nice5\/base +95% CI +p +stability/);
  assert.match(r.stdout, /^1 +\d+ +(stable|noisy|erratic) +\d+\.\d\d [~+?-] /m);
  assert.match(r.stdout, /^2 +\d+ /m);
  assert.ok(doc.comparison?.rows.length === 2);
  const runs = historyRuns(historyFile);
  assert.equal(runs.size, 8);
  assert.ok([...runs.values()].every((n) => n === 1));
  assert.ok(runs.has('nice-only/nice5|2|2'));
  // compare and report take the document, or the experiment's name in the history, like a sweep
  const env = { DBSMACK_HISTORY: historyFile };
  const c1 = await runCli(['compare', out, '--format', 'json'], { env });
  assert.equal(c1.code, 0, c1.stderr);
  const cmp = JSON.parse(c1.stdout) as { base: string; candidates: string[]; rows: unknown[] };
  assert.deepEqual([cmp.base, cmp.candidates, cmp.rows.length], ['base', ['nice5'], 2]);
  const c2 = await runCli(['compare', 'nice-only'], { env });
  assert.equal(c2.code, 0, c2.stderr);
  assert.match(c2.stdout, /base base \(experiment nice-only: sweep \d+\)\n {2}candidate nice5/);
  const md = path.join(dir, 'r.md');
  const rep = await runCli(['report', out, '--markdown', md], { env });
  assert.equal(rep.code, 0, rep.stderr);
  assert.match(readFileSync(md, 'utf8'), /qps: nice-only\/nice5 against nice-only\/base/);
});

test('a plan with server commands is refused without --allow-shell, naming them', async () => {
  const dir = tmpDir();
  const plan = path.join(dir, 'p.yaml');
  const marker = path.join(dir, 'ran');
  writeFileSync(
    plan,
    `name: shell
target: sqlite:${path.join(dir, 'db.sqlite')}
workload: select1
clients: [1]
arms:
  - label: a
    server: { start: "touch ${marker}" }
  - label: b
`,
  );
  const r = await runCli(['experiment', plan, '--out', path.join(dir, 'doc.json')]);
  assert.equal(r.code, 2, r.stderr);
  assert.match(r.stderr, /the plan runs server commands, which dbsmack runs only with --allow-shell/);
  assert.match(r.stderr, /p\.yaml:7:5 \(arm a\): touch /);
  assert.equal(existsSync(marker), false);
  assert.equal(existsSync(path.join(dir, 'doc.json')), false);
  // with --allow-shell the command runs; one that fails stops the experiment (exit 4), the document saved
  writeFileSync(
    plan,
    readFileSync(plan, 'utf8').replace(`touch ${marker}`, `touch ${marker}; echo no such server >&2; exit 3`),
  );
  const r2 = await runCli(['experiment', plan, '--allow-shell', '--out', path.join(dir, 'doc.json')]);
  assert.equal(r2.code, 4, r2.stderr);
  assert.match(r2.stderr, /arm a start: 'touch .*exit 3' failed \(exit 3\): no such server/);
  assert.equal(existsSync(marker), true);
  const doc = readDoc(path.join(dir, 'doc.json'));
  assert.equal(doc.status, 'partial');
  assert.match(doc.status_reason ?? '', /failed \(exit 3\)/);
});

let mariadb: MariaDbInstance | undefined;
after(async () => {
  await mariadb?.destroy();
});

test('MariaDB restarted between a thread per connection and the thread pool: interrupted, resumed, one table', async (t) => {
  mariadb = await startMariaDb(t);
  if (!mariadb) return;
  const dir = tmpDir();
  const plan = path.join(dir, 'threads.yaml');
  writeFileSync(
    plan,
    `name: threads
target: "${mariadb.url}"
workload: select1
clients: [1, 2]
repeat: 2
time: 1
arms:
  - label: per-connection
    server:
      stop: "${mariadb.stopCommand.replace(/"/g, '\\"')}"
      start: "${mariadb.startCommand('--thread-handling=one-thread-per-connection').replace(/"/g, '\\"')}"
      wait: 60
    check: { thread_handling: one-thread-per-connection }
  - label: pool
    server:
      stop: "${mariadb.stopCommand.replace(/"/g, '\\"')}"
      start: "${mariadb.startCommand('--thread-handling=pool-of-threads').replace(/"/g, '\\"')}"
    check: { thread_handling: pool-of-threads }
`,
  );
  const out = path.join(dir, 'threads.json');
  const historyFile = path.join(dir, 'h.sqlite');
  const env = { DBSMACK_HISTORY: historyFile };
  const first = startCli(['experiment', plan, '--allow-shell', '--out', out], { env });
  const finished = (): number =>
    existsSync(out)
      ? readDoc(out).arms.reduce((n, a) => n + a.runs.filter((r) => r.status === 'complete').length, 0)
      : 0;
  // halfway: some runs finished, not all
  await waitFor('the experiment document to show 3 finished runs', () => finished() >= 3, {
    timeoutMs: 180_000,
    everyMs: 50,
  });
  first.child.kill('SIGINT');
  const r1 = await first.done;
  assert.equal(r1.code, 130, r1.stderr);
  assert.match(
    r1.stderr,
    /interrupted: the server is left as the commands of arm (per-connection|pool) left it/,
  );
  const partial = readDoc(out);
  assert.equal(partial.status, 'partial');
  const kept = finished();
  assert.ok(kept >= 3 && kept < 8, `${kept} runs finished before the interrupt`);
  // resumed: only the runs still missing are made
  const r2 = await runCli(['experiment', plan, '--allow-shell', '--out', out, '--resume'], { env });
  assert.equal(r2.code, 0, r2.stderr);
  assert.match(r2.stderr, new RegExp(`resuming .*\\(${kept} runs kept\\)`));
  assert.match(r2.stderr, new RegExp(`\\[${8 - kept}/${8 - kept}\\]`));
  const doc = readDoc(out);
  assert.equal(doc.status, 'complete');
  for (const a of doc.arms) {
    assert.deepEqual(
      a.runs.map((x) => `${x.clients}:${x.repeat}`).sort(),
      ['1:1', '1:2', '2:1', '2:2'],
      `runs of ${a.label}`,
    );
    assert.ok(a.runs.every((x) => x.status === 'complete'));
  }
  // the check read the thread handling each arm asked for
  assert.equal(doc.arms[0]!.checked?.thread_handling, 'one-thread-per-connection');
  assert.equal(doc.arms[1]!.checked?.thread_handling, 'pool-of-threads');
  assert.equal(doc.arms[1]!.runs[0]!.result.server?.settings.thread_handling, 'pool-of-threads');
  // one table with both arms
  assert.match(r2.stdout, /Thrd +per-connection q\/s +stability +pool\/base +95% CI/);
  assert.match(r2.stdout, /^1 +\d+/m);
  assert.match(r2.stdout, /^2 +\d+/m);
  assert.match(r2.stdout, /thread_handling +one-thread-per-connection +pool-of-threads/);
  // every run once in the history
  const runs = historyRuns(historyFile);
  assert.equal(runs.size, 8, [...runs.keys()].join(' '));
  assert.ok(
    [...runs.values()].every((n) => n === 1),
    [...runs].join(' '),
  );
});

test('a server that does not answer after its start stops the experiment, saved and resumable', async (t) => {
  mariadb ??= await startMariaDb(t);
  if (!mariadb) return;
  const dir = tmpDir();
  const plan = path.join(dir, 'p.yaml');
  const script = path.join(dir, 'start.sh');
  // the first time the start command launches nothing; fixed before the resume, the plan unchanged
  writeFileSync(script, 'true\n');
  const esc = (s: string): string => s.replace(/"/g, '\\"');
  writeFileSync(
    plan,
    `name: flaky
target: "${mariadb.url}"
workload: select1
clients: [1]
repeat: 1
time: 0.3
arms:
  - label: plain
    options: { warmup: 0 }
  - label: restarted
    server: { stop: "${esc(mariadb.stopCommand)}", start: "sh ${script}", wait: 2 }
`,
  );
  const out = path.join(dir, 'doc.json');
  const env = { DBSMACK_HISTORY: path.join(dir, 'h.sqlite') };
  const r1 = await runCli(['experiment', plan, '--allow-shell', '--out', out], { env });
  assert.equal(r1.code, 3, r1.stderr);
  assert.match(
    r1.stderr,
    /arm restarted: the server at mysql:\/\/root@\/mysql\?socket=\S+ did not answer within 2 s after its start/,
  );
  assert.match(r1.stderr, /stopped: the server is left as the commands of arm restarted left it/);
  const partial = readDoc(out);
  assert.equal(partial.status, 'partial');
  assert.match(partial.status_reason ?? '', /did not answer within 2 s/);
  assert.equal(partial.arms[0]!.runs.length, 1);
  writeFileSync(script, `${mariadb.startCommand('')}\n`);
  const r2 = await runCli(['experiment', plan, '--allow-shell', '--out', out, '--resume'], { env });
  assert.equal(r2.code, 0, r2.stderr);
  assert.match(r2.stderr, /\(1 runs kept\)/);
  const doc = readDoc(out);
  assert.equal(doc.status, 'complete');
  assert.deepEqual(
    doc.arms.map((a) => a.runs.length),
    [1, 1],
  );
});

test('settings that run or the workload refuse name their place in the plan; --dry-run shows the arms and the order', async () => {
  const dir = tmpDir();
  const plan = path.join(dir, 'p.yaml');
  const cases: [string, RegExp][] = [
    ['server-policy: fast', /^dbsmack: p\.yaml:6:5: server-policy: .*'fast' is invalid/m],
    [
      'options: { tabels: 1 }',
      /^dbsmack: p\.yaml:6:16: tabels: unknown option '--tabels' \(did you mean --tables\?\)/m,
    ],
    [
      'server-priority: 3',
      /^dbsmack: p\.yaml:5:5: arm 'a': --server-priority goes with --server-policy fifo or rr/m,
    ],
    ['time: -1', /^dbsmack: p\.yaml:6:5: time: --time expects a number of seconds/m],
  ];
  for (const [line, re] of cases) {
    writeFileSync(
      plan,
      `name: e\nworkload: oltp_read_only\nclients: [1]\narms:\n  - label: a\n    ${line}\n`,
    );
    const r = await runCli(['experiment', 'p.yaml', '--dry-run'], { cwd: dir });
    assert.equal(r.code, 2, `${line}: ${r.stderr}`);
    assert.match(r.stderr, re);
  }
  const r = await runCli(['experiment', path.join(ROOT, 'examples', 'thread-handling.yaml'), '--dry-run']);
  assert.equal(r.code, 0, r.stderr);
  assert.match(r.stdout, /^experiment thread-handling: 40 runs of oltp_read_only/);
  assert.match(
    r.stdout,
    /^arm pool-of-threads: dbsmack run oltp_read_only --db mysql:\/\/root@127\.0\.0\.1:3306\/test .*--table-size=100000$/m,
  );
  assert.match(r.stdout, /^repeat 2: pool-of-threads, per-connection /m);
});
