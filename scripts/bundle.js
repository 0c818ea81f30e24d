// Bundles the compiled CLI (dist/cli/entry.js) and the load worker (dist/engine/worker-main.js) into
// dist/bundle/ with esbuild, each into one CommonJS file (cli.cjs, worker-main.cjs), which bin/dbsmack.js and
// the worker's stub (worker.cjs) run through V8's code cache (src/code-cache.ts, bundled alone as
// code-cache.cjs). Why: Node.js loads an ES module graph file by file (resolve, read, compile, link), and
// compiles every function a run needs at every run; a single CommonJS file is read and compiled at once, and
// from the second run of a kind on its functions come from the cache (docs/performance.md: start-up). The
// pure-JavaScript packages the CLI loads at every start (commander, hdr-histogram-js) are bundled too; the
// others stay outside, imported from node_modules when needed. Every `import()` goes through
// src/load-module.ts, which stays outside (load-module.cjs): Node.js 20 cannot `import()` from code that came
// from V8's cache, and the build fails if a bundle would. The bundles sit two levels below the package's
// root, as dist/<dir>/ files do, so paths taken from import.meta.url (the native addon, package.json, the
// worker beside its spawner) resolve the same. Without esbuild (an install that could not fetch it) nothing
// is bundled and bin/dbsmack.js runs dist/cli/entry.js: never a harder install.
//
// The public API (dist/index.js: DbError, UsageError, defineWorkload, oneStatement, the distributions) is
// bundled as well, so a workload module's `import … from 'dbsmack'` (the package's own files) and the
// engine hold two copies of its classes: DbError and UserError answer `instanceof` for either copy
// (src/errors.ts, src/driver/errors.ts).
import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const out = path.join(root, 'dist', 'bundle');

let esbuild;
try {
  esbuild = await import('esbuild');
} catch (e) {
  rmSync(out, { recursive: true, force: true });
  process.stderr.write(`dbsmack: not bundled (esbuild did not load: ${e.message}); dist/ runs unbundled\n`);
  process.exit(0);
}
rmSync(out, { recursive: true, force: true });
/** Packages bundled into the CLI and the worker: pure JavaScript, loaded at every start. */
const INLINE = new Set(['commander', '@commander-js/extra-typings', 'hdr-histogram-js']);
const LOAD_MODULE = path.join(root, 'dist', 'load-module.js');
const packagesOutside = {
  name: 'packages-outside',
  setup(build) {
    build.onResolve({ filter: /^[^./]/ }, (args) => {
      if (args.path.startsWith('node:')) return { path: args.path, external: true };
      const name = args.path.startsWith('@')
        ? args.path.split('/').slice(0, 2).join('/')
        : args.path.split('/')[0];
      return INLINE.has(name) ? undefined : { path: args.path, external: true };
    });
    // import() must stay out of the cached bundles (see the head of this file)
    build.onResolve({ filter: /load-module\.js$/ }, (args) =>
      path.resolve(args.resolveDir, args.path) === LOAD_MODULE
        ? { path: './load-module.cjs', external: true }
        : undefined,
    );
  },
};
const common = {
  bundle: true,
  format: 'cjs',
  platform: 'node',
  target: 'node20',
  logLevel: 'warning',
  // import.meta.url of every bundled module is the bundle's own (two levels below the package's root)
  define: { 'import.meta.url': '__bundleUrl' },
  banner: { js: 'var __bundleUrl = require("node:url").pathToFileURL(__filename).href;' },
};
try {
  const built = await esbuild.build({
    ...common,
    entryPoints: {
      cli: path.join(root, 'dist', 'cli', 'entry.js'),
      'worker-main': path.join(root, 'dist', 'engine', 'worker-main.js'),
    },
    outdir: out,
    outExtension: { '.js': '.cjs' },
    sourcemap: 'linked',
    metafile: true,
    plugins: [packagesOutside],
  });
  for (const [file, o] of Object.entries(built.metafile.outputs)) {
    const dynamic = o.imports.filter((i) => i.kind === 'dynamic-import' && i.external);
    if (dynamic.length > 0) {
      throw new Error(
        `${file} would import() ${dynamic.map((i) => i.path).join(', ')}: go through src/load-module.ts instead`,
      );
    }
  }
  // Pure ASCII: the few characters beyond it (µ, …, → in comments kept with class fields, one in a regular
  // expression) made Node read each bundle into a two-byte string, twice the memory of the source and slower
  // to decode and hash at every start (1.18 MB, read with readFileSync: 10.7 ms against 4.1 ms for the same
  // file escaped, second reads of each). \uXXXX means the same in strings, regular expressions and template
  // literals, and nothing in comments; the source maps' columns shift on those few lines only.
  for (const file of Object.keys(built.metafile.outputs).filter((f) => f.endsWith('.cjs'))) {
    const text = readFileSync(file, 'utf8');
    const ascii = text.replace(
      /[\u0080-\uffff]/g,
      (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`,
    );
    if (ascii !== text) writeFileSync(file, ascii);
  }
  await esbuild.build({
    ...common,
    entryPoints: { 'code-cache': path.join(root, 'dist', 'code-cache.js') },
    outdir: out,
    outExtension: { '.js': '.cjs' },
    plugins: [packagesOutside],
  });
  await esbuild.build({
    ...common,
    bundle: false,
    entryPoints: { 'load-module': LOAD_MODULE },
    outdir: out,
    outExtension: { '.js': '.cjs' },
  });
  writeFileSync(
    path.join(out, 'worker.cjs'),
    "// A load worker of the CLI's bundle: the worker's bundle through the code cache kept for its driver.\n" +
      "require('./code-cache.cjs').runBundle(require('node:path').join(__dirname, 'worker-main.cjs'), " +
      "require('node:worker_threads').workerData?.codeCacheKey);\n",
  );
} catch (e) {
  // A bundle that cannot be made is no reason to fail an install: dist/ runs as tsc wrote it.
  rmSync(out, { recursive: true, force: true });
  process.stderr.write(`dbsmack: not bundled (${e.message.split('\n')[0]}); dist/ runs unbundled\n`);
}
