/** Live progress: a redrawn status on a terminal, one plain line per interval elsewhere, never stdout. */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { type TestContext, test } from 'node:test';
import type { IntervalPoint } from '../src/metrics/run-result.ts';
import {
  createProgress,
  fitIntervalLine,
  fmtDuration,
  type ProgressStream,
  wrapWords,
} from '../src/report/progress.ts';
import { BIN, runCli, tmpDir } from './helpers/cli.ts';
import { needFile } from './helpers/preconditions.ts';

function fakeStream(isTTY: boolean): ProgressStream & { text: () => string; columns: number } {
  let out = '';
  return {
    isTTY,
    columns: 120,
    write(chunk: string) {
      out += chunk;
      return true;
    },
    // biome-ignore lint/suspicious/noControlCharactersInRegex: stripping terminal escape sequences
    text: () => out.replace(/\u001b\[[0-9;?]*[A-Za-z]/g, ''),
  };
}

function point(t: number, qps: number, p95: number, errors = 0): IntervalPoint {
  return {
    t,
    dur: 1,
    queries: qps,
    events: qps,
    qps,
    eps: qps,
    p95_ms: p95,
    event_p95_ms: p95,
    errors,
    retries: 0,
    reconnects: 0,
    reads: qps,
    writes: 0,
    others: 0,
  };
}

test('fmtDuration', () => {
  assert.equal(fmtDuration(0), '0:00');
  assert.equal(fmtDuration(65.4), '1:05');
  assert.equal(fmtDuration(3725), '1:02:05');
});

test('off a terminal: one plain line per interval, prefixed with the run of a sweep', async () => {
  const s = fakeStream(false);
  const p = await createProgress({ totalRuns: 2, repeats: 1, stream: s });
  p.runStarted(4, 1);
  p.interval(point(1, 1000, 1.5));
  p.interval(point(2, 1100, 1.4));
  p.runFinished({ qps: 1050, p95_ms: 1.5, errors: 0 });
  p.runStarted(8, 1);
  p.interval(point(1, 2000, 2.5, 3));
  p.done();
  const lines = s.text().trimEnd().split('\n');
  assert.equal(lines.length, 3);
  assert.match(lines[0]!, /^\[run 1\/2 repeat 1\] \[ 1s \] clients: 4 eps: 1000\.00 qps: 1000\.00/);
  assert.match(
    lines[2]!,
    /^\[run 2\/2 repeat 1\] \[ 1s \] clients: 8 .* lat \(ms,95%\): 2\.500 err\/s: 3\.00/,
  );
});

test('on a terminal: a status with client count, repeat, elapsed and remaining time, throughput, p95 and errors', async () => {
  const s = fakeStream(true);
  let now = 0;
  const p = await createProgress({
    totalRuns: 4,
    repeats: 2,
    runSeconds: 10,
    stream: s,
    now: () => now,
    title: 'sweep',
  });
  p.runStarted(1, 1);
  now = 5000;
  p.interval(point(5, 1234, 0.75, 2));
  let text = s.text();
  assert.match(text, /run 1\/4 {2}clients 1 {2}repeat 1\/2 {2}elapsed 0:05 {2}remaining ~0:35/);
  assert.match(text, /now 1234\.00 q\/s {2}1234\.00 events\/s {2}p95 0\.750 ms {2}errors 2 \(all runs 2\)/);
  now = 12000;
  p.runFinished({ qps: 1200, p95_ms: 0.8, errors: 2 });
  p.runStarted(1, 2);
  // the measured run took 12 s: three more of those remain
  text = s.text();
  assert.match(text, /run 2\/4 {2}clients 1 {2}repeat 2\/2 {2}elapsed 0:12 {2}remaining ~0:36/);
  assert.match(text, /\[run 1\/4 repeat 1\] clients 1: 1200\.00 q\/s, p95 0\.800 ms, 2 errors/);
  p.done();
});

test('a single run on a terminal keeps its interval lines and ends with the overall figures', async () => {
  const s = fakeStream(true);
  const p = await createProgress({ totalRuns: 1, runSeconds: 2, stream: s, keepLines: true });
  p.runStarted(2);
  p.interval(point(1, 500, 1));
  p.interval({ ...point(2, 0, 0), dur: 0 });
  p.runFinished({ qps: 480, p95_ms: 1.1, errors: 0 });
  p.done();
  const text = s.text();
  assert.match(text, /\[ 1s \] clients: 2 eps: 500\.00/);
  assert.match(text, /finished: 480\.00 q\/s {2}p95 1\.100 ms {2}errors 0/);
});

test('dbsmack run --progress off a terminal: interval lines on stderr, none on stdout', async () => {
  const dir = tmpDir('dbsmack-progress-');
  const r = await runCli(
    [
      'run',
      'select1',
      '--db',
      `sqlite:${path.join(dir, 'p.sqlite')}`,
      '--clients',
      '2',
      '--time',
      '1',
      '--report-interval',
      '0.25',
      '--progress',
    ],
    { cwd: dir },
  );
  assert.equal(r.code, 0, r.stderr);
  // One line per interval of 0.25 s in the measured second, the last ending at the deadline.
  const lines = r.stderr.split('\n').filter((l) => /^\[ [\d.]+s \] clients: 2 /.test(l));
  assert.equal(lines.length, 4, r.stderr);
  assert.match(lines[3] as string, /^\[ 1s \]/, 'the last at the deadline');
  assert.doesNotMatch(r.stdout, /\[ [\d.]+s \]/);
  assert.doesNotMatch(r.stderr, /remaining/);
});

test('dbsmack run on a terminal shows the redrawn status (through script(1) for a pty)', (t) => {
  if (!needFile(t, '/usr/bin/script', 'script(1) gives the run a terminal (util-linux)')) return;
  const dir = tmpDir('dbsmack-progress-tty-');
  const cmd = `${process.execPath} ${BIN} run select1 --db sqlite:${path.join(dir, 'p.sqlite')} --clients 2 --time 1 --out ${path.join(dir, 'r.json')}`;
  const r = spawnSync('/usr/bin/script', ['-qec', cmd, '/dev/null'], {
    encoding: 'utf8',
    env: { ...process.env, COLUMNS: '120' },
  });
  assert.equal(r.status, 0, r.stdout + r.stderr);
  // biome-ignore lint/suspicious/noControlCharactersInRegex: stripping terminal escape sequences
  const text = r.stdout.replace(/\u001b\[[0-9;?]*[A-Za-z]/g, '');
  assert.match(text, /dbsmack select1 on sqlite:/);
  assert.match(text, /clients 2 {2}elapsed \d:\d\d {2}remaining/);
  assert.match(text, /finished: [\d.]+ q\/s {2}p95 [\d.]+ ms {2}errors 0/);
});

// biome-ignore lint/suspicious/noControlCharactersInRegex: stripping terminal escape sequences
const stripEscapes = (s: string): string => s.replace(/\u001b\[[0-9;?]*[A-Za-z]/g, '');

/** Run the built CLI on a pseudo-terminal of COLS columns (script(1)); stdout and stderr both go to it. */
function onTerminal(t: TestContext, cols: number, args: string[]): string | undefined {
  if (!needFile(t, '/usr/bin/script', 'script(1) gives the run a terminal (util-linux)')) return undefined;
  const quoted = [process.execPath, BIN, ...args].map((a) => `'${a.replace(/'/g, "'\\''")}'`).join(' ');
  const r = spawnSync('/usr/bin/script', ['-qec', `stty cols ${cols} rows 24; exec ${quoted}`, '/dev/null'], {
    encoding: 'utf8',
    timeout: 60_000,
  });
  assert.equal(r.status, 0, r.stdout + r.stderr);
  return stripEscapes(r.stdout).replace(/\r/g, '');
}

const INTERVAL =
  '[ 12s ] clients: 128 eps: 123456.00 qps: 2469120.00 (r/w/o: 1728384.00/493824.00/246912.00) lat (ms,95%): 12.345 err/s: 3.00 reconn/s: 0.00';

test('an interval line too wide for the terminal loses whole fields, r/w/o first, never the time, q/s or errors', () => {
  const fields = (l: string): string[] =>
    l.match(/\[[^\]]*\]|\([^)]*\)|lat \([^)]*\): \S+|[^\s:]+: \S+/g) ?? [];
  const all = fields(INTERVAL);
  assert.equal(all.join(' '), INTERVAL, 'the test line is made of fields');
  assert.equal(fitIntervalLine(INTERVAL, 200), INTERVAL);
  for (const width of [120, 100, 80, 60, 50]) {
    const line = fitIntervalLine(INTERVAL, width);
    assert.ok(line.length <= width, `${line.length} > ${width}: ${line}`);
    for (const f of fields(line)) assert.ok(all.includes(f), `'${f}' is a whole field of the line`);
    assert.match(line, /^\[ 12s \] /);
    assert.match(line, /qps: 2469120\.00/);
    assert.match(line, /err\/s: 3\.00/);
  }
  assert.doesNotMatch(fitIntervalLine(INTERVAL, 120), /r\/w\/o/, 'r/w/o goes first');
  assert.match(fitIntervalLine(INTERVAL, 120), /reconn\/s/, 'reconn/s only when r/w/o is not enough');
  // sysbench's layout too
  const sb = INTERVAL.replace('clients:', 'thds:').replace('eps:', 'tps:');
  assert.equal(fitIntervalLine(sb, 80), '[ 12s ] thds: 128 qps: 2469120.00 lat (ms,95%): 12.345 err/s: 3.00');
  assert.equal(wrapWords('one two three four', 9), 'one two\nthree\nfour');
});

