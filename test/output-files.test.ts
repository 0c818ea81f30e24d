/**
 * No result is ever lost to a bad output path: every file a command writes is checked before the work
 * starts (exit 2, naming the path); a write that still fails afterwards (a full disk: /dev/full, a file size
 * limit in a child) prints and records the result anyway, leaves no empty or torn file, names the file and
 * exits 5. Read-only commands never write the history.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import { BIN, ROOT, runCli, tmpDir } from './helpers/cli.ts';
import { needFile } from './helpers/preconditions.ts';

const FAST = ['--db', 'sqlite::memory:', '--time', '0.2'];

/** Runs recorded in a history file, through `dbsmack history`. */
async function recorded(history: string): Promise<number> {
  if (!existsSync(history)) return 0;
  const r = await runCli(['history', '--all', '--format', 'json', '--history', history]);
  assert.equal(r.code, 0, r.stderr);
  return (JSON.parse(r.stdout) as unknown[]).length;
}

function assertUserError(stderr: string, pattern: RegExp): void {
  assert.match(stderr, pattern);
  assert.doesNotMatch(stderr, /internal error|report it|\n\s+at /);
}

test('a bad output path stops every command before it starts, naming the path', async () => {
  const dir = tmpDir('dbsmack-out-');
  const afile = path.join(dir, 'afile');
  writeFileSync(afile, 'a regular file\n');
  const history = path.join(dir, 'history.sqlite');
  const env = { DBSMACK_HISTORY: history };
  const bad: [string, RegExp][] = [
    [path.join(afile, 'x.json'), /cannot write --out .*afile\/x\.json: .*afile is not a directory/],
    [path.join(dir, 'no-such-dir', 'x.json'), /cannot write --out .*: no such directory .*no-such-dir/],
    [dir, /cannot write --out .*: it is a directory/],
  ];
  for (const [out, pattern] of bad) {
    for (const args of [
      ['run', 'select1', ...FAST, '--out', out],
      ['run', 'select1', ...FAST, '--out', out, '-q'],
      ['sweep', 'select1', '--clients', '1', '--repeat', '1', ...FAST, '--out', out],
    ]) {
      const r = await runCli(args, { cwd: dir, env });
      assert.equal(r.code, 2, `${args.join(' ')}: ${r.stderr}`);
      assertUserError(r.stderr, pattern);
      assert.equal(r.stdout, '', 'nothing ran');
    }
    const c = await runCli(['compare', 'a.json', 'b.json', '--out', out], { cwd: dir, env });
    assert.equal(c.code, 2, c.stderr);
    assertUserError(c.stderr, pattern);
  }
  assert.equal(await recorded(history), 0, 'no run was recorded: none started');

  // the history: a missing directory, a directory, a file that is not a history
  for (const [h, pattern] of [
    [path.join(dir, 'no-such-dir', 'h.sqlite'), /cannot write the history .*: no such directory/],
    [dir, /cannot use the history .*: it is not a file/],
    [afile, /is not a dbsmack history/],
  ] as const) {
    const r = await runCli(['run', 'select1', ...FAST, '--history', h], { cwd: dir });
    assert.equal(r.code, 2, r.stderr);
    assertUserError(r.stderr, pattern);
    assert.equal(r.stdout, '');
  }
  assert.equal(readFileSync(afile, 'utf8'), 'a regular file\n');
  assert.ok(!existsSync(path.join(dir, 'no-such-dir')), 'no directory was made');

  // gen-data -o
  const g = await runCli(['gen-data', '-n', '10', '-f', '%d', '-o', path.join(afile, 'rows')], { cwd: dir });
  assert.equal(g.code, 2, g.stderr);
  assertUserError(g.stderr, /cannot write -o .*afile\/rows: .*afile is not a directory/);

  // report: checked before the inputs are even read; a missing directory is never made
  const rep = await runCli(['report', 'missing.json', '--html', path.join(dir, 'no-such-dir', 'r.html')], {
    cwd: dir,
    env,
  });
  assert.equal(rep.code, 2, rep.stderr);
  assertUserError(rep.stderr, /cannot write --html .*r\.html: no such directory .*no-such-dir/);
  const svg = await runCli(['report', 'missing.json', '--svg', path.join(dir, 'no-such-dir', 'charts')], {
    cwd: dir,
    env,
  });
  assert.equal(svg.code, 2, svg.stderr);
  assertUserError(svg.stderr, /cannot write --svg .*charts: no such directory .*no-such-dir/);
  assert.ok(!existsSync(path.join(dir, 'no-such-dir')), 'no directory was made');
});

test('a full disk after the run (/dev/full): the result is printed and recorded, the file named, exit 5', async (t) => {
  if (!needFile(t, '/dev/full', '/dev/full stands for a full disk (Linux)')) return;
  const dir = tmpDir('dbsmack-out-');
  const history = path.join(dir, 'history.sqlite');
  const env = { DBSMACK_HISTORY: history };
  // -q with --out normally prints nothing: when the file is lost, stdout is the copy
  const r = await runCli(['run', 'select1', ...FAST, '--out', '/dev/full', '-q', '--format', 'json'], {
    cwd: dir,
    env,
  });
  assert.equal(r.code, 5, r.stderr);
  assertUserError(r.stderr, /cannot write \/dev\/full: no space left on the device \(ENOSPC\)/);
  assert.equal((JSON.parse(r.stdout) as { schema: string }).schema, 'dbsmack/run@1');
  assert.equal(await recorded(history), 1, 'the run is in the history');

  const s = await runCli(
    ['sweep', 'select1', '--clients', '1', '--repeat', '1', ...FAST, '--out', '/dev/full', '-q'],
    { cwd: dir, env },
  );
  assert.equal(s.code, 5, s.stderr);
  assertUserError(s.stderr, /cannot write \/dev\/full/);
  assert.match(s.stdout, /select1/, 'the sweep is printed');
  assert.equal(await recorded(history), 3, 'the sweep and its run are in the history');

  const c = await runCli(['compare', '1', '1', '--out', '/dev/full'], { cwd: dir, env });
  assert.equal(c.code, 5, c.stderr);
  assertUserError(c.stderr, /cannot write \/dev\/full/);
  assert.notEqual(c.stdout, '', 'the comparison is printed');
});

