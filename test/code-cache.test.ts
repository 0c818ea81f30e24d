/**
 * The bundles' code cache (src/code-cache.ts): a bundle run twice comes from the cache the second time, a
 * cache V8 refuses or one of another build of the bundle is compiled anew and replaced, and the CLI's real
 * bundles keep theirs, one for each command or driver and workload (and still `import()` a workload module
 * from code that came from it).
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, statSync, utimesSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import { codeCacheKey } from '../src/code-cache.ts';
import { ADDON_PATH, nativeAddon, nativeUnavailable } from '../src/driver/native-core.ts';
import { ROOT, runCli, tmpDir } from './helpers/cli.ts';
import { need } from './helpers/preconditions.ts';

const LOADER = path.join(ROOT, 'src', 'code-cache.ts');

/** A bundle that says how it was called, and a function it calls (compiled, so in the cache). */
const BUNDLE = `"use strict";
function greet(n) { return "hello " + n; }
const out = { greeting: greet(require("node:path").basename(__filename)), dir: __dirname,
  module: typeof module.exports, ran: (globalThis.ran = (globalThis.ran || 0) + 1) };
process.stdout.write(JSON.stringify(out) + "\\n");
`;

/** Run `file` through runBundle in a fresh process: [how it ran, what the bundle printed]. */
function run(
  dir: string,
  file: string,
  key: string,
  env: NodeJS.ProcessEnv = { DBSMACK_NATIVE_ADDON: path.join(dir, 'no-addon.node') },
): { how: string; out: { greeting: string; dir: string; module: string; ran: number } } {
  const driver = path.join(dir, 'driver.ts');
  writeFileSync(
    driver,
    `import { runBundle, saveCodeCache } from ${JSON.stringify(LOADER)};\n` +
      `const how = runBundle(${JSON.stringify(file)}, ${JSON.stringify(key)});\n` +
      'saveCodeCache();\nprocess.stdout.write(how + "\\n");\n',
  );
  const r = spawnSync(process.execPath, ['--import', 'tsx', driver], {
    encoding: 'utf8',
    env: { ...process.env, DBSMACK_CODE_CACHE: '', ...env },
  });
  assert.equal(r.status, 0, r.stderr);
  const [printed, how] = r.stdout.trim().split('\n');
  return { how: how as string, out: JSON.parse(printed as string) };
}

const cacheFiles = (dir: string): string[] => (existsSync(dir) ? readdirSync(dir).sort() : []);

test('a bundle comes from the cache from its second run on; a refused cache is made again', () => {
  const dir = tmpDir();
  const file = path.join(dir, 'bundle.cjs');
  writeFileSync(file, BUNDLE);
  const cacheDir = path.join(dir, 'v8-cache');

  const first = run(dir, file, 'k');
  assert.equal(first.how, 'compiled');
  assert.deepEqual(first.out, { greeting: 'hello bundle.cjs', dir, module: 'object', ran: 1 });
  const made = cacheFiles(cacheDir);
  assert.equal(made.length, 1, 'one cache file');
  assert.match(made[0] as string, new RegExp(`^bundle-k-${BUNDLE.length}-\\d+\\.bin$`));
  const cacheFile = path.join(cacheDir, made[0] as string);
  const written = statSync(cacheFile).mtimeMs;

  const second = run(dir, file, 'k');
  assert.equal(second.how, 'cached');
  assert.deepEqual(second.out, first.out);
  assert.equal(statSync(cacheFile).mtimeMs, written, 'a cache V8 took is not written again');

  // what V8 refuses: compiled as without one, then replaced
  writeFileSync(cacheFile, 'not a code cache');
  const refused = run(dir, file, 'k');
  assert.equal(refused.how, 'compiled');
  assert.deepEqual(refused.out, first.out);
  assert.notEqual(readFileSync(cacheFile, 'utf8'), 'not a code cache');
  assert.equal(run(dir, file, 'k').how, 'cached');

  // a cache damaged inside (its header intact): refused too, where V8 alone would abort the process
  const good = readFileSync(cacheFile);
  const damaged = Buffer.from(good);
  for (let i = damaged.length >> 1; i < (damaged.length >> 1) + 16; i++)
    damaged[i] = (damaged[i] as number) ^ 0x5a;
  writeFileSync(cacheFile, damaged);
  const repaired = run(dir, file, 'k');
  assert.equal(repaired.how, 'compiled');
  assert.deepEqual(repaired.out, first.out);
  assert.equal(run(dir, file, 'k').how, 'cached');

  // another key, another cache
  assert.equal(run(dir, file, 'other').how, 'compiled');
  assert.equal(cacheFiles(cacheDir).length, 2);
});

