/**
 * The bench scripts' numeric options (bench/args.ts positivesOf, positiveOf): a count or a duration that is
 * not a positive integer is refused in one line naming the option and the value, exit status 2, before the
 * script runs anything (no server is needed: every check comes before the first connection). Before, a bare
 * `Number(…)` let `--repeat x` run every warm-up and print rows of NaN, and `--clients 8x` loop over nothing;
 * bench/stacks-cost and bench/metrics-cost read their options by hand and ignored a misspelt one.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { test } from 'node:test';
import { ROOT } from './helpers/cli.ts';

const cases: [script: string, args: string[], option: string][] = [
  ['peers', ['--repeat', 'x'], 'repeat'],
  ['peers', ['--clients', '1,8x'], 'clients'],
  ['builds', ['--a', '.', '--pairs', '0'], 'pairs'],
  ['builds', ['--a', '.', '--clients', '1,,8'], 'clients'],
  ['native-floor', ['--time', '1e3'], 'time'],
  ['node-floor', ['--repeat', '2,3'], 'repeat'],
  ['node-floor', ['--table-size=-5'], 'table-size'],
  ['profile-top', ['--top', 'ten', 'x.cpuprofile'], 'top'],
  ['soak', ['--big-clients', '1.5'], 'big-clients'],
  ['wire-cpu', ['--n', ''], 'n'],
  ['sysbench-parity', ['--threads', '1,four'], 'threads'],
  ['stacks-cost', ['--repeat', '0'], 'repeat'],
  ['metrics-cost', ['--scrape', '0.5'], 'scrape'],
];

for (const [script, args, option] of cases) {
  test(`bench/${script}.ts ${args.join(' ')}: refused in one line, exit status 2`, () => {
    const file = path.join(ROOT, 'bench', `${script}.ts`);
    const r = spawnSync(process.execPath, ['--import', 'tsx', file, ...args], {
      cwd: ROOT,
      encoding: 'utf8',
      timeout: 60_000,
    });
    assert.equal(r.status, 2, `exit status (stderr: ${r.stderr})`);
    assert.equal(r.stdout, '', 'nothing printed on stdout: nothing ran');
    const lines = r.stderr.trim().split('\n');
    assert.equal(lines.length, 1, `one line: ${r.stderr}`);
    assert.match(lines[0] as string, new RegExp(`--${option} .*expected a positive integer`));
  });
}

test('bench/builds.ts --a DIR that is not a built checkout: refused in one line before any run, exit status 2', () => {
  const r = spawnSync(
    process.execPath,
    ['--import', 'tsx', path.join(ROOT, 'bench', 'builds.ts'), '--a', path.join(ROOT, 'no-such-checkout')],
    { cwd: ROOT, encoding: 'utf8', timeout: 60_000 },
  );
  assert.equal(r.status, 2, `exit status (stderr: ${r.stderr})`);
  assert.equal(r.stdout, '', 'nothing printed on stdout: nothing ran');
  const lines = r.stderr.trim().split('\n');
  assert.equal(lines.length, 1, `one line: ${r.stderr}`);
  assert.match(lines[0] as string, /--a .*no-such-checkout is not a built dbsmack checkout/);
});

test('bench/machine.ts takes no option: a misspelt one is refused in one line before anything runs, exit status 2', () => {
  const r = spawnSync(
    process.execPath,
    ['--import', 'tsx', path.join(ROOT, 'bench', 'machine.ts'), '--repaet', '3'],
    { cwd: ROOT, encoding: 'utf8', timeout: 60_000 },
  );
  assert.equal(r.status, 2, `exit status (stderr: ${r.stderr})`);
  assert.equal(r.stdout, '', 'nothing printed on stdout: nothing ran');
  const lines = r.stderr.trim().split('\n');
  assert.equal(lines.length, 1, `one line: ${r.stderr}`);
  assert.match(lines[0] as string, /machine\.ts: Unknown option '--repaet'/);
});
