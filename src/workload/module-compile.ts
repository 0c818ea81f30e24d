/**
 * A TypeScript workload module, compiled to JavaScript once per run, in the main thread, by esbuild; the
 * load workers import the JavaScript (`WorkloadRef.module`). Why: the alternative, tsx's loader hooks,
 * starts a hooks thread (another Node.js isolate) and esbuild's service in every thread that imports a `.ts`
 * file: about 0.3 s of CPU per thread here, 1.4 s for a run with two load workers, against 0.7 s for the
 * whole of a run of a built-in workload (README, Performance). Compiling once costs one esbuild service.
 *
 * What the compiled module keeps of the source, so that it behaves as it would from its own file:
 * - its local imports (relative paths, its tsconfig's paths, workspace packages linked from elsewhere)
 *   are compiled into it; the rest stays an import: `dbsmack` is the running dbsmack's own public API
 *   (`dist/index.js`: one DbError class and one `oneStatement` marker in the process, whatever the module's
 *   folder has installed), Node's modules by name, and each package by the file it resolves to from the
 *   importing file's folder (conditions `import`, `node`, `default`; main field before module, as Node.js);
 * - `import.meta.url`, `import.meta.filename` and `import.meta.dirname` of each source file are that file's;
 * - an inline source map: with source maps on (`--debug` turns them on), stack traces name the `.ts` files
 *   and lines.
 * Not kept: a dynamic `import()` of a computed relative path resolves against the compiled file's folder
 * (a temporary one); `import.meta.resolve` likewise; a file that uses `import.meta` is transformed on its
 * own, without its tsconfig's compiler options (decorators, JSX settings). Types are not checked, as tsx
 * does not check them. A module written with `require` fails to load (registry.ts hints at ES modules).
 * A syntax error, or an import that resolves nowhere, is an InputError naming file:line:column.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { isBuiltin } from 'node:module';
import os from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import type { Loader, Message, Plugin } from 'esbuild';
import { InputError } from '../errors.ts';
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
 * The file URL of `file` compiled to an ES module, compiling it the first time; undefined when esbuild
 * cannot be loaded (the caller then imports the source through tsx, as before).
 */
export async function compileModule(file: string): Promise<string | undefined> {
  const done = compiled.get(file);
  if (done !== undefined) return done;
  let esbuild: typeof import('esbuild');
  try {
    esbuild = await loadModule<typeof import('esbuild')>('esbuild');
  } catch {
    return undefined;
  }
  try {
    outDir ??= makeOutDir();
  } catch (e) {
    throw new InputError(`${file}: cannot compile the workload module: ${(e as Error).message}`);
  }
  const outfile = path.join(
    outDir,
    `${compiled.size + 1}-${path.basename(file).replace(/\.[^.]*$/, '')}.mjs`,
  );
  const target = `node${process.versions.node}`;
  const plugin: Plugin = {
    name: 'dbsmack-module',
    setup(build) {
      // Bare specifiers and Node's modules stay imports (see the head comment).
      build.onResolve({ filter: /^[^./]/ }, async (args) => {
        if (args.pluginData === OWN) return undefined;
        if (args.path === 'dbsmack') return { path: API.href, external: true };
        if (isBuiltin(args.path)) return { path: args.path, external: true };
        const r = await build.resolve(args.path, {
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
        return { path: pathToFileURL(r.path).href, external: true };
      });
      // Each source file's own import.meta.url, .filename, .dirname.
      build.onLoad({ filter: /\.[cm]?[jt]sx?$/ }, async (args) => {
        const source = readFileSync(args.path, 'utf8');
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
    await esbuild.build({
      entryPoints: [file],
      outfile,
      bundle: true,
      format: 'esm',
      platform: 'node',
      target,
      conditions: [],
      mainFields: ['main', 'module'],
      sourcemap: 'inline',
      sourcesContent: false,
      logLevel: 'silent',
      plugins: [plugin],
    });
  } catch (e) {
    const errors = (e as { errors?: Message[] }).errors;
    if (errors === undefined || errors.length === 0) {
      // not the module's own fault (esbuild's service, the temporary folder), but not dbsmack's either
      throw new InputError(`${file}: cannot compile the workload module: ${(e as Error).message}`);
    }
    throw new InputError(errors.map(describe).join('; '));
  } finally {
    // The service is a process of its own: not kept for the rest of the run.
    await esbuild.stop();
  }
  const url = pathToFileURL(outfile).href;
  compiled.set(file, url);
  return url;
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