test('the native core reads a bundle as JavaScript does, and the caches of either serve the other', (t) => {
  if (!need(t, nativeUnavailable())) return;
  const addon = nativeAddon() as NonNullable<ReturnType<typeof nativeAddon>>;
  const dir = tmpDir();
  const file = path.join(dir, 'bundle.cjs');
  writeFileSync(file, BUNDLE);
  assert.equal(addon.readSource(file, '(head ', ' tail)'), `(head ${BUNDLE} tail)`);
  // a page's worth of source and more: the head before, the tail after its last byte
  const big = path.join(dir, 'big.cjs');
  const text = `${'x'.repeat(4096 * 3 - 1)}\n`;
  writeFileSync(big, text);
  assert.equal(addon.readSource(big, 'H', 'T'), `H${text}T`);
  // what it leaves to the JavaScript reader: a file beyond ASCII, one that is not there, an empty one
  const accented = path.join(dir, 'accented.cjs');
  writeFileSync(accented, '// caf\u00e9\n');
  assert.equal(addon.readSource(accented, '', ''), undefined);
  assert.equal(addon.readSource(path.join(dir, 'missing.cjs'), '', ''), undefined);
  writeFileSync(path.join(dir, 'empty.cjs'), '');
  assert.equal(addon.readSource(path.join(dir, 'empty.cjs'), '', ''), undefined);

  // through runBundle: made by one reader, taken by the other (V8 sees the same source)
  const native = { DBSMACK_NATIVE_ADDON: ADDON_PATH };
  const first = run(dir, file, 'k', native);
  assert.equal(first.how, 'compiled');
  assert.deepEqual(first.out, { greeting: 'hello bundle.cjs', dir, module: 'object', ran: 1 });
  assert.equal(run(dir, file, 'k', native).how, 'cached');
  assert.equal(
    run(dir, file, 'k').how,
    'cached',
    'the JavaScript reader takes the cache the native one made',
  );
  assert.equal(run(dir, file, 'j').how, 'compiled');
  assert.equal(run(dir, file, 'j', native).how, 'cached', 'and the other way round');
});

test('a bundle changed in place is compiled from its new source, never from the old cache', () => {
  const dir = tmpDir();
  const file = path.join(dir, 'bundle.cjs');
  writeFileSync(file, BUNDLE);
  assert.equal(run(dir, file, 'k').how, 'compiled');
  assert.equal(run(dir, file, 'k').how, 'cached');
  // the same length (all V8 checks of the source), another greeting and another time
  writeFileSync(file, BUNDLE.replace('"hello "', '"howdy "'));
  utimesSync(file, new Date(), new Date(Date.now() + 5000));
  const changed = run(dir, file, 'k');
  assert.equal(changed.how, 'compiled');
  assert.equal(changed.out.greeting, 'howdy bundle.cjs');
  assert.equal(run(dir, file, 'k').how, 'cached');
});

