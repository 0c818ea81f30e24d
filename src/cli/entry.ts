import { main } from './main.ts';

const code = await main(process.argv.slice(2));
// Let pending output drain before leaving; workers and sockets are closed by now.
process.exitCode = code;
if (code !== 0) setTimeout(() => process.exit(code), 50).unref();
