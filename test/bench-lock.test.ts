/**
 * bench/tools.ts `measuringAlone`: one measuring script at a time on a machine. Real processes and the real
 * flock(1), on a lock file of the test's own (the machine's own lock is left to the bench scripts).
 */
import assert from 'node:assert/strict';
import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, test } from 'node:test';
import { pathToFileURL } from 'node:url';
import { need } from './helpers/preconditions.ts';

const ROOT = path.resolve(import.meta.dirname, '..');
const DIR = mkdtempSync(path.join(os.tmpdir(), 'dbsmack-lock-test-'));
after(() => rmSync(DIR, { recursive: true, force: true }));

// a measuring script in miniature: takes the lock, says when, holds it for argv[3] ms, says when it lets go
const HOLDER = path.join(DIR, 'holder.mts');
writeFileSync(
  HOLDER,
  `import { measuringAlone } from ${JSON.stringify(pathToFileURL(path.join(ROOT, 'bench', 'tools.ts')).href)};
const [lock, name, holdMs] = process.argv.slice(2);
await measuringAlone(lock, name);
console.log('got ' + Date.now());
setTimeout(() => console.log('end ' + Date.now()), Number(holdMs));
`,
);

const noFlock = (): string | undefined =>
  spawnSync('flock', ['--version']).error === undefined
    ? undefined
    : 'flock(1) (util-linux) is not installed';

interface Holder {
  child: ChildProcess;
  out: string[];
  err: string[];
  /** Resolves with the first stdout line that starts with `word`. */
  line(word: string): Promise<string>;
  exited: Promise<number | null>;
}

function holder(lock: string, name: string, holdMs: number): Holder {
  const child = spawn(process.execPath, ['--import', 'tsx', HOLDER, lock, name, String(holdMs)], {
    cwd: ROOT,
  });
  const out: string[] = [];
  const err: string[] = [];
  const waiters: { word: string; resolve: (l: string) => void }[] = [];
  child.stdout.setEncoding('utf8').on('data', (d: string) => {
    for (const l of d.split('\n').filter(Boolean)) {
      out.push(l);
      for (const w of waiters.filter((x) => l.startsWith(x.word))) w.resolve(l);
    }
  });
  child.stderr.setEncoding('utf8').on('data', (d: string) => err.push(d));
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  return {
    child,
    out,
    err,
    exited,
    line: (word) =>
      new Promise((resolve, reject) => {
        const had = out.find((l) => l.startsWith(word));
        if (had !== undefined) return resolve(had);
        waiters.push({ word, resolve });
        void exited.then(() =>
          reject(new Error(`exited without "${word}": ${out.join('|')} ${err.join('')}`)),
        );
      }),
  };
}

const at = (l: string): number => Number(l.split(' ')[1]);

test('a second measuring script waits, naming the first, and starts only once the first has ended', async (t) => {
  if (!need(t, noFlock())) return;
  const lock = path.join(DIR, 'a.lock');
  const a = holder(lock, 'bench/first.ts --clients 8', 1500);
  await a.line('got');
  const b = holder(lock, 'bench/second.ts', 0);
  const [aEnd, bGot] = await Promise.all([a.line('end'), b.line('got')]);
  assert.ok(at(bGot) >= at(aEnd), `the second began at ${at(bGot)}, before the first ended at ${at(aEnd)}`);
  const said = b.err.join('');
  assert.match(said, /# waiting for bench\/first\.ts --clients 8 \(pid \d+, started [^)]+\) to finish/);
  assert.match(said, /the other measuring run has finished/);
  assert.equal(await a.exited, 0);
  assert.equal(await b.exited, 0);
  // the first had the lock to itself: it said nothing of waiting
  assert.doesNotMatch(a.err.join(''), /waiting/);
});

test('a measuring script killed while it holds the lock leaves none behind', async (t) => {
  if (!need(t, noFlock())) return;
  const lock = path.join(DIR, 'b.lock');
  const a = holder(lock, 'bench/killed.ts', 600_000);
  await a.line('got');
  const b = holder(lock, 'bench/next.ts', 0);
  // b is waiting on a (it says so) until a is killed: nothing cleans up after a but the kernel
  for (let i = 0; !b.err.join('').includes('waiting for bench/killed.ts'); i++) {
    // a bound on the wait, not a timing: a second that never says it waits has not waited
    if (i > 600 || b.out.length > 0)
      assert.fail(`the second did not wait: ${b.out.join('|')} ${b.err.join('')}`);
    await new Promise((r) => setTimeout(r, 50));
  }
  assert.equal(b.out.length, 0, 'the second must not start while the first holds the lock');
  a.child.kill('SIGKILL');
  await b.line('got');
  assert.equal(await b.exited, 0);
});
