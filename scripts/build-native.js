// Builds the native I/O core (native/dbsmack_io.cc → build/Release/dbsmack_io.node) with node-gyp, from
// npm's `install` step. It never fails the install: without a compiler, Node's headers or node-gyp,
// dbsmack runs its JavaScript I/O path and says so. `--strict` (.ci/run) exits non-zero instead.
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import path from 'node:path';

const root = path.resolve(path.dirname(new URL(import.meta.url).pathname), '..');
const strict = process.argv.includes('--strict');

function say(msg) {
  process.stderr.write(`dbsmack: ${msg}\n`);
}

if (process.platform !== 'linux') {
  say(`the native I/O core is built for Linux only; on ${process.platform} the JavaScript I/O path runs`);
  process.exit(0);
}

/** node-gyp: the one npm runs scripts with, a local one, or the one bundled with npm next to node. */
function nodeGyp() {
  const candidates = [
    process.env.npm_config_node_gyp,
    path.join(root, 'node_modules', 'node-gyp', 'bin', 'node-gyp.js'),
    path.join(
      path.dirname(process.execPath),
      '..',
      'lib',
      'node_modules',
      'npm',
      'node_modules',
      'node-gyp',
      'bin',
      'node-gyp.js',
    ),
  ];
  return candidates.find((c) => c && existsSync(c));
}

const gyp = nodeGyp();
const args = ['rebuild', '--release'];
// Node's own headers, when installed beside it (Debian's nodejs, or a tarball): no download needed.
const prefix = path.resolve(path.dirname(process.execPath), '..');
if (existsSync(path.join(prefix, 'include', 'node', 'node_api.h'))) args.push(`--nodedir=${prefix}`);
const r = gyp
  ? spawnSync(process.execPath, [gyp, ...args], {
      cwd: root,
      stdio: ['ignore', 'ignore', 'pipe'],
      encoding: 'utf8',
    })
  : { status: 1, stderr: 'node-gyp not found' };
const built = existsSync(path.join(root, 'build', 'Release', 'dbsmack_io.node'));
if (r.status === 0 && built) process.exit(0);
const why = (r.stderr ?? '')
  .split('\n')
  .filter((l) => /error|not found/i.test(l))
  .slice(0, 3)
  .join('; ');
say(
  `the native I/O core was not built (${why || 'node-gyp failed'}); the load clients will use the JavaScript ` +
    'I/O path. A C++ compiler, make, python3 and Node headers are needed to build it: `npm rebuild dbsmack` or ' +
    '`node scripts/build-native.js` after installing them.',
);
process.exit(strict ? 1 : 0);
