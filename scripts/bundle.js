// Extracts the histograms' WebAssembly module (below), then bundles the compiled CLI (dist/cli/entry.js) and
// the load worker (dist/engine/worker-main.js) into dist/bundle/ with esbuild, which bin/dbsmack.js runs when
// it is there. Why: Node.js loads an ES module graph file by file (resolve, read, compile, link), and
// dbsmack's start-up loaded some 150 files in the main thread and again in each load worker; the bundle is a
// few dozen (one chunk per command loaded on demand, as main.ts's COMMANDS table asks: code splitting keeps
// dynamic imports lazy), which saves about 0.06 s of CPU per run with two workers (README, Performance). npm
// packages stay outside (imported from node_modules as before). The chunks sit two levels below the package's
// root, as dist/<dir>/ files do, so paths taken from import.meta.url (the native addon, package.json,
// worker-main.js beside its spawner) resolve the same. Without esbuild (an install that could not fetch it)
// nothing is bundled and bin/dbsmack.js runs dist/cli/entry.js: never a harder install.
//
// The modules of the public API (dist/index.js and what it imports at run time: DbError, UsageError,
// defineWorkload, oneStatement, the distributions) are not bundled: the bundle imports them from dist/, the
// files a workload module's `import … from 'dbsmack'` loads too, so that there is one DbError class, one
// UsageError, one oneStatement marker in the process, and `instanceof` in the engine holds for what a
// module throws or returns.
import { readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const out = path.join(root, 'dist', 'bundle');

/** dist/index.js and the files it imports at run time (tsc leaves no type-only imports in its output). */
function publicApi() {
  const seen = new Set();
  const walk = (file) => {
    if (seen.has(file)) return;
    seen.add(file);
    const text = readFileSync(file, 'utf8');
    for (const m of text.matchAll(/^(?:import|export)\s[^;]*?from\s+['"](\.[^'"]+)['"]/gms)) {
      walk(path.resolve(path.dirname(file), m[1]));
    }
  };
  walk(path.join(root, 'dist', 'index.js'));
  return seen;
}
const shared = publicApi();
const sharedApi = {
  name: 'shared-public-api',
  setup(build) {
    build.onResolve({ filter: /^\./ }, (args) => {
      const file = path.resolve(args.resolveDir, args.path);
      if (!shared.has(file)) return undefined;
      // every output file is in dist/bundle/: the same relative path from each
      return { path: path.relative(out, file), external: true };
    });
  },
};
// The histograms' WebAssembly module, inflated once here rather than in every load worker at every run
// (src/metrics/recording-histogram.ts reads it; without the file a worker inflates the package's copy).
try {
  const { histogramWasmPaths, packageWasmBytes } = await import('../dist/metrics/recording-histogram.js');
  const { wrapper, file } = histogramWasmPaths();
  for (const old of readdirSync(path.dirname(file))) {
    if (/^hdr-histogram-.*\.wasm$/.test(old)) rmSync(path.join(path.dirname(file), old));
  }
  writeFileSync(file, packageWasmBytes(wrapper));
} catch (e) {
  process.stderr.write(
    `dbsmack: histogram module not extracted (${e.message}); workers inflate it at start\n`,
  );
}

let esbuild;
try {
  esbuild = await import('esbuild');
} catch (e) {
  rmSync(out, { recursive: true, force: true });
  process.stderr.write(`dbsmack: not bundled (esbuild did not load: ${e.message}); dist/ runs unbundled\n`);
  process.exit(0);
}
rmSync(out, { recursive: true, force: true });
try {
  await esbuild.build({
    entryPoints: [
      path.join(root, 'dist', 'cli', 'entry.js'),
      path.join(root, 'dist', 'engine', 'worker-main.js'),
    ],
    outdir: out,
    entryNames: '[name]',
    bundle: true,
    splitting: true,
    format: 'esm',
    platform: 'node',
    target: 'node20',
    packages: 'external',
    sourcemap: 'linked',
    logLevel: 'warning',
    plugins: [sharedApi],
  });
} catch (e) {
  // A bundle that cannot be made is no reason to fail an install: dist/ runs as tsc wrote it.
  rmSync(out, { recursive: true, force: true });
  process.stderr.write(`dbsmack: not bundled (${e.message.split('\n')[0]}); dist/ runs unbundled\n`);
}
