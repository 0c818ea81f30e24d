import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, test } from 'node:test';
import { buildProgram, COMMANDS, commandOf, main, VERSION_ONLY } from '../src/cli/main.ts';
import { EXIT } from '../src/errors.ts';

// A run and a copy at half its throughput: one run a side, so `--fail-below 0.9` is inconclusive (exit 7),
// a code the compare action returns rather than throws.
const RUN = new URL('./fixtures/report/run-stall.json', import.meta.url).pathname;
const dir = mkdtempSync(path.join(tmpdir(), 'dbsmack-cli-main-'));
after(() => rmSync(dir, { recursive: true, force: true }));
const HALF = path.join(dir, 'half.json');
const half = JSON.parse(readFileSync(RUN, 'utf8'));
half.totals.qps /= 2;
half.label = 'half';
writeFileSync(HALF, JSON.stringify(half));
const GUARD = ['compare', RUN, HALF, '--fail-below', '0.9'];

/** Run `fn` with stdout and stderr caught; returns what each received. */
async function caught<T>(fn: () => Promise<T>): Promise<{ value: T; out: string; err: string }> {
  // The test runner reports a finished test through stdout a moment later: let it, before catching.
  await new Promise((resolve) => setImmediate(resolve));
  const out: string[] = [];
  const err: string[] = [];
  const w1 = process.stdout.write;
  const w2 = process.stderr.write;
  process.stdout.write = ((c: string | Uint8Array) => out.push(String(c)) > 0) as typeof w1;
  process.stderr.write = ((c: string | Uint8Array) => err.push(String(c)) > 0) as typeof w2;
  try {
    return { value: await fn(), out: out.join(''), err: err.join('') };
  } finally {
    process.stdout.write = w1;
    process.stderr.write = w2;
  }
}

test('an action hands its exit code to the sink buildProgram is given, once', async () => {
  const codes: number[] = [];
  const program = await buildProgram((c) => codes.push(c));
  const { out } = await caught(() => program.parseAsync(['list'], { from: 'user' }));
  assert.deepEqual(codes, [EXIT.ok]);
  assert.match(out, /^select1 /);
  // a guard that cannot pass returns its code (not thrown)
  const fails: number[] = [];
  const guard = await buildProgram((c) => fails.push(c));
  const { out: table, err } = await caught(() => guard.parseAsync(GUARD, { from: 'user' }));
  assert.deepEqual(fails, [EXIT.inconclusive]);
  assert.match(table, /ratio/);
  assert.match(err, /too few repeats cannot confirm: half at 2 clients/);
});

test('main returns the code the action returned, and nothing carries over from one call to the next', async () => {
  assert.equal((await caught(() => main(GUARD))).value, EXIT.inconclusive);
  // the next call starts from 0, not from the code before it
  assert.equal((await caught(() => main(['list']))).value, EXIT.ok);
  assert.equal((await caught(() => main(['--version']))).value, EXIT.ok);
  // --debug of one call does not reach the next
  const debug = await caught(() => main(['show', 'x', '--debug']));
  assert.equal(debug.value, EXIT.usage);
  assert.match(debug.err, /UsageError: show expects a numeric id/);
  const plain = await caught(() => main(['show', 'x']));
  assert.equal(plain.value, EXIT.usage);
  assert.equal(plain.err, "dbsmack: show expects a numeric id, got 'x'\nhint: see dbsmack history\n");
});

test('COMMANDS names every command of the program and its aliases, in the order --help lists them', async () => {
  const program = await buildProgram();
  assert.deepEqual(
    COMMANDS.flatMap((c) => c.names),
    program.commands.flatMap((c) => [c.name(), ...c.aliases()]),
  );
});

test('commandOf takes the first word after --debug, and only a known command', () => {
  assert.deepEqual(commandOf(['run', 'select1'])?.names, ['run']);
  assert.deepEqual(commandOf(['--debug', 'cleanup', 'x'])?.names, ['prepare', 'cleanup']);
  // a lone --version needs no command
  assert.equal(commandOf(['--version']), VERSION_ONLY);
  assert.equal(commandOf(['--debug', '-V']), VERSION_ONLY);
  for (const argv of [
    [],
    ['help', 'run'],
    ['--help', 'run'],
    ['-V', 'run'],
    ['--version', '--help'],
    ['runn'],
    ['--debug'],
    ['--db', 'run'],
  ]) {
    assert.equal(commandOf(argv), undefined, argv.join(' '));
  }
});

test('a program built for one command gives that command the help and options of the full program', async () => {
  const full = await buildProgram();
  for (const entry of COMMANDS) {
    const one = await buildProgram(() => {}, entry);
    for (const name of entry.names) {
      const a = full.commands.find((c) => c.name() === name);
      const b = one.commands.find((c) => c.name() === name);
      assert.ok(a && b, name);
      assert.equal(b.helpInformation(), a.helpInformation(), name);
      assert.deepEqual(
        b.options.map((o) => o.flags),
        a.options.map((o) => o.flags),
        name,
      );
    }
  }
});
