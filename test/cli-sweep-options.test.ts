import assert from 'node:assert/strict';
import { test } from 'node:test';
import { Command } from '@commander-js/extra-typings';
import { buildProgram } from '../src/cli/main.ts';
import { runInvocation } from '../src/cli/run.ts';
import { parseClientList, registerSweep, schedule } from '../src/cli/sweep.ts';
import { UsageError } from '../src/errors.ts';

test('client lists parse, keep their order, drop duplicates, and reject junk', () => {
  assert.deepEqual(parseClientList('1,2,4, 8,4'), [1, 2, 4, 8]);
  for (const bad of ['', '1,,2', '0', '1,x', '-1', '2.5'])
    assert.throws(() => parseClientList(bad), UsageError, bad);
});

test('runs are grouped by client count, or interleaved across them', () => {
  assert.deepEqual(schedule([1, 4], 2, false), [
    { clients: 1, repeat: 1 },
    { clients: 1, repeat: 2 },
    { clients: 4, repeat: 1 },
    { clients: 4, repeat: 2 },
  ]);
  assert.deepEqual(schedule([1, 4], 2, true), [
    { clients: 1, repeat: 1 },
    { clients: 4, repeat: 1 },
    { clients: 1, repeat: 2 },
    { clients: 4, repeat: 2 },
  ]);
});

test('sweep accepts every option of run, including ones added to run later (such as --rate)', async () => {
  const program = new Command();
  program.command('run').option('--rate <n>', 'events per second').option('--events <e>', 'limit');
  registerSweep(program, () => {}, runInvocation);
  const sweep = program.commands.find((c) => c.name() === 'sweep')!;
  const longs = sweep.options.map((o) => o.long);
  assert.ok(longs.includes('--rate'));
  assert.ok(longs.includes('--events'));
  // and the real program: sweep has run's options but its own --clients
  const real = (await buildProgram()).commands.find((c) => c.name() === 'sweep')!;
  const names = real.options.map((o) => o.long);
  for (const n of [
    '--db',
    '--time',
    '--warmup',
    '--max-tries',
    '--repeat',
    '--interleave',
    '--history',
    '--no-history',
  ]) {
    assert.ok(names.includes(n), n);
  }
  assert.equal(names.filter((n) => n === '--clients').length, 1);
});
