/**
 * TypeScript workload modules are compiled once, in the main thread, and the load workers import the
 * JavaScript they are handed (src/workload/module-compile.ts): what the compiled module keeps of its
 * sources (local imports, import.meta, packages as Node.js resolves them, `dbsmack` as the running one), and
 * that bad modules name file:line:column.
 */
import assert from 'node:assert/strict';
import {
  copyFileSync,
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import { pathToFileURL } from 'node:url';
import type { RunResult } from '../src/metrics/run-result.ts';
import { loadWorkload, workerRef } from '../src/workload/registry.ts';
import { ROOT, runCli, tmpDir } from './helpers/cli.ts';

// The modules this process compiles are kept in a folder of this file's own (module-compile.ts).
process.env.DBSMACK_CODE_CACHE = tmpDir('dbsmack-module-cache-');

/** A folder outside any package: a module, its helper in lib/, and a package with import and require builds. */
function moduleFolder(): { dir: string; mod: string; helper: string; other: string } {
  const dir = tmpDir('dbsmack-module-');
  mkdirSync(path.join(dir, 'lib'));
  mkdirSync(path.join(dir, 'node_modules', 'dual-pkg'), { recursive: true });
  writeFileSync(
    path.join(dir, 'node_modules', 'dual-pkg', 'package.json'),
    JSON.stringify({
      name: 'dual-pkg',
      main: './cjs.cjs',
      module: './bundler.mjs',
      exports: { module: './bundler.mjs', import: './esm.mjs', require: './cjs.cjs' },
    }),
  );
  writeFileSync(path.join(dir, 'node_modules', 'dual-pkg', 'esm.mjs'), "export const flavour = 'import';\n");
  writeFileSync(
    path.join(dir, 'node_modules', 'dual-pkg', 'bundler.mjs'),
    "export const flavour = 'module';\n",
  );
  writeFileSync(path.join(dir, 'node_modules', 'dual-pkg', 'cjs.cjs'), "exports.flavour = 'require';\n");
  // No exports: Node.js takes main, where a bundler would take module.
  mkdirSync(path.join(dir, 'node_modules', 'main-pkg'));
  writeFileSync(
    path.join(dir, 'node_modules', 'main-pkg', 'package.json'),
    JSON.stringify({ name: 'main-pkg', main: './cjs.cjs', module: './bundler.mjs' }),
  );
  writeFileSync(path.join(dir, 'node_modules', 'main-pkg', 'bundler.mjs'), "export const kind = 'module';\n");
  writeFileSync(path.join(dir, 'node_modules', 'main-pkg', 'cjs.cjs'), "exports.kind = 'main';\n");
  const helper = path.join(dir, 'lib', 'helper.ts');
  writeFileSync(
    helper,
    [
      "import { flavour } from 'dual-pkg';",
      "import { kind } from 'main-pkg';",
      'export const where: Record<string, string> = {',
      '  url: import.meta.url,',
      '  filename: import.meta.filename,',
      '  dirname: import.meta.dirname,',
      '  flavour,',
      '  kind,',
      '};',
      '',
    ].join('\n'),
  );
  // A tsconfig path to a source of the module's own.
  writeFileSync(
    path.join(dir, 'tsconfig.json'),
    JSON.stringify({ compilerOptions: { baseUrl: '.', paths: { '@lib/*': ['./lib/*'] } } }),
  );
  writeFileSync(path.join(dir, 'lib', 'mapped.ts'), "export const mapped: string = 'by tsconfig';\n");
  const mod = path.join(dir, 'mod.ts');
  writeFileSync(
    mod,
    [
      "import { defineWorkload } from 'dbsmack';",
      "import { where } from './lib/helper.ts';",
      "import { mapped } from '@lib/mapped';",
      'const own: string = import.meta.url;',
      'export default defineWorkload({',
      "  name: 'module_test',",
      '  description: JSON.stringify({ ...where, own, mapped }),',
      '  client(ctx) {',
      "    const one = ctx.statement('one', 'SELECT 1');",
      '    return { async event() { await ctx.run(one); } };',
      '  },',
      '});',
      '',
    ].join('\n'),
  );
  const other = path.join(dir, 'other.ts');
  writeFileSync(
    other,
    "import { defineWorkload } from 'dbsmack';\nexport default defineWorkload({ name: 'other', client: () => ({ async event() {} }) });\n",
  );
  return { dir, mod, helper, other };
}

test('a compiled module keeps its local imports, each file its own import.meta, and packages as Node resolves them', async () => {
  const { mod, helper, other } = moduleFolder();
  const ref = { ref: mod, rawOptions: {}, args: [] };
  assert.equal(workerRef(ref).module, undefined, 'nothing compiled yet');
  const w = await loadWorkload(ref);
  assert.equal(w.name, 'module_test');
  const seen = JSON.parse(w.description ?? '{}') as Record<string, string>;
  assert.deepEqual(seen, {
    url: pathToFileURL(helper).href,
    filename: helper,
    dirname: path.dirname(helper),
    flavour: 'import',
    kind: 'main',
    own: pathToFileURL(mod).href,
    mapped: 'by tsconfig',
  });
  // What a load worker is handed, and that it imports that rather than the source.
  const handed = workerRef(ref);
  assert.match(handed.module ?? '', /^file:.*\/modules\/[0-9a-f]{32}-mod\.mjs$/);
  assert.equal(workerRef({ ref: 'select1', rawOptions: {}, args: [] }).module, undefined);
  await loadWorkload({ ref: other, rawOptions: {}, args: [] });
  const otherJs = workerRef({ ref: other, rawOptions: {}, args: [] }).module;
  assert.ok(otherJs !== undefined && otherJs !== handed.module);
  const asWorker = await loadWorkload({ ...ref, module: otherJs });
  assert.equal(asWorker.name, 'other', 'a worker imports the JavaScript in its plan');
  // Compiled once per process.
  await loadWorkload(ref);
  assert.equal(workerRef(ref).module, handed.module);
});

test('a module is compiled to CommonJS unless something in it needs an ES module', async () => {
  const dir = tmpDir('dbsmack-module-format-');
  const write = (name: string, lines: string[]): string => {
    const file = path.join(dir, name);
    writeFileSync(file, `${lines.join('\n')}\n`);
    return file;
  };
  // dbsmack and Node's modules only: CommonJS, the API compiled in, its errors still dbsmack's by class
  const plain = write('plain.ts', [
    "import { basename } from 'node:path';",
    "import { DbError, defineWorkload, oneStatement } from 'dbsmack';",
    "const e = new DbError('fatal', '42P01', 'no such table', '42P01');",
    'export default defineWorkload({',
    "  name: basename('/a/plain'),",
    '  description: String(e instanceof DbError),',
    "  client: (ctx) => oneStatement(ctx, () => ({ statement: ctx.statement('one', 'SELECT 1') })),",
    '});',
  ]);
  // import.meta.url, .filename and .dirname are the source's own as CommonJS too
  const ownUrl = write('own-url.ts', [
    "import { defineWorkload } from 'dbsmack';",
    'const here: string = import.meta.url;',
    "export default defineWorkload({ name: 'own_url', description: here, client: () => ({ async event() {} }) });",
  ]);
  // top-level await, which esbuild cannot write as CommonJS: an ES module
  const awaits = write('awaits.ts', [
    "import { defineWorkload } from 'dbsmack';",
    'const n = await Promise.resolve(3);',
    "export default defineWorkload({ name: 'awaits_' + n, client: () => ({ async event() {} }) });",
  ]);
  // import.meta beyond url, filename and dirname: an ES module
  const meta = write('meta.ts', [
    "import { defineWorkload } from 'dbsmack';",
    'const resolves = typeof import.meta.resolve;',
    "export default defineWorkload({ name: 'meta', description: resolves, client: () => ({ async event() {} }) });",
  ]);
  const cases: [string, string, RegExp, string | undefined][] = [
    [plain, 'plain', /-plain\.cjs$/, 'true'],
    [ownUrl, 'own_url', /-own-url\.cjs$/, pathToFileURL(ownUrl).href],
    [awaits, 'awaits_3', /-awaits\.mjs$/, undefined],
    [meta, 'meta', /-meta\.mjs$/, 'function'],
  ];
  for (const [file, name, compiled, description] of cases) {
    const ref = { ref: file, rawOptions: {}, args: [] };
    const w = await loadWorkload(ref);
    assert.equal(w.name, name);
    if (description !== undefined) assert.equal(w.description, description, name);
    const js = workerRef(ref).module ?? '';
    assert.match(js, compiled);
    // what a load worker does with what it is handed
    assert.equal((await loadWorkload({ ...ref, module: js })).name, name);
  }
  // the CLI's bundles run the CommonJS one on load workers, counting as ever
  const r = await runCli(
    ['run', plain, '--db', `sqlite:${path.join(dir, 'p.sqlite')}`, '--clients', '3', '--events', '30'],
    { env: { DBSMACK_CODE_CACHE: tmpDir('dbsmack-module-cli-cache-') } },
  );
  assert.equal(r.code, 0, r.stderr);
  assert.match(r.stdout, /\b30 queries\b/);
});

test('a module outside any package runs on the load workers, its errors the engine knows by class', async () => {
  const { dir, mod } = moduleFolder();
  const db = `sqlite:${path.join(dir, 'm.sqlite')}`;
  const flags = '--clients 2 --workers 2 --events 40 --format json'.split(' ');
  const r = await runCli(['run', mod, '--db', db, ...flags]);
  assert.equal(r.code, 0, r.stderr);
  const res = JSON.parse(r.stdout) as RunResult;
  assert.equal(res.workload.name, 'module_test');
  assert.equal(res.totals.events, 40);
  // `dbsmack` is the running package even where no node_modules holds it: DbError and UsageError thrown by
  // the module are the engine's own classes (a retried deadlock; a usage error, exit 2).
  const own = path.join(dir, 'own-errors.ts');
  copyFileSync(path.join(ROOT, 'test', 'fixtures', 'workloads', 'own-errors.ts'), own);
  // One client: with two, one worker may run all the events before the other's client starts (a fast machine).
  const e = await runCli(['run', own, '--db', db, '--clients', '1', '--events', '20', '--format', 'json']);
  assert.equal(e.code, 0, e.stderr);
  assert.equal((JSON.parse(e.stdout) as RunResult).totals.retries, 3);
  const u = await runCli(['run', own, '--db', db, '--refuse', '1', '--events', '5']);
  assert.equal(u.code, 2, u.stderr);
  assert.match(u.stderr, /own_errors: refused as asked/);
  assert.doesNotMatch(u.stderr, /internal error|report it/);
});

test('a compiled module is kept for the next runs, and compiled again when a file it was made from changes', async () => {
  const { dir, mod, helper } = moduleFolder();
  const cache = tmpDir('dbsmack-module-kept-');
  const env = { DBSMACK_CODE_CACHE: cache };
  const db = `sqlite:${path.join(dir, 'k.sqlite')}`;
  const name = async (): Promise<string> => {
    const r = await runCli(['run', mod, '--db', db, '--events', '3', '--format', 'json', '--no-history'], {
      env,
    });
    assert.equal(r.code, 0, r.stderr);
    return (JSON.parse(r.stdout) as RunResult).workload.name;
  };
  assert.equal(await name(), 'module_test');
  const kept = readdirSync(path.join(cache, 'modules'));
  const js = kept.find((f) => f.endsWith('-mod.mjs'));
  assert.ok(js !== undefined && kept.some((f) => f.endsWith('.json')), kept.join(', '));
  const keptFile = path.join(cache, 'modules', js);
  // The next run imports the kept module as it is (made different here, to tell): no compile.
  const mark = () =>
    writeFileSync(keptFile, readFileSync(keptFile, 'utf8').replace(/(["'])module_test\1/, '"kept_module"'));
  mark();
  assert.equal(await name(), 'kept_module');
  // A file it imports changed: compiled again.
  writeFileSync(helper, `${readFileSync(helper, 'utf8')}\n// changed\n`);
  assert.equal(await name(), 'module_test');
  // A config file that was not there before, beside the module's files: compiled again.
  mark();
  assert.equal(await name(), 'kept_module');
  writeFileSync(path.join(dir, 'lib', 'package.json'), JSON.stringify({ name: 'lib', type: 'module' }));
  assert.equal(await name(), 'module_test');
  // The kept module gone: compiled again.
  mark();
  rmSync(keptFile);
  assert.equal(await name(), 'module_test');
  assert.ok(existsSync(keptFile));
  // DBSMACK_CODE_CACHE=off: compiled into a temporary folder, removed at the exit.
  const off = tmpDir('dbsmack-module-off-');
  const r = await runCli(['run', mod, '--db', db, '--events', '3', '--format', 'json', '--no-history'], {
    env: { DBSMACK_CODE_CACHE: 'off', TMPDIR: off },
  });
  assert.equal(r.code, 0, r.stderr);
  assert.equal((JSON.parse(r.stdout) as RunResult).workload.name, 'module_test');
  assert.deepEqual(readdirSync(off), [], 'the temporary folder is removed');
});

/** Run `source` as a module of its own: it must fail with a usage error naming `file:where: text`. */
async function failsAt(name: string, source: string, where: string, text: string): Promise<void> {
  const file = path.join(tmpDir('dbsmack-module-bad-'), name);
  writeFileSync(file, source);
  const r = await runCli(['run', file, '--events', '5', '--no-history']);
  assert.equal(r.code, 2, r.stderr);
  assert.ok(r.stderr.includes(`${file}:${where}: ${text}`), r.stderr);
  assert.doesNotMatch(r.stderr, /internal error|report it/);
}

test('a module that does not compile, or imports what resolves nowhere, names file:line:column', async () => {
  await failsAt(
    'bad.ts',
    "import { defineWorkload } from 'dbsmack';\nexport default defineWorkload({\n  name: 'bad',\n  client() {\n    const x: number = ;\n    return { async event() {} };\n  },\n});\n",
    '5:23',
    'Unexpected ";"',
  );
  await failsAt(
    'missing.ts',
    "import { defineWorkload } from 'dbsmack';\nimport { nothing } from 'no-such-package';\nexport default defineWorkload({ name: nothing, client: () => ({ async event() {} }) });\n",
    '2:25',
    'Could not resolve "no-such-package"',
  );
  // A CommonJS module (require, module.exports): compiled modules are ES modules, and the hint says so.
  const cjs = path.join(tmpDir('dbsmack-module-cjs-'), 'cjs.ts');
  writeFileSync(
    cjs,
    "const { defineWorkload } = require('dbsmack');\nmodule.exports = defineWorkload({ name: 'cjs', client: () => ({ async event() {} }) });\n",
  );
  const c = await runCli(['run', cjs, '--events', '5', '--no-history']);
  assert.equal(c.code, 2, c.stderr);
  assert.match(
    c.stderr,
    /cannot load workload module: .*\nhint: write it as an ES module: import \{ defineWorkload \}/,
  );
});

test("ctx.query or ctx.all without the SQL (the type forgotten) is said in the workload's words", async () => {
  const dir = tmpDir('dbsmack-module-');
  const mod = path.join(dir, 'no-sql.mjs');
  writeFileSync(
    mod,
    "export default { name: 'no_sql', client(ctx) { return { event: () => ctx.query('SELECT 1') }; } };\n",
  );
  const db = `sqlite:${path.join(dir, 'n.sqlite')}`;
  const r = await runCli(['run', mod, '--db', db, '--events', '5', '--format', 'json', '--no-history']);
  const res = JSON.parse(r.stdout) as RunResult;
  assert.equal(res.status, 'failed');
  assert.match(
    res.status_reason ?? '',
    /ctx\.query\(type, sql, params\?\): the SQL must be a string, got undefined/,
  );
  assert.doesNotMatch(r.stdout + r.stderr, /Cannot read properties/);
});
