// Runs the test suite with node's own test runner through tsx. Node 20 neither finds .ts test files by
// itself nor expands quoted globs, so the files are listed here. Pass file names to run only those, and
// options of node's test runner as they are (`--test-name-pattern=SIGINT`).
//
// - dist/ is rebuilt first (tsc, then scripts/bundle.js) when any source file is newer than its build output:
//   the CLI tests run the built bin/dbsmack.js, and a file run alone after an edit must not test yesterday's
//   build. (Running the CLI
//   from the sources through tsx instead would cost every one of the suite's few hundred CLI processes and
//   each of their load workers a transpile at start-up; a build costs a few seconds, and only after an edit.)
// - Every test has a bound: scripts/test-watchdog.js ends a test file whose test runs longer than
//   DBSMACK_TEST_TIMEOUT seconds (default 300), naming the test; `--test-timeout` bounds each file as well
//   (node 20 applies it to the file's process, node 22 and later to each test).
import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync, statSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

function find(dir, suffix) {
  const out = [];
  for (const name of readdirSync(dir)) {
    const p = path.join(dir, name);
    if (statSync(p).isDirectory()) out.push(...find(p, suffix));
    else if (name.endsWith(suffix)) out.push(p);
  }
  return out;
}

/** The first source file whose build output is missing or older than it, or undefined. */
function staleSource() {
  const src = path.join(root, 'src');
  const config = statSync(path.join(root, 'tsconfig.build.json')).mtimeMs;
  for (const f of find(src, '.ts')) {
    if (f.endsWith('.d.ts')) continue;
    const out = path.join(root, 'dist', path.relative(src, f)).replace(/\.ts$/, '.js');
    if (!existsSync(out)) return f;
    const built = statSync(out).mtimeMs;
    if (built < statSync(f).mtimeMs || built < config) return f;
  }
  return undefined;
}

const stale = staleSource();
if (stale !== undefined) {
  process.stderr.write(`# ${path.relative(root, stale)} is newer than its build in dist/: building first\n`);
  const b = spawnSync(
    process.execPath,
    [path.join(root, 'node_modules', 'typescript', 'bin', 'tsc'), '-p', 'tsconfig.build.json'],
    { stdio: 'inherit', cwd: root },
  );
  if (b.status !== 0) process.exit(b.status ?? 1);
  // and the bundle bin/dbsmack.js runs (an older one it would pass over, testing the unbundled files)
  const u = spawnSync(process.execPath, [path.join(root, 'scripts', 'bundle.js')], {
    stdio: 'inherit',
    cwd: root,
  });
  if (u.status !== 0) process.exit(u.status ?? 1);
}

const perTestS = Number(process.env.DBSMACK_TEST_TIMEOUT ?? 300);
const perFileMs = Math.max(900, 3 * perTestS) * 1000;
const args = process.argv.slice(2);
const options = args.filter((a) => a.startsWith('--'));
const named = args.filter((a) => !a.startsWith('--')).map((f) => path.resolve(f));
const files = named.length > 0 ? named : find(path.join(root, 'test'), '.test.ts').sort();
const r = spawnSync(
  process.execPath,
  [
    '--import',
    'tsx',
    '--import',
    path.join(root, 'scripts', 'test-watchdog.js'),
    '--test',
    '--test-concurrency=1',
    `--test-timeout=${perFileMs}`,
    '--test-reporter=spec',
    ...options,
    ...files,
  ],
  { stdio: 'inherit', cwd: root, env: { ...process.env, DBSMACK_TEST_TIMEOUT: String(perTestS) } },
);
process.exit(r.status ?? 1);
