#!/usr/bin/env node
// The dbsmack command: runs the compiled CLI from dist/ (built by `npm install` through the prepare script):
// its bundle (dist/bundle/, scripts/bundle.js) when there is one made after tsc's last build (tsc rewrites
// every file of dist/; a build by tsc alone leaves an older bundle, which must not run), else the files tsc
// wrote.
import { existsSync, statSync } from 'node:fs';

const files = new URL('../dist/cli/entry.js', import.meta.url);
const bundled = new URL('../dist/bundle/entry.js', import.meta.url);
const fresh = (b, f) => existsSync(b) && existsSync(f) && statSync(b).mtimeMs >= statSync(f).mtimeMs;
const entry = fresh(bundled, files) ? bundled : files;
if (!existsSync(entry)) {
  process.stderr.write(
    'dbsmack: not built yet: run `npm install` (or `npm run build`) in the dbsmack folder\n',
  );
  process.exit(1);
}
await import(entry.href);
