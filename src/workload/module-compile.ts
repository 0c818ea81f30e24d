/**
 * A TypeScript workload module, compiled to JavaScript once per run, in the main thread, by esbuild; the
 * load workers import the JavaScript (`WorkloadRef.module`). Why: the alternative, tsx's loader hooks,
 * starts a hooks thread (another Node.js isolate) and esbuild's service in every thread that imports a `.ts`
 * file: about 0.3 s of CPU per thread here, 1.4 s for a run with two load workers, against 0.7 s for the
 * whole of a run of a built-in workload (docs/performance.md). Compiling once costs one esbuild service.
 *
 * What the compiled module keeps of the source, so that it behaves as it would from its own file:
 * - its local imports (relative paths, its tsconfig's paths, workspace packages linked from elsewhere)
 *   are compiled into it; the rest stays an import: `dbsmack` is the running dbsmack's own public API
 *   (`dist/index.js`, whatever the module's folder has installed: imported by an ES module, compiled into a
 *   CommonJS one), Node's modules by name, and each package by the file it resolves to from the
 *   importing file's folder (conditions `import`, `node`, `default`; main field before module, as Node.js);
 * - `import.meta.url`, `import.meta.filename` and `import.meta.dirname` of each source file are that file's;
 * - an inline source map: with source maps on (`--debug` turns them on), stack traces name the `.ts` files
 *   and lines.
 * Not kept: a dynamic `import()` of a computed relative path resolves against the compiled file's folder
 * (a temporary one); `import.meta.resolve` likewise; a file that uses `import.meta` is transformed on its
 * own, without its tsconfig's compiler options (decorators, JSX settings). Types are not checked, as tsx
 * does not check them. A module written with `require` fails to load (registry.ts hints at ES modules).
 * A syntax error, or an import that resolves nowhere, is an InputError naming file:line:column.
 *
 * Written as CommonJS where the module allows it, else as an ES module. Why: every thread that `import()`s a
 * file starts Node.js's ES module loader first, where `require` has its loader running already: in a fresh
 * load worker here 9-10 ms of CPU to import a 7 kB one-file module against 1.6 ms to require the same as
 * CommonJS, and today's module also imported `dist/index.js`'s eight files (15 ms), in each of a run's
 * threads (2026-12-06). As CommonJS the public API is compiled into the module (a copy of its own: DbError
 * and UserError answer `instanceof` for any copy, src/errors.ts; `oneStatement` is known by its shape). The
 * ES module stays where CommonJS would change what the module means: a package import other than `dbsmack`
 * and Node's modules (a package may be an ES module only, which Node.js 20 cannot require), `import.meta`
 * beyond the three it defines, a source written as CommonJS itself, top-level await (esbuild cannot write
 * it as CommonJS). registry.ts requires a compiled `.cjs` and imports a `.mjs`.
 *
 * The compiled module is kept for the next runs (`cached`): esbuild's service and API cost about 0.13 s of
 * CPU a run here, a fifth of a short run's start-up. It is kept in `modules/` of the code cache's folder
 * (`DBSMACK_CODE_CACHE`, `off` for none; else `dist/bundle/v8-cache/` of the package), under a name made
 * of the source's path, this Node.js and the dbsmack API it imports, with a manifest of what it was made
 * from: every file esbuild read (by content), every tsconfig.json, jsconfig.json and package.json that
 * could apply to them (present or not, by content), and the packages it imports (by file). A run compiles
 * again when any of them changed or when the manifest or the module is missing or unreadable; a folder that
 * cannot be written means a compile every run, as before. Not followed: a tsconfig's `extends`.
 */