test('no cache: DBSMACK_CODE_CACHE=off, or a key that is not a plain name; or another folder', () => {
  const dir = tmpDir();
  const file = path.join(dir, 'bundle.cjs');
  writeFileSync(file, BUNDLE);
  assert.equal(run(dir, file, 'k', { DBSMACK_CODE_CACHE: 'off' }).how, 'plain');
  assert.equal(run(dir, file, '../k').how, 'plain');
  assert.deepEqual(cacheFiles(path.join(dir, 'v8-cache')), []);
  const elsewhere = path.join(dir, 'elsewhere');
  assert.equal(run(dir, file, 'k', { DBSMACK_CODE_CACHE: elsewhere }).how, 'compiled');
  assert.equal(run(dir, file, 'k', { DBSMACK_CODE_CACHE: elsewhere }).how, 'cached');
  assert.equal(cacheFiles(elsewhere).length, 1);
  assert.deepEqual(cacheFiles(path.join(dir, 'v8-cache')), []);
  // a folder that cannot be made (a file on its way): no cache, and the run goes on
  const blocked = path.join(file, 'cache');
  assert.equal(run(dir, file, 'k', { DBSMACK_CODE_CACHE: blocked }).how, 'compiled');
  assert.equal(run(dir, file, 'k', { DBSMACK_CODE_CACHE: blocked }).how, 'compiled');
});

test('the cache key: the command or driver, and the workload a built-in name or a kind of file', () => {
  assert.equal(codeCacheKey('run', 'oltp_point_select'), 'run-oltp-point-select');
  assert.equal(codeCacheKey('postgres', 'select1'), 'postgres-select1');
  assert.equal(codeCacheKey('postgres', 'pgbench'), 'postgres-pgbench');
  assert.equal(codeCacheKey('mysql', '/home/u/bench/Select-Key.SMACK'), 'mysql-smack');
  assert.equal(codeCacheKey('run', 'tpcb.sql'), 'run-sql');
  for (const m of ['./w.ts', '/a/w.mts', 'w.js', 'w.mjs', 'w.cjs', 'w.cts'])
    assert.equal(codeCacheKey('sqlite', m), 'sqlite-module', m);
  assert.equal(codeCacheKey('run', 'data.tar.gz'), 'run-file');
  // no workload, an option in its place, or a key that would not be a plain name: the base alone
  assert.equal(codeCacheKey('run', undefined), 'run');
  assert.equal(codeCacheKey('run', '--db'), 'run');
  assert.equal(codeCacheKey('run', './no-extension'), 'run');
  assert.equal(codeCacheKey('run', 'x'.repeat(40)), 'run');
  assert.equal(codeCacheKey('', undefined), '');
});

test("the CLI's bundles keep a cache for the command and for the worker's driver, and still import() a module", async (t) => {
  const bundle = path.join(ROOT, 'dist', 'bundle', 'cli.cjs');
  if (!need(t, existsSync(bundle) ? undefined : `the CLI is not bundled (${bundle}): npm run build`)) return;
  const cacheDir = tmpDir();
  const mod = path.join(ROOT, 'test', 'fixtures', 'workloads', 'own-errors.ts');
  const db = `sqlite:${path.join(tmpDir(), 'cc.sqlite')}`;
  const args = ['run', mod, '--db', db, '--clients', '1', '--rounds', '5', '--format', 'json'];
  const env = { DBSMACK_CODE_CACHE: cacheDir };
  const first = await runCli(args, { env });
  assert.equal(first.code, 0, first.stderr);
  const files = cacheFiles(cacheDir);
  assert.ok(
    files.some((f) => /^cli-run-module-\d+-\d+\.bin$/.test(f)) &&
      files.some((f) => /^worker-main-sqlite-module-\d+-\d+\.bin$/.test(f)),
    files.join(' '),
  );
  const times = files.map((f) => statSync(path.join(cacheDir, f)).mtimeMs);
  const second = await runCli(args, { env });
  assert.equal(second.code, 0, second.stderr);
  assert.equal(JSON.parse(second.stdout).totals.events, JSON.parse(first.stdout).totals.events);
  assert.deepEqual(cacheFiles(cacheDir), files);
  assert.deepEqual(
    files.map((f) => statSync(path.join(cacheDir, f)).mtimeMs),
    times,
    'the second run took both caches',
  );
});

