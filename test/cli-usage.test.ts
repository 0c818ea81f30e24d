/**
 * The command line catches mistakes: unknown options are called unknown (with the nearest known option of
 * the command or of the workload), stray words are refused where a workload takes none, every workload has
 * a help listing its options with their defaults, and every command's --help writes each default one way.
 * Runs the built CLI (npm run build first); nothing here needs a server.
 */
import assert from 'node:assert/strict';
import { readdirSync } from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import { ROOT, runCli, tmpDir } from './helpers/cli.ts';

const EXAMPLES = path.join(ROOT, 'examples');

async function usageError(args: string[], pattern: RegExp, hint?: RegExp): Promise<void> {
  const r = await runCli(args);
  const what = `${args.join(' ')}:\n${r.stderr}`;
  assert.equal(r.code, 2, what);
  assert.match(r.stderr.split('\n')[0] ?? '', pattern, what);
  if (hint) assert.match(r.stderr, hint, what);
  assert.doesNotMatch(r.stderr, /\n\s+at /, 'no stack trace');
  assert.equal(r.stdout, '', 'nothing ran');
}

test('an unknown option is unknown, with a value after it or not', async () => {
  await usageError(
    ['run', 'select1', '--bogus'],
    /^dbsmack: unknown option '--bogus': neither run nor select1 has it$/,
  );
  await usageError(['run', 'select1', '--bogus', '3'], /^dbsmack: unknown option '--bogus'/);
  await usageError(['run', 'select1', '--bogus=3'], /^dbsmack: unknown option '--bogus'/);
  await usageError(
    ['prepare', 'select1', '--bogus'],
    /^dbsmack: unknown option '--bogus': neither prepare nor/,
  );
  await usageError(['gen-data', '--bogus'], /^dbsmack: unknown option '--bogus'/);
});

test('a typo gets the nearest option of the command or of the workload', async () => {
  const cases: [string[], string][] = [
    [['run', 'select1', '--clinets', '4'], '--clients'],
    [['run', 'select1', '--prepraed', 'off'], '--prepared'],
    [['run', 'oltp_read_write', '--tabels', '3'], '--tables'],
    [['run', 'oltp_read_write', '--table_szie', '3'], '--table-size'],
    [['sweep', 'select1', '--clients', '1', '--repaet', '2'], '--repeat'],
    [['prepare', 'oltp_point_select', '--thread', '2'], '--threads'],
  ];
  for (const [args, near] of cases) {
    await usageError(args, new RegExp(`^dbsmack: unknown option '--\\S+' \\(did you mean ${near}\\?\\)$`));
  }
  // Commands without workload options say it the same way, on one line (commander's own suggestion).
  for (const [args, near] of [
    [['compare', 'a', 'b', '--metirc', 'p95'], '--metric'],
    [['history', '--lable', 'x'], '--label'],
  ] as const) {
    const r = await runCli([...args]);
    assert.equal(r.code, 2);
    assert.equal(
      r.stderr.split('\n')[0],
      `dbsmack: unknown option '${args[args.length - 2]}' (did you mean ${near}?)`,
    );
    assert.ok(r.stderr.trimEnd().split('\n').length <= 2, r.stderr);
  }
  await usageError(['swep', 'select1'], /^dbsmack: unknown command 'swep' \(did you mean sweep\?\)$/);
});

test('stray words are refused where the workload takes no positional arguments', async () => {
  await usageError(
    ['run', 'select1', 'foo', 'bar'],
    /^dbsmack: select1 takes no arguments, got 'foo' 'bar'$/,
    /^hint: .*dbsmack run select1 --help/m,
  );
  await usageError(['run', 'oltp_point_select', '--tables', '2', 'extra'], /takes no arguments, got 'extra'/);
  await usageError(['sweep', 'select1', '--clients', '1', 'foo'], /takes no arguments/);
  // A word after an on/off option is its value, so a bad one is named rather than swallowed.
  await usageError(
    ['run', 'select1', '--prepared', 'maybe'],
    /^dbsmack: --prepared expects on or off, got 'maybe'$/,
  );
  await usageError(['run', 'oltp_point_select', '--skip-trx', 'sure'], /--skip-trx expects on or off/);
  // A bare flag still works, before another option too.
  const ok = await runCli(['run', 'select1', '--prepared', '--time', '0.2', '-q', '--format', 'json']);
  assert.equal(ok.code, 0, ok.stderr);
  assert.equal(JSON.parse(ok.stdout).workload.options.prepared, true);
});

