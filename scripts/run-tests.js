// Runs the test suite with node's own test runner through tsx. Node 20 neither finds .ts test files by
// itself nor expands quoted globs, so the files are listed here. Pass file names to run only those.
import { spawnSync } from 'node:child_process';
import { readdirSync, statSync } from 'node:fs';
import path from 'node:path';

const root = path.resolve(path.dirname(new URL(import.meta.url).pathname), '..');

function find(dir) {
  const out = [];
  for (const name of readdirSync(dir)) {
    const p = path.join(dir, name);
    if (statSync(p).isDirectory()) out.push(...find(p));
    else if (name.endsWith('.test.ts')) out.push(p);
  }
  return out;
}

const files = process.argv.length > 2 ? process.argv.slice(2) : find(path.join(root, 'test')).sort();
const r = spawnSync(
  process.execPath,
  ['--import', 'tsx', '--test', '--test-concurrency=1', '--test-reporter=spec', ...files],
  { stdio: 'inherit', cwd: root },
);
process.exit(r.status ?? 1);
