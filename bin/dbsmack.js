#!/usr/bin/env node
// The dbsmack command: runs the compiled CLI from dist/ (built by `npm install` through the prepare script):
// its CommonJS bundle (dist/bundle/cli.cjs, scripts/bundle.js), through V8's code cache kept for the command
// and its workload (src/code-cache.ts), when there is one made after tsc's last build (tsc rewrites every
// file of dist/; a build by tsc alone leaves an older bundle, which must not run), else the files tsc wrote.
// With --debug the bundle is loaded by Node.js's own loader, which reads its source map.
//
// This file is CommonJS (bin/package.json says so): an ES module as the entry point starts Node.js's ES
// module loader, about 10 ms of CPU, which a run from the bundle never needs otherwise.
const { existsSync, statSync } = require('node:fs');
const path = require('node:path');
const { pathToFileURL } = require('node:url');

const dist = path.join(__dirname, '..', 'dist');
const files = path.join(dist, 'cli', 'entry.js');
const bundled = path.join(dist, 'bundle', 'cli.cjs');
const fresh = (b, f) => existsSync(b) && existsSync(f) && statSync(b).mtimeMs >= statSync(f).mtimeMs;
if (fresh(bundled, files)) {
  const args = process.argv.slice(2);
  const debug = args.includes('--debug');
  if (debug) process.setSourceMapsEnabled(true);
  const cache = require(path.join(dist, 'bundle', 'code-cache.cjs'));
  // the command's cache, and the workload's where the command names one first (`run oltp_point_select …`)
  const workload = ['run', 'prepare', 'cleanup'].includes(args[0]) ? args[1] : undefined;
  cache.runBundle(bundled, cache.codeCacheKey(args[0] ?? '', workload), debug);
} else if (existsSync(files)) {
  import(pathToFileURL(files).href);
} else {
  process.stderr.write(
    'dbsmack: not built yet: run `npm install` (or `npm run build`) in the dbsmack folder\n',
  );
  process.exit(1);
}