test('on a narrow terminal every line of the status, the kept intervals and messages fits its width', async () => {
  const s = fakeStream(true);
  s.columns = 50;
  const p = await createProgress({
    totalRuns: 4,
    repeats: 2,
    runSeconds: 10,
    stream: s,
    keepLines: true,
    title: 'dbsmack oltp_read_write on postgres://bench:***@db.example.internal:5432/benchmarks',
  });
  p.runStarted(128, 1);
  p.interval(point(1, 2469120, 12.345, 3));
  p.log('dbsmack: warning: a message that is longer than the terminal is wide wraps between its words');
  p.runFinished({ qps: 2469120, p95_ms: 12.3, errors: 3 });
  p.done();
  const lines = s.text().replace(/\r/g, '').split('\n');
  for (const l of lines) assert.ok([...l].length <= 50, `${[...l].length} columns: '${l}'`);
  const text = lines.join('\n');
  assert.match(text, /\[ 1s \] .*qps: 2469120\.00/);
  assert.match(
    text,
    /is longer than\nthe terminal is wide wraps between its words/,
    'the message wraps between words',
  );
  assert.match(text, /now 2469120\.00 q\/s/);
});

test('--format sysbench --report-interval on a terminal: each interval once, live on stdout, within 80 columns', (t) => {
  const dir = tmpDir('dbsmack-progress-tty-');
  const text = onTerminal(t, 80, [
    'run',
    'select1',
    '--db',
    `sqlite:${path.join(dir, 'p.sqlite')}`,
    '--format',
    'sysbench',
    '--report-interval',
    '1',
    '--time',
    '2.5',
    '--no-history',
  ]);
  if (text === undefined) return;
  for (const l of text.split('\n').filter((l) => l.startsWith('[ ')))
    assert.ok([...l].length <= 80, `${[...l].length} columns: '${l}'`);
  assert.equal(text.match(/\[ 1s \] thds: 1 /g)?.length, 1, text);
  assert.equal(text.match(/\[ 2s \] thds: 1 /g)?.length, 1, text);
  assert.equal(text.match(/Threads started!/g)?.length, 1, text);
  const at = (s: string): number => text.indexOf(s);
  assert.ok(at('Threads started!') < at('[ 1s ]'), 'the head comes first, as sysbench prints it');
  assert.ok(at('[ 2s ]') < at('SQL statistics:'), 'the totals come after the intervals');
  assert.doesNotMatch(text, /remaining/, 'no status block drawn over the lines');
});

test('--format sysbench --report-interval in a pipe: the intervals in the final report, not on stderr', async () => {
  const dir = tmpDir('dbsmack-progress-');
  const r = await runCli(
    [
      'run',
      'select1',
      '--db',
      `sqlite:${path.join(dir, 'p.sqlite')}`,
      '--format',
      'sysbench',
      '--report-interval',
      '1',
      '--time',
      '2.5',
    ],
    { cwd: dir },
  );
  assert.equal(r.code, 0, r.stderr);
  assert.equal(r.stdout.match(/\[ 1s \] thds: 1 tps: [\d.]+ qps: [\d.]+ \(r\/w\/o: /g)?.length, 1, r.stdout);
  assert.equal(r.stdout.match(/\[ 2s \] thds: 1 /g)?.length, 1, r.stdout);
  assert.ok(r.stdout.indexOf('Threads started!') < r.stdout.indexOf('[ 1s ]'));
  assert.doesNotMatch(r.stderr, /\[ \d+s \]/);
});
