#!/usr/bin/env node
// The dbsmack command: runs the compiled CLI from dist/ (built by `npm install` through the prepare script).
import { existsSync } from 'node:fs';

const entry = new URL('../dist/cli/entry.js', import.meta.url);
if (!existsSync(entry)) {
  process.stderr.write(
    'dbsmack: not built yet: run `npm install` (or `npm run build`) in the dbsmack folder\n',
  );
  process.exit(1);
}
await import(entry.href);