test('every kind of workload has a help with its options and their defaults', async () => {
  const dir = tmpDir();
  // sysbench's form: `WORKLOAD help` prints the options, touches no database and needs no table.
  const sb = await runCli(['run', 'oltp_read_write', 'help'], { cwd: dir });
  assert.equal(sb.code, 0, sb.stderr);
  assert.match(sb.stdout, /^Usage: dbsmack run oltp_read_write /m);
  assert.match(sb.stdout, /--table-size <n>\s+number of rows per table \(default: 10000\)/);
  assert.match(sb.stdout, /--skip-trx \[on\|off\][\s\S]*?\(default: off\)/);
  assert.match(sb.stdout, /--rand-type <value>[\s\S]*?default: special\)/);
  assert.match(sb.stdout, /dbsmack run --help/);
  assert.deepEqual(readdirSync(dir), [], 'no database file was made');
  // --help: the command's help, then the workload's.
  const full = await runCli(['run', 'oltp_read_write', '--help']);
  assert.equal(full.code, 0, full.stderr);
  assert.match(full.stdout, /^Usage: dbsmack run \[options\] <workload> \[args\.\.\.\]/);
  assert.match(full.stdout, /-c, --clients <n>/);
  assert.match(full.stdout, /--table-size <n>/);
  // A built-in, a module, a smack file (its $1 $2 and where main reads them), under every command.
  const s1 = await runCli(['run', 'select1', '--help']);
  assert.match(s1.stdout, /--prepared \[on\|off\][\s\S]*?\(default: on\)/);
  assert.match(s1.stdout, /takes no positional arguments/);
  const mod = await runCli(['run', path.join(EXAMPLES, 'kv-zipfian.ts'), 'help']);
  assert.equal(mod.code, 0, mod.stderr);
  assert.match(mod.stdout, /--keys <n>\s+number of keys \(default: 1000\)/);
  const smack = await runCli(['run', path.join(EXAMPLES, 'select-key.smack'), 'help']);
  assert.equal(smack.code, 0, smack.stderr);
  assert.match(
    smack.stdout,
    /^Usage: dbsmack run \S+select-key\.smack \[options of run\] \[options\] \$1 \$2$/m,
  );
  assert.match(smack.stdout, /^ {2}\$1\s+read by reader\.create_threads\(\$1\)$/m);
  assert.match(smack.stdout, /^ {2}\$2\s+read by reader\.set_num_rounds\(\$2\)$/m);
  for (const cmd of ['prepare', 'cleanup', 'sweep']) {
    const r = await runCli([cmd, 'oltp_point_select', 'help']);
    assert.equal(r.code, 0, `${cmd}: ${r.stderr}`);
    assert.match(r.stdout, new RegExp(`^Usage: dbsmack ${cmd} oltp_point_select `, 'm'));
    assert.match(r.stdout, /--tables <n>\s+number of tables \(default: 1\)/);
  }
  // Without a workload, --help is the command's, and a missing workload is still an error.
  const bare = await runCli(['run', '--help']);
  assert.equal(bare.code, 0);
  await usageError(['run'], /^dbsmack: missing required argument 'workload'$/);
});

test('--help of every command writes each default one way: "(default: …)", given by commander', async () => {
  const commands = [
    'run',
    'prepare',
    'cleanup',
    'sweep',
    'capacity',
    'compare',
    'report',
    'history',
    'show',
    'gen-data',
    'list',
  ];
  const expected: Record<string, RegExp[]> = {
    run: [
      /--clients <n> .*\(default: 1, or a smack file's create_threads\)/,
      /--time <s> .*\(default: 10 when no other limit is given\)/,
      /--workers <n> .*\(default: one per SQLite client up to 8 per core, the clients beyond sharing them; one per PostgreSQL client up to 4 on the native I\/O core \(up to 8 where the workload only reads, but not on an AMD CPU\); else one per two cores, at least two \(on 2 to 5 cores one, with a native I\/O thread, for more PostgreSQL clients\)\)/,
      /--format <fmt> .*\(default: text\)/,
      /--rand-seed <n> .*\(default: drawn from the clock\)/,
      /--history <path> .*\(default: \$DBSMACK_HISTORY, else ~\/\.local\/share\/dbsmack\/history\.sqlite\)/,
      /--db-type <type> .*default: sqlite\)/,
      /--datadir <dir> .*\(default: ~\/\.cache\/dbsmack\)/,
      /--percentile <p> .*\(default: 95\)/,
      /--profile-rate <hz> .*\(default: 20\)/,
      /--mysql-user <user> .*\(default: sbtest\)/,
    ],
    prepare: [/--threads <n> .*\(default: 1\)/],
    capacity: [/--rate-min <r> .*\(default: 10\)/, /--repeat <n> .*\(default: 2\)/, /--slo <expr> /],
    sweep: [/--repeat <n> .*\(default: 5\)/, /--label <name> .*\(default: WORKLOAD-YYYYMMDD-HHMMSS\)/],
    compare: [/--alpha <a> .*\(default: 0\.05\)/, /--metric <m> .*default: qps\)/],
    report: [/--title <text> .*\(default: the workload and the labels\)/],
    history: [/--limit <n> .*\(default: 50\)/],
    'gen-data': [/--seed <n> .*\(default: 1\)/],
  };
  for (const c of commands) {
    const r = await runCli([c, '--help']);
    assert.equal(r.code, 0, `${c}: ${r.stderr}`);
    // Descriptions wrap: read each option as one line.
    const text = r.stdout.replace(/\n {10,}/g, ' ').replace(/ +/g, ' ');
    for (const line of text.split('\n')) {
      for (const m of line.matchAll(/default/gi)) {
        const before = line.slice(0, m.index);
        assert.match(`${before}default:`, /(\(|, )default:$/, `${c}: a default written another way: ${line}`);
      }
      assert.doesNotMatch(line, /default: "/, `${c}: a default in quotes: ${line}`);
    }
    for (const re of expected[c] ?? []) assert.match(text, re, `${c}: ${re}`);
  }
});
