/**
 * Runs one of dbsmack's CommonJS bundles (the CLI's, the load worker's: scripts/bundle.js) through V8's code
 * cache, and keeps that cache beside the bundle. Why: compiling the JavaScript a run needs was the largest
 * part of dbsmack's start-up (Node.js 20 has no compile cache of its own; 22's `module.enableCompileCache` is
 * the same idea): the main thread parsed and compiled about 1.1 MB of bundled code and each load worker
 * 0.4 MB, at every run. With the cache, V8 reads the bytecode of every function the last run of the same kind
 * compiled instead (docs/performance.md).
 *
 * The cache is a file per bundle and per key (the command for the CLI, the driver for a worker, each with the
 * workload where it is known: `codeCacheKey`; each compiles other functions), named after the bundle's size
 * and modification time, in `v8-cache/` beside the bundle. V8 itself refuses a cache made by another V8
 * version or with other flags (`cachedDataRejected`); it checks the source only by its length, which is why
 * the name carries the bundle's size and time. Each file carries a checksum of its content ahead of V8's data
 * (`sealed`, `unsealed`: V8 checks only its header, and a file damaged inside would make it abort the
 * process). A cache is written when there was none or V8 refused it, after a run that went well
 * (`saveCodeCache`: the CLI when its command returns 0, a worker before it reports its run done, so that the
 * functions of the statement loop are in it), to a temporary file renamed into place: runs at the same time
 * never read half a file. A folder that cannot be written (a package installed by another user) means no
 * cache, nothing else.
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
import { Script } from 'node:vm';
import { threadId } from 'node:worker_threads';

const SAVE = Symbol.for('dbsmack.saveCodeCache');

/** The wrapper Node.js puts around a CommonJS module, on the source's first line (line numbers stay). */
const HEAD = '(function (exports, require, module, __filename, __dirname) { ';
const TAIL = '\n});';

/** What a cache key may be (a file name's part): anything else means no cache. */
const KEY = /^[a-z][a-z0-9-]{0,31}$/;

/**
 * The cache key of a bundle run for `base` (the CLI's command, a load worker's driver) and the workload it
 * runs, when it is known: each workload compiles functions of its own, and a cache holds what the run that
 * wrote it compiled. Keyed by the command or driver alone, the first run after a build chose for every later
 * one: after a run of select1 every load thread of an oltp_point_select run compiled the sysbench workload's
 * draws and encodes lazily, about 3 ms of CPU a thread (8 load threads, one event: 0.33 s against 0.31, five
 * pairs in turn on a 2-core Xeon guest, 2026-12-07). A built-in workload by its name, a file by its kind
 * (`smack`, `sql` for a pgbench script, `module`); `base` alone where the key would not be a plain name.
 */
export function codeCacheKey(base: string, workload: string | undefined): string {
  if (workload === undefined || workload === '' || workload.startsWith('-')) return base;
  const ext = /\.([A-Za-z]+)$/.exec(workload)?.[1]?.toLowerCase();
  const kind =
    ext === undefined
      ? workload.toLowerCase().replace(/_/g, '-')
      : ext === 'smack' || ext === 'sql'
        ? ext
        : /^[cm]?[jt]s$/.test(ext)
          ? 'module'
          : 'file';
  const key = `${base}-${kind}`;
  return KEY.test(key) ? key : base;
}

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
  if (plain || where === 'off' || key === undefined || !KEY.test(key)) {
    require(file);
    return 'plain';
  }
  const addon = sourceAddon(file, require);
  const source = wrappedSource(file, addon);
  const stat = statSync(file);
  const base = path.basename(file, path.extname(file));
  const cacheFile = path.join(
    where !== undefined && where !== '' ? path.resolve(where) : path.join(path.dirname(file), 'v8-cache'),
    `${base}-${key}-${stat.size}-${Math.round(stat.mtimeMs)}.bin`,
  );
  let cached: Buffer | undefined;
  try {
    cached = unsealed(readFileSync(cacheFile), addon);
  } catch {
    cached = undefined;
  }
  const script = new Script(source, { filename: file, cachedData: cached });
  const stale = cached === undefined || script.cachedDataRejected === true;
  (globalThis as Record<symbol, unknown>)[SAVE] = stale ? () => save(script, cacheFile, addon) : () => {};
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

/** What this file uses of the native core's addon (native/dbsmack_io.cc). */
interface SourceAddon {
  readSource?: (file: string, head: string, tail: string) => unknown;
  checksum?: (data: Uint8Array) => unknown;
}