test('load workers started at once all take the cache the first run kept, and none writes it again', async (t) => {
  const bundle = path.join(ROOT, 'dist', 'bundle', 'cli.cjs');
  if (!need(t, existsSync(bundle) ? undefined : `the CLI is not bundled (${bundle}): npm run build`)) return;
  const cacheDir = tmpDir();
  const db = `sqlite:${path.join(tmpDir(), 'workers.sqlite')}`;
  const args = ['run', 'select1', '--db', db, '--clients', '4', '--workers', '4', '--events', '20'];
  const env = { DBSMACK_CODE_CACHE: cacheDir };
  const first = await runCli([...args, '--format', 'json'], { env });
  assert.equal(first.code, 0, first.stderr);
  const worker = cacheFiles(cacheDir).find((f) => /^worker-main-sqlite-select1-\d+-\d+\.bin$/.test(f));
  assert.ok(worker, cacheFiles(cacheDir).join(' '));
  const file = path.join(cacheDir, worker);
  const kept = { time: statSync(file).mtimeMs, bytes: readFileSync(file) };
  // Before 2026-12-06 the workers turned a V8 flag on and off around their compiling: the cache one of them
  // wrote carried the flags of that moment, and the next run refused it and wrote it again.
  for (let i = 0; i < 3; i++) {
    const again = await runCli([...args, '--format', 'json'], { env });
    assert.equal(again.code, 0, again.stderr);
    assert.equal(JSON.parse(again.stdout).totals.events, 20);
  }
  assert.equal(statSync(file).mtimeMs, kept.time, 'no worker wrote the cache again');
  assert.deepEqual(readFileSync(file), kept.bytes);
  // another workload keeps a cache of its own beside it (it compiles other functions), and leaves this one
  const other = ['run', 'oltp_point_select', '--db', db, '--table-size', '50'];
  assert.equal((await runCli(['prepare', ...other.slice(1)], { env })).code, 0);
  const sysbench = await runCli([...other, '--clients', '4', '--workers', '4', '--events', '20'], { env });
  assert.equal(sysbench.code, 0, sysbench.stderr);
  const after = cacheFiles(cacheDir);
  for (const prefix of ['worker-main-sqlite', 'cli-run', 'cli-prepare'])
    assert.ok(
      after.some((f) => f.startsWith(`${prefix}-oltp-point-select-`)),
      `${prefix}: ${after.join(' ')}`,
    );
  assert.equal(statSync(file).mtimeMs, kept.time, "the first workload's cache is left as it was");
});

test('a run with --debug ends cleanly: the addon a load worker loaded outlives the worker', async (t) => {
  const bundle = path.join(ROOT, 'dist', 'bundle', 'cli.cjs');
  if (!need(t, existsSync(bundle) ? undefined : `the CLI is not bundled (${bundle}): npm run build`)) return;
  if (!need(t, nativeUnavailable())) return;
  // --debug loads the CLI's bundle without the addon, so only the workers load it (for their bundle's
  // source): before 2026-12-06 the first worker to end unloaded it, and V8 then freed that source through a
  // function no longer mapped (a segmentation fault, exit 139, at every such run)
  const db = `sqlite:${path.join(tmpDir(), 'debug.sqlite')}`;
  const r = await runCli(
    ['run', 'select1', '--db', db, '--clients', '2', '--workers', '2', '--events', '10', '--debug'],
    {
      env: { DBSMACK_CODE_CACHE: tmpDir() },
    },
  );
  assert.equal(r.code, 0, `exit ${r.code} (${r.signal ?? 'no signal'}): ${r.stderr}`);
  assert.match(r.stdout, /\b10 queries\b/);
});
