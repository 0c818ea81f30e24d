/**
 * Resolves a `WorkloadRef` to a `Workload`, the same way in the main thread and in every worker:
 * a built-in name, a `.smack` file, or a user's TypeScript/JavaScript module.
 */
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { InputError, UsageError } from '../errors.ts';
import { loadModule } from '../load-module.ts';
import { BUILTIN_DESCRIPTIONS, type BuiltinName } from './catalog.ts';
import { compiledModule, compileModule } from './module-compile.ts';
import type { Workload, WorkloadRef } from './types.ts';

type Loader = (ref: WorkloadRef) => Promise<Workload>;

const oltp = (key: keyof typeof import('./sysbench/oltp-workloads.ts')) => async (): Promise<Workload> =>
  (await import('./sysbench/oltp-workloads.ts'))[key];

/**
 * How each built-in is loaded, by the name `catalog.ts` gives it with its description: a static table (the
 * type makes it name every built-in), each entry importing its module only when that workload is asked for.
 */
const LOADERS: Record<BuiltinName, Loader> = {
  select1: async () => (await import('./builtin/select1.ts')).default,
  oltp_read_only: oltp('oltpReadOnly'),
  oltp_read_write: oltp('oltpReadWrite'),
  oltp_write_only: oltp('oltpWriteOnly'),
  oltp_point_select: oltp('oltpPointSelect'),
  oltp_update_index: oltp('oltpUpdateIndex'),
  oltp_update_non_index: oltp('oltpUpdateNonIndex'),
  oltp_insert: oltp('oltpInsert'),
  oltp_delete: oltp('oltpDelete'),
  select_random_points: async () => (await import('./sysbench/select-random.ts')).selectRandomPoints,
  select_random_ranges: async () => (await import('./sysbench/select-random.ts')).selectRandomRanges,
  bulk_insert: async () => (await import('./sysbench/bulk-insert.ts')).bulkInsert,
  // pgbench's scripts; its options choose the built-ins and files (see `dbsmack pgbench`)
  pgbench: async (ref) => (await import('./pgbench/workload.ts')).pgbenchWorkload(ref),
};

const isBuiltin = (name: string): name is BuiltinName => Object.hasOwn(LOADERS, name);

/** The built-in workloads with their descriptions, in the order of `dbsmack list`. */
export function builtinNames(): { name: string; description: string }[] {
  return Object.entries(BUILTIN_DESCRIPTIONS).map(([name, description]) => ({ name, description }));
}

/** Is this argument a workload file (as opposed to a built-in name)? */
export function isWorkloadFile(arg: string): boolean {
  return arg === '-' || /\.(smack|sql|ts|mts|js|mjs)$/.test(arg) || arg.includes('/');
}

/** Turn the WORKLOAD argument into an absolute reference, checking it exists. */
export function resolveWorkloadArg(arg: string): string {
  if (isBuiltin(arg)) return arg;
  if (!isWorkloadFile(arg)) {
    throw new UsageError(
      `unknown workload '${arg}'`,
      `built-in workloads: ${Object.keys(BUILTIN_DESCRIPTIONS).join(', ')}; or give a .smack, .sql (pgbench script), .ts or .js file`,
    );
  }
  if (arg === '-') return saveStdin();
  const abs = path.resolve(arg);
  if (!existsSync(abs)) throw new InputError(`${arg}: no such file`);
  return abs;
}

/**
 * A smack file on stdin (`-`) is saved to a temporary file first, because every worker thread loads the
 * workload again by path.
 */
function saveStdin(): string {
  let src: string;
  try {
    src = readFileSync(0, 'utf8');
  } catch (e) {
    throw new InputError(`cannot read the smack file from stdin: ${(e as Error).message}`);
  }
  const dir = mkdtempSync(path.join(os.tmpdir(), 'dbsmack-stdin-'));
  const file = path.join(dir, 'stdin.smack');
  writeFileSync(file, src);
  process.once('exit', () => rmSync(dir, { recursive: true, force: true }));
  return file;
}

/**
 * A user's TypeScript or JavaScript module (what `loadWorkload` imports), as opposed to dbsmack's own
 * workloads: a built-in, a pgbench script (`.sql`) or a smack file.
 */
export function isUserModule(ref: string): boolean {
  return !isBuiltin(ref) && !ref.endsWith('.sql') && !ref.endsWith('.smack') && ref !== '-';
}

let tsxRegistered = false;

export async function loadWorkload(ref: WorkloadRef): Promise<Workload> {
  if (isBuiltin(ref.ref)) return LOADERS[ref.ref](ref);
  if (ref.ref.endsWith('.sql')) {
    const { pgbenchWorkload } = await import('./pgbench/workload.ts');
    return pgbenchWorkload(ref);
  }
  if (ref.ref.endsWith('.smack') || ref.ref === '-') {
    const { smackWorkload } = await import('./smack/workload.ts');
    return smackWorkload(ref);
  }
  const ownUrl = pathToFileURL(ref.ref).href;
  let url = ownUrl;
  if (/\.(ts|mts)$/.test(ref.ref)) {
    // Compiled once, in the main thread; a load worker is handed the result (module-compile.ts).
    const js = ref.module ?? (await compileModule(ref.ref));
    if (js !== undefined) url = js;
    else if (!tsxRegistered && !import.meta.url.endsWith('.ts')) {
      // No esbuild: tsx's loader hooks, in every thread that imports the module.
      const { register } = await loadModule<typeof import('tsx/esm/api')>('tsx/esm/api');
      register();
      tsxRegistered = true;
    }
  }
  let mod: { default?: unknown; workload?: unknown };
  try {
    // a module compiled to CommonJS is required: no ES module loader to start in this thread (module-compile.ts)
    mod = (
      url !== ownUrl && url.endsWith('.cjs') ? createRequire(url)(fileURLToPath(url)) : await loadModule(url)
    ) as { default?: unknown; workload?: unknown };
  } catch (e) {
    const message = (e as Error).message;
    throw new InputError(
      `${ref.ref}: cannot load workload module: ${message}`,
      // require() of a package in a module compiled as an ES module (module-compile.ts)
      /^Dynamic require of /.test(message)
        ? "write it as an ES module: import { defineWorkload } from 'dbsmack'; export default defineWorkload({ … })"
        : undefined,
    );
  }
  const w = (mod.default ?? mod.workload) as Workload | undefined;
  if (!w || typeof w !== 'object' || typeof w.client !== 'function' || typeof w.name !== 'string') {
    throw new InputError(
      `${ref.ref}: the module must export default defineWorkload({ name, client(ctx) { … } })`,
      'see the README section "Writing a workload"',
    );
  }
  if (w.readOnly !== undefined && typeof w.readOnly !== 'function') {
    throw new InputError(
      `${ref.ref}: readOnly must be a function of the workload's options, not ${typeof w.readOnly}`,
      'write readOnly: () => true',
    );
  }
  return w;
}

/**
 * The ref a load worker gets: with the JavaScript this thread compiled a TypeScript module into, so that
 * the worker imports that instead of compiling again.
 */
export function workerRef(ref: WorkloadRef): WorkloadRef {
  const js = compiledModule(ref.ref);
  return js === undefined ? ref : { ...ref, module: js };
}
