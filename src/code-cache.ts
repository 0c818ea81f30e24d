/**
 * Runs one of dbsmack's CommonJS bundles (the CLI's, the load worker's: scripts/bundle.js) through V8's code
 * cache, and keeps that cache beside the bundle. Why: compiling the JavaScript a run needs was the largest
 * part of dbsmack's start-up (Node.js 20 has no compile cache of its own; 22's `module.enableCompileCache` is
 * the same idea): the main thread parsed and compiled about 1.1 MB of bundled code and each load worker
 * 0.4 MB, at every run. With the cache, V8 reads the bytecode of every function the last run of the same kind
 * compiled instead (README, Performance).
 *
 * The cache is a file per bundle and per key (the command for the CLI, the driver for a worker, since each
 * compiles other functions), named after the bundle's size and modification time, in `v8-cache/` beside the
 * bundle. V8 itself refuses a cache made by another V8 version or with other flags (`cachedDataRejected`);
 * it checks the source only by its length, which is why the name carries the bundle's size and time. Each
 * cache carries a checksum of its content, which V8 checks (`checksummed`: without it, a damaged file makes
 * V8 abort the process). A cache is written when there was none or V8 refused it, after a run that went
 * well (`saveCodeCache`: the CLI when its command returns 0, a worker before it reports its run done, so
 * that the functions of the statement loop are in it), to a temporary file renamed into place: runs at the
 * same time never read half a file. A folder that cannot be written (a package installed by another user)
 * means no cache, nothing else.
 *
 * With `--debug` the CLI's bundle is loaded by Node.js's own loader, which reads its source map (the stack
 * traces of scripts compiled here would name the bundle's lines). Code that came from the cache cannot
 * `import()` on Node.js 20, so the bundles import packages and files through load-module.ts, which
 * scripts/bundle.js keeps out of them.
 *
 * This file is bundled on its own (dist/bundle/code-cache.cjs), which bin/dbsmack.js and the worker's stub
 * load before anything else: it imports only Node.js's modules. The bundles call `saveCodeCache` from their
 * own copy of it, which finds the script to save through a global symbol.
 */
import { mkdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { setFlagsFromString } from 'node:v8';
import { Script } from 'node:vm';
import { threadId } from 'node:worker_threads';

const SAVE = Symbol.for('dbsmack.saveCodeCache');

/** The wrapper Node.js puts around a CommonJS module, on the source's first line (line numbers stay). */
const HEAD = '(function (exports, require, module, __filename, __dirname) { ';
const TAIL = '\n});';

/** How `runBundle` ran a bundle: from the cache, compiled (no cache, or one V8 refused), or by `require`. */
export type BundleRun = 'cached' | 'compiled' | 'plain';

/**
 * Run the CommonJS bundle `file`, through the cache kept under `key` (undefined or an odd key: no cache).
 * `plain`: load it with `require` instead (source maps). `DBSMACK_CODE_CACHE` names the cache's folder
 * instead of `v8-cache/` beside the bundle, or is `off`.
 */
export function runBundle(file: string, key: string | undefined, plain = false): BundleRun {
  const require = createRequire(file);
  const where = process.env.DBSMACK_CODE_CACHE;
  if (plain || where === 'off' || key === undefined || !/^[a-z][a-z0-9-]{0,31}$/.test(key)) {
    require(file);
    return 'plain';
  }
  const source = wrappedSource(file, require);
  const stat = statSync(file);
  const base = path.basename(file, path.extname(file));
  const cacheFile = path.join(
    where !== undefined && where !== '' ? path.resolve(where) : path.join(path.dirname(file), 'v8-cache'),
    `${base}-${key}-${stat.size}-${Math.round(stat.mtimeMs)}.bin`,
  );
  let cached: Buffer | undefined;
  try {
    cached = readFileSync(cacheFile);
  } catch {
    cached = undefined;
  }
  const script = checksummed(() => new Script(source, { filename: file, cachedData: cached }));
  const stale = cached === undefined || script.cachedDataRejected === true;
  (globalThis as Record<symbol, unknown>)[SAVE] = stale ? () => save(script, cacheFile) : () => {};
  const module = { exports: {}, filename: file, id: file, loaded: false };
  const wrapper = script.runInThisContext() as (
    exports: unknown,
    require: NodeJS.Require,
    module: unknown,
    filename: string,
    dirname: string,
  ) => void;
  wrapper.call(module.exports, module.exports, require, module, file, path.dirname(file));
  return stale ? 'compiled' : 'cached';
}

/**
 * The bundle wrapped in CommonJS's function head: from the native I/O core's `readSource` where it is built
 * (one read into memory V8 takes as the string's content: no UTF-8 decoding, no copy on V8's heap; 5-7 ms
 * of CPU for the CLI's bundle against 12-16 read here, at every start), else read and joined here. The
 * addon is the one the native core loads (`DBSMACK_NATIVE_ADDON`, else build/Release beside dist/), so a
 * native run loads nothing more; one without `readSource` (an older build) or that cannot load changes
 * nothing but the time.
 */
function wrappedSource(file: string, require: NodeJS.Require): string {
  try {
    const addon =
      process.env.DBSMACK_NATIVE_ADDON ??
      path.join(path.dirname(file), '..', '..', 'build', 'Release', 'dbsmack_io.node');
    const read = (require(addon) as { readSource?: (f: string, h: string, t: string) => unknown }).readSource;
    const s = read?.(file, HEAD, TAIL);
    if (typeof s === 'string') return s;
  } catch {
    // no addon: read it here
  }
  return HEAD + readFileSync(file, 'utf8') + TAIL;
}

/**
 * `fn` with V8 checking code caches' content. V8 checks a cache's header but, in release builds, not its
 * content: a damaged file would make it abort (a fatal error at every run, until the file goes). With
 * `--verify-snapshot-checksum` it writes a checksum into each cache it makes and refuses one whose content
 * does not match (about 1 ms). The flag is on only meanwhile: it also makes V8 check its own start-up
 * snapshot whenever a thread starts, about 30 ms of CPU per load worker. (Flags are the process's: a worker
 * starting at that moment pays that once, nothing else.)
 */
function checksummed<T>(fn: () => T): T {
  setFlagsFromString('--verify-snapshot-checksum');
  try {
    return fn();
  } finally {
    setFlagsFromString('--no-verify-snapshot-checksum');
  }
}

function save(script: Script, cacheFile: string): void {
  (globalThis as Record<symbol, unknown>)[SAVE] = () => {};
  const tmp = `${cacheFile}.${process.pid}-${threadId}.tmp`;
  try {
    mkdirSync(path.dirname(cacheFile), { recursive: true });
    writeFileSync(
      tmp,
      checksummed(() => script.createCachedData()),
    );
    renameSync(tmp, cacheFile);
  } catch {
    // no cache: the next run compiles as this one did (and no half-written file stays behind); a folder
    // that is not one (a file on the way: ENOTDIR) fails the removal too, and still means only no cache
    try {
      rmSync(tmp, { force: true });
    } catch {}
  }
}

/**
 * Keep the code cache of the bundle this thread runs, if it had none or V8 refused it: called once the
 * thread's work went well, so that the cache holds what a run compiles. Does nothing outside a bundle.
 */
export function saveCodeCache(): void {
  const save = (globalThis as Record<symbol, unknown>)[SAVE];
  if (typeof save === 'function') save();
}