/**
 * The addon the native core loads (`DBSMACK_NATIVE_ADDON`, else build/Release beside dist/), so that a
 * native run loads nothing more; undefined where it cannot load (then only the time changes).
 */
function sourceAddon(file: string, require: NodeJS.Require): SourceAddon | undefined {
  try {
    const addon =
      process.env.DBSMACK_NATIVE_ADDON ??
      path.join(path.dirname(file), '..', '..', 'build', 'Release', 'dbsmack_io.node');
    return require(addon) as SourceAddon;
  } catch {
    return undefined;
  }
}

/**
 * The bundle wrapped in CommonJS's function head: from the native I/O core's `readSource` where it is built
 * (one read into memory V8 takes as the string's content: no UTF-8 decoding, no copy on V8's heap; 5-7 ms
 * of CPU for the CLI's bundle against 12-16 read here, at every start), else read and joined here. An
 * addon without `readSource` (an older build) changes nothing but the time.
 */
function wrappedSource(file: string, addon: SourceAddon | undefined): string {
  try {
    const s = addon?.readSource?.(file, HEAD, TAIL);
    if (typeof s === 'string') return s;
  } catch {
    // read it here
  }
  return HEAD + readFileSync(file, 'utf8') + TAIL;
}

/**
 * The head of a cache file: a tag, the checksum of V8's data and its length, before the data. Why not V8's
 * own checksum (`--verify-snapshot-checksum`, until 2026-12-06): a flag is the process's, and the load
 * workers start at once; one thread turning it off while another compiled or saved changed the flags V8
 * stamps on a cache, so that the next run refused every worker's cache (each compiled its bundle and wrote
 * the file again, at every run with more than one worker), and the flag made every thread starting
 * meanwhile check V8's start-up snapshot (about 30 ms of CPU each).
 */
const TAG = 0x31434244; // 'DBC1', little-endian
const HEAD_BYTES = 12;

/**
 * FNV-1a over the native-endian 32-bit words, folded with their running sum, then the bytes past the last
 * whole word: damage anywhere changes it. The addon's `checksum` computes the same in 0.1 ms for the CLI's
 * 0.6 MB cache, against 5-7 ms of this cold JavaScript at every start; this is the fallback.
 */
function checksum(data: Buffer, addon: SourceAddon | undefined): number {
  try {
    const c = addon?.checksum?.(data);
    if (typeof c === 'number') return c;
  } catch {
    // computed here
  }
  const words = data.length >>> 2;
  const aligned = data.byteOffset % 4 === 0 ? data : Buffer.from(data);
  const w = new Uint32Array(aligned.buffer, aligned.byteOffset, words);
  let h = 0x811c9dc5 | 0;
  let sum = 0;
  for (let i = 0; i < words; i++) {
    h = Math.imul(h ^ (w[i] as number), 0x01000193);
    sum = (sum + h) | 0;
  }
  for (let i = words << 2; i < data.length; i++) h = Math.imul(h ^ (data[i] as number), 0x01000193);
  return (h ^ sum) >>> 0;
}

/** V8's cache data behind dbsmack's head (tag, checksum, length). */
function sealed(data: Buffer, addon: SourceAddon | undefined): Buffer {
  const head = Buffer.alloc(HEAD_BYTES);
  head.writeUInt32LE(TAG, 0);
  head.writeUInt32LE(checksum(data, addon), 4);
  head.writeUInt32LE(data.length, 8);
  return Buffer.concat([head, data]);
}

/** V8's data out of a cache file, or undefined when the head or the checksum do not match. */
function unsealed(file: Buffer, addon: SourceAddon | undefined): Buffer | undefined {
  if (file.length < HEAD_BYTES || file.readUInt32LE(0) !== TAG) return undefined;
  const data = file.subarray(HEAD_BYTES);
  if (file.readUInt32LE(8) !== data.length || file.readUInt32LE(4) !== checksum(data, addon))
    return undefined;
  return data;
}

function save(script: Script, cacheFile: string, addon: SourceAddon | undefined): void {
  (globalThis as Record<symbol, unknown>)[SAVE] = () => {};
  const tmp = `${cacheFile}.${process.pid}-${threadId}.tmp`;
  try {
    mkdirSync(path.dirname(cacheFile), { recursive: true });
    writeFileSync(tmp, sealed(script.createCachedData(), addon));
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
