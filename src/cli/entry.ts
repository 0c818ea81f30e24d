import { saveCodeCache } from '../code-cache.ts';
import { main } from './main.ts';

// No top-level await: the bundle of the CLI is CommonJS (scripts/bundle.js).
main(process.argv.slice(2)).then((code) => {
  // Let pending output drain before leaving; workers and sockets are closed by now.
  process.exitCode = code;
  if (code === 0) saveCodeCache();
  else setTimeout(() => process.exit(code), 50).unref();
});