/** Run the CLI with a file size limit (ulimit -f, in 512-byte blocks): writes past it fail with EFBIG. */
function limited(blocks: number, args: string[], cwd: string): ReturnType<typeof spawnSync> {
  const quoted = [process.execPath, BIN, ...args].map((a) => `'${a.replace(/'/g, "'\\''")}'`).join(' ');
  return spawnSync('/bin/sh', ['-c', `ulimit -f ${blocks} && exec ${quoted}`], {
    cwd,
    encoding: 'utf8',
    timeout: 60_000,
  });
}

test('a write cut short by a file size limit leaves the old file whole and no temporary file', (t) => {
  if (!needFile(t, '/bin/sh', '/bin/sh sets the file size limit (ulimit -f)')) return;
  const dir = tmpDir('dbsmack-out-');
  const sub = path.join(dir, 'out');
  mkdirSync(sub);
  const out = path.join(sub, 'r.json');
  writeFileSync(out, '{"old": true}\n');
  // a RunResult is several KiB: 2 KiB cannot hold it; no history (it would not fit either)
  const r = limited(
    4,
    ['run', 'select1', ...FAST, '--no-history', '--out', out, '-q', '--format', 'json'],
    dir,
  );
  assert.equal(r.status, 5, String(r.stderr));
  assertUserError(String(r.stderr), /cannot write .*r\.json: file too large .*\(EFBIG\)/);
  assert.equal((JSON.parse(String(r.stdout)) as { schema: string }).schema, 'dbsmack/run@1');
  assert.equal(readFileSync(out, 'utf8'), '{"old": true}\n', 'the old file is kept whole');
  assert.deepEqual(readdirSync(sub), ['r.json'], 'no temporary file is left');

  // gen-data: no partial file of rows
  const rows = path.join(sub, 'rows.dat');
  const g = limited(4, ['gen-data', '-n', '10000', '-f', '%20-20s,%n', '-o', rows], dir);
  assert.equal(g.status, 5, String(g.stderr));
  assertUserError(String(g.stderr), /cannot write .*rows\.dat: file too large/);
  assert.deepEqual(readdirSync(sub), ['r.json'], 'neither a torn rows.dat nor a temporary file');
});

test('history on an empty or missing file writes nothing: no schema, no file', async () => {
  const dir = tmpDir('dbsmack-out-');
  const empty = path.join(dir, 'empty.sqlite');
  writeFileSync(empty, '');
  const r = await runCli(['history', '--history', empty]);
  assert.equal(r.code, 0, r.stderr);
  assert.match(r.stdout, /no runs recorded/);
  const j = await runCli(['history', '--history', empty, '--format', 'json']);
  assert.deepEqual(JSON.parse(j.stdout), []);
  const s = await runCli(['show', '1', '--history', empty]);
  assert.equal(s.code, 2, s.stderr);
  assert.match(s.stderr, /no run or sweep with id 1/);
  assert.equal(statSync(empty).size, 0, 'the empty file is still empty');
  const missing = path.join(dir, 'missing.sqlite');
  const m = await runCli(['history', '--history', missing]);
  assert.equal(m.code, 2, m.stderr);
  assert.match(m.stderr, /no history at .*missing\.sqlite yet/);
  assert.deepEqual(readdirSync(dir), ['empty.sqlite'], 'nothing was created');
  // a run records into the empty file: it becomes a history
  const run = await runCli(['run', 'select1', ...FAST, '--history', empty]);
  assert.equal(run.code, 0, run.stderr);
  assert.equal(await recorded(empty), 1);
});

test('file system errors from paths the user gave are user errors naming the path, never internal ones', async () => {
  const dir = tmpDir('dbsmack-out-');
  const afile = path.join(dir, 'afile');
  writeFileSync(afile, 'a regular file\n');
  const smack = path.join(ROOT, 'examples', 'select-key.smack');
  const datadir = path.join(dir, 'data');
  mkdirSync(path.join(datadir, 'words.dat'), { recursive: true }); // the data file is a directory
  const cases: [string[], RegExp][] = [
    [['run', smack, '1', '1', '-D', afile], /cannot use the data directory .*afile/],
    [
      ['run', smack, '1', '1', '-D', datadir],
      /select-key\.smack:\d+:\d+: cannot read the data file .*words\.dat: EISDIR/,
    ],
    [['show', '1', '--history', dir], /the history .* is a directory/],
    [['history', '--history', dir], /the history .* is a directory/],
    [['gen-data', '-n', '1', '-f', '%d', '-o', dir], /cannot write -o .*: it is a directory/],
  ];
  for (const [args, pattern] of cases) {
    const r = await runCli(args, { cwd: dir });
    assert.equal(r.code, 2, `${args.join(' ')}: ${r.stderr}`);
    assertUserError(r.stderr, pattern);
  }
});
