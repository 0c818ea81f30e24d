#!/usr/bin/env node
// The dbsmack command: runs the compiled CLI from dist/ (built by `npm install` through the prepare script):
// its CommonJS bundle (dist/bundle/cli.cjs, scripts/bundle.js), through V8's code cache kept for the command
// (src/code-cache.ts), when there is one made after tsc's last build (tsc rewrites every file of dist/; a
// build by tsc alone leaves an older bundle, which must not run), else the files tsc wrote. With --debug
// the bundle is loaded by Node.js's own loader, which reads its source map.
import { existsSync, statSync } from 'node:fs';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';

const files = new URL('../dist/cli/entry.js', import.meta.url);
const bundled = new URL('../dist/bundle/cli.cjs', import.meta.url);
const fresh = (b, f) => existsSync(b) && existsSync(f) && statSync(b).mtimeMs >= statSync(f).mtimeMs;
if (fresh(bundled, files)) {
  const args = process.argv.slice(2);
  const debug = args.includes('--debug');
  if (debug) process.setSourceMapsEnabled(true);
  const { runBundle } = createRequire(import.meta.url)('../dist/bundle/code-cache.cjs');
  runBundle(fileURLToPath(bundled), args[0], debug);
} else if (existsSync(files)) {
  await import(files.href);
} else {
  process.stderr.write(
    'dbsmack: not built yet: run `npm install` (or `npm run build`) in the dbsmack folder\n',
  );
  process.exit(1);
}