import {
  accessSync,
  constants,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  renameSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { isBuiltin } from 'node:module';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import type { Loader, Message, Metafile, Plugin } from 'esbuild';
import { InputError } from '../errors.ts';
import { crypto } from '../lazy-crypto.ts';
import { loadModule } from '../load-module.ts';

/** The public API a workload module's `import … from 'dbsmack'` gets: the running package's. */
const API = new URL(import.meta.url.endsWith('.ts') ? '../index.ts' : '../index.js', import.meta.url);

/** Compiled modules of this process, by source path (a sweep or an experiment compiles each once). */
const compiled = new Map<string, string>();
let outDir: string | undefined;

/** A marker for the resolutions the plugin asks esbuild for itself. */
const OWN = Symbol('dbsmack-resolve');

const LOADERS: Record<string, Loader> = {
  '.ts': 'ts',
  '.mts': 'ts',
  '.cts': 'ts',
  '.tsx': 'tsx',
  '.js': 'js',
  '.mjs': 'js',
  '.cjs': 'js',
  '.jsx': 'jsx',
};

/**
 * The file URL of `file` compiled to CommonJS (`.cjs`) or an ES module (`.mjs`), compiling it the first
 * time; undefined when esbuild cannot be loaded (the caller then imports the source through tsx, as before).
 */
export async function compileModule(file: string): Promise<string | undefined> {
  const done = compiled.get(file);
  if (done !== undefined) return done;
  const cache = cacheOf(file);
  const kept = cache !== undefined ? cached(cache) : undefined;
  if (kept !== undefined) {
    compiled.set(file, kept);
    return kept;
  }
  let esbuild: typeof import('esbuild');
  try {
    esbuild = await loadModule<typeof import('esbuild')>('esbuild');
  } catch {
    return undefined;
  }
  // Written where it is kept (renamed into place once its manifest is there: the inline source map's paths
  // are relative to the module's folder), or to a temporary folder when there is no cache.
  let outfile: string | undefined;
  if (cache !== undefined) {
    try {
      mkdirSync(path.dirname(cache.base), { recursive: true });
      accessSync(path.dirname(cache.base), constants.W_OK);
      outfile = beside(cache.base);
    } catch {
      outfile = undefined;
    }
  }
  if (outfile === undefined) {
    try {
      outDir ??= makeOutDir();
    } catch (e) {
      throw new InputError(`${file}: cannot compile the workload module: ${(e as Error).message}`);
    }
    outfile = path.join(outDir, `${compiled.size + 1}-${stem(file)}`);
  }
  const seen = new Map<string, string>();
  // CommonJS where the module allows it (see the head comment), else an ES module as the source is
  let meta: Metafile | undefined;
  let ext: ModuleExt = 'cjs';
  try {
    meta = await build(esbuild, file, outfile, seen, 'cjs');
    if (meta === undefined) {
      ext = 'mjs';
      meta = await build(esbuild, file, outfile, seen, 'mjs');
    }
  } finally {
    // The service is a process of its own: not kept for the rest of the run.
    await esbuild.stop();
  }
  const written = `${outfile}.${ext}`;
  const url =
    (cache !== undefined &&
      meta !== undefined &&
      written.startsWith(cache.base) &&
      keep(file, cache, written, ext, meta, seen)) ||
    pathToFileURL(written).href;
  compiled.set(file, url);
  return url;
}

/**
 * The compiled module's extension, which says its format to Node.js and to registry.ts: CommonJS (`.cjs`,
 * required) or an ES module (`.mjs`, imported).
 */
type ModuleExt = 'cjs' | 'mjs';

/**
 * esbuild's build of `file` into `base` and `ext`, in the format the extension says, with its metafile. As
 * CommonJS, undefined (and no file) where the module needs an ES module: a package import other than
 * `dbsmack` and Node's modules, `import.meta` beyond `url`, `filename` and `dirname`, a source written as
 * CommonJS itself, or anything esbuild cannot write as CommonJS (top-level await). As an ES module, a failure
 * is the module's: an InputError naming file:line:column.
 */
async function build(
  esbuild: typeof import('esbuild'),
  file: string,
  base: string,
  seen: Map<string, string>,
  ext: ModuleExt,
): Promise<Metafile | undefined> {
  const target = `node${process.versions.node}`;
  const cjs = ext === 'cjs';
  const outfile = `${base}.${ext}`;
  let needsEsm = false;
  const plugin: Plugin = {
    name: 'dbsmack-module',
    setup(b) {
      // Bare specifiers and Node's modules stay imports (see the head comment).
      b.onResolve({ filter: /^[^./]/ }, async (args) => {
        if (args.pluginData === OWN) return undefined;
        // as CommonJS the public API is compiled in (an ES module's copy cannot be required on Node.js 20)
        if (args.path === 'dbsmack')
          return cjs ? { path: fileURLToPath(API) } : { path: API.href, external: true };
        if (isBuiltin(args.path)) return { path: args.path, external: true };
        const r = await b.resolve(args.path, {
          kind: args.kind,
          resolveDir: args.resolveDir,
          importer: args.importer,
          pluginData: OWN,
        });
        // Unresolved: esbuild's own resolution fails again and names the import's file:line:column.
        if (r.errors.length > 0 || r.path === '') return undefined;
        // A path of the module's tsconfig, or a workspace's package linked into node_modules: sources of the
        // module's own, compiled into it as its relative imports are.
        if (!r.path.split(path.sep).includes('node_modules')) return { path: r.path };
        // a package may be an ES module only, which CommonJS cannot require on Node.js 20
        if (cjs) needsEsm = true;
        return { path: pathToFileURL(r.path).href, external: true };
      });
      // Each source file's own import.meta.url, .filename, .dirname.
      b.onLoad({ filter: /\.[cm]?[jt]sx?$/ }, async (args) => {
        const bytes = readFileSync(args.path);
        // the manifest's hash of what was compiled, not of the file as it may be by the end of the compile
        seen.set(path.resolve(args.path), hash(bytes));
        const source = bytes.toString('utf8');
        const loader = LOADERS[path.extname(args.path)] ?? 'js';
        // read once: esbuild takes the contents from here rather than reading the file again
        if (!source.includes('import.meta'))
          return { contents: source, loader, resolveDir: path.dirname(args.path) };
        try {
          const out = await esbuild.transform(source, {
            loader,
            format: 'esm',
            target,
            sourcefile: args.path,
            sourcemap: 'inline',
            define: {
              'import.meta.url': JSON.stringify(pathToFileURL(args.path).href),
              'import.meta.filename': JSON.stringify(args.path),
              'import.meta.dirname': JSON.stringify(path.dirname(args.path)),
            },
            logLevel: 'silent',
          });
          // import.meta beyond the three above (import.meta.resolve, say) keeps the module an ES module
          if (cjs && out.code.includes('import.meta')) needsEsm = true;
          return { contents: out.code, loader: 'js', resolveDir: path.dirname(args.path) };
        } catch (e) {
          const errors = (e as { errors?: Message[] }).errors;
          if (errors !== undefined) return { errors };
          throw e;
        }
      });
    },
  };
  try {
    const built = await esbuild.build({
      entryPoints: [file],
      outfile,
      bundle: true,
      format: cjs ? 'cjs' : 'esm',
      platform: 'node',
      target,
      conditions: [],
      mainFields: ['main', 'module'],
      sourcemap: 'inline',
      sourcesContent: false,
      logLevel: 'silent',
      plugins: [plugin],
      metafile: true,
    });
    // a source written as CommonJS itself (require, module.exports) keeps the ES module's build and its hint
    if (cjs && Object.values(built.metafile.inputs).some((i) => i.format === 'cjs')) needsEsm = true;
    if (cjs && needsEsm) {
      rmSync(outfile, { force: true });
      return undefined;
    }
    return built.metafile;
  } catch (e) {
    // As CommonJS: the ES module's build says what is wrong, or builds what CommonJS could not.
    if (cjs) {
      rmSync(outfile, { force: true });
      return undefined;
    }
    const errors = (e as { errors?: Message[] }).errors;
    if (errors === undefined || errors.length === 0) {
      // not the module's own fault (esbuild's service, the temporary folder), but not dbsmack's either
      throw new InputError(`${file}: cannot compile the workload module: ${(e as Error).message}`);
    }
    throw new InputError(errors.map(describe).join('; '));
  }
}

// ---- the compiled modules kept for the next runs ----------------------------------------------------------------

/** What the manifest's format and this file's way of compiling are: another value compiles again. */
const CACHE_FORMAT = 2;

/** Where a source's compiled module (`base` and its extension) and its manifest are kept. */
interface CacheSlot {
  base: string;
  manifest: string;
}

/** What a kept module was made from (see the head comment). */
interface Manifest {
  format: number;
  /** The kept module's extension (CommonJS or an ES module). */
  ext: ModuleExt;
  source: string;
  /** Files esbuild read, and the config files that could apply to them: path and content hash, or null
   * for one that was not there. */
  files: [string, string | null][];
  /** The packages the module imports, by file. */
  packages: string[];
}

/** The folder modules are kept in, or undefined for none (`DBSMACK_CODE_CACHE=off`). */
function cacheDir(): string | undefined {
  const where = process.env.DBSMACK_CODE_CACHE;
  if (where === 'off') return undefined;
  if (where !== undefined && where !== '') return path.join(path.resolve(where), 'modules');
  // this file is two levels below the package's root, as src/workload/ and as dist/bundle/cli.cjs
  const root = fileURLToPath(new URL('../../', import.meta.url));
  return path.join(root, 'dist', 'bundle', 'v8-cache', 'modules');
}

function cacheOf(file: string): CacheSlot | undefined {
  const dir = cacheDir();
  if (dir === undefined) return undefined;
  const name = hash(
    JSON.stringify([CACHE_FORMAT, path.resolve(file), process.versions.node, API.href]),
  ).slice(0, 32);
  return {
    base: path.join(dir, `${name}-${stem(file)}`),
    manifest: path.join(dir, `${name}.json`),
  };
}

/** A source's file name without its extension, in the compiled module's name. */
function stem(file: string): string {
  return path.basename(file).replace(/\.[^.]*$/, '');
}

/** A name beside `file` for writing it before it is renamed into place (unique to this process and call). */
function beside(file: string): string {
  return `${file}.${process.pid}-${Math.random().toString(36).slice(2)}`;
}

function hash(data: string | Buffer): string {
  return crypto().createHash('sha256').update(data).digest('hex');
}

/** A file's content hash, or null when it cannot be read. */
function fileHash(file: string): string | null {
  try {
    return hash(readFileSync(file));
  } catch {
    return null;
  }
}

/** The kept module's URL when everything it was made from is as it was then, else undefined. */
function cached(slot: CacheSlot): string | undefined {
  try {
    const m = JSON.parse(readFileSync(slot.manifest, 'utf8')) as Manifest;
    if (m.format !== CACHE_FORMAT || !Array.isArray(m.files) || !Array.isArray(m.packages)) return undefined;
    if (m.ext !== 'cjs' && m.ext !== 'mjs') return undefined;
    for (const [f, h] of m.files) if (fileHash(f) !== h) return undefined;
    for (const p of m.packages) if (!existsSync(p)) return undefined;
    const module = `${slot.base}.${m.ext}`;
    if (!existsSync(module)) return undefined;
    return pathToFileURL(module).href;
  } catch {
    return undefined;
  }
}

/** Config files that decide how esbuild reads a file in `dir`: those of every folder up to the root. */
const CONFIG_NAMES = ['tsconfig.json', 'jsconfig.json', 'package.json'];

/**
 * Keep the module esbuild wrote to `outfile` (beside the kept one) with its manifest (`meta`: what it read
 * and imports; `seen`: the hashes of the sources as they were compiled); the kept module's URL, or undefined
 * when that failed (`outfile` is used, and removed at the process's exit).
 */
function keep(
  source: string,
  slot: CacheSlot,
  outfile: string,
  ext: ModuleExt,
  meta: Metafile,
  seen: ReadonlyMap<string, string>,
): string | undefined {
  try {
    const read = Object.keys(meta.inputs).map((f) => path.resolve(f));
    const dirs = new Set<string>();
    for (const f of read) {
      for (let d = path.dirname(f); ; d = path.dirname(d)) {
        if (dirs.has(d)) break;
        dirs.add(d);
        if (path.dirname(d) === d) break;
      }
    }
    const configs = [...dirs].flatMap((d) => CONFIG_NAMES.map((n) => path.join(d, n)));
    const packages = Object.values(meta.outputs)
      .flatMap((o) => o.imports)
      .filter((i) => i.external && i.path.startsWith('file:'))
      .map((i) => fileURLToPath(i.path));
    const manifest: Manifest = {
      format: CACHE_FORMAT,
      ext,
      source: path.resolve(source),
      files: [...read, ...configs].map((f) => [f, seen.get(f) ?? fileHash(f)]),
      packages: [...new Set(packages)],
    };
    // each written beside and renamed into place: runs at the same time never read half a file
    const module = `${slot.base}.${ext}`;
    renameSync(outfile, module);
    const tmp = beside(slot.manifest);
    writeFileSync(tmp, JSON.stringify(manifest));
    renameSync(tmp, slot.manifest);
    return pathToFileURL(module).href;
  } catch {
    if (existsSync(outfile)) process.once('exit', () => rmSync(outfile, { force: true }));
    return undefined;
  }
}

/** esbuild's message as dbsmack names a place in a file: `file:line:column: text`. */
function describe(m: Message): string {
  const where = m.location;
  if (where === null) return m.text;
  const file = path.resolve(where.file);
  return `${file}:${where.line}:${where.column + 1}: ${m.text}`;
}

function makeOutDir(): string {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'dbsmack-modules-'));
  process.once('exit', () => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

/** The compiled module of a source, if this process compiled it (for the load workers' plan). */
export function compiledModule(file: string): string | undefined {
  return compiled.get(file);
}
