/**
 * Resolves a `WorkloadRef` to a `Workload`, the same way in the main thread and in every worker:
 * a built-in name, a `.smack` file, or a user's TypeScript/JavaScript module.
 */
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { InputError, UsageError } from '../errors.ts';
import { sysbenchBuiltins } from './sysbench/register.ts';
import type { Workload, WorkloadRef } from './types.ts';

type Loader = () => Promise<Workload>;

/** Built-in workloads by name. Other parts register theirs here (sysbench OLTP, …). */
const builtins = new Map<string, { description: string; load: Loader }>([
  [
    'select1',
    {
      description: 'SELECT 1 once per event: the smallest unit of client overhead',
      load: async () => (await import('./builtin/select1.ts')).default,
    },
  ],
]);

export function registerBuiltin(name: string, description: string, load: Loader): void {
  builtins.set(name, { description, load });
}

for (const b of sysbenchBuiltins) registerBuiltin(b.name, b.description, b.load);
// pgbench's scripts; its options choose the built-ins and files (see `dbsmack pgbench`)
registerBuiltin(
  'pgbench',
  "pgbench: its built-in scripts (tpcb-like, select-only, simple-update) and script files, with pgbench's options",
  async () =>
    (await import('./pgbench/workload.ts')).pgbenchWorkload({ ref: 'pgbench', rawOptions: {}, args: [] }),
);

export function builtinNames(): { name: string; description: string }[] {
  return [...builtins].map(([name, b]) => ({ name, description: b.description }));
}

/** Is this argument a workload file (as opposed to a built-in name)? */
export function isWorkloadFile(arg: string): boolean {
  return arg === '-' || /\.(smack|sql|ts|mts|js|mjs)$/.test(arg) || arg.includes('/');
}

/** Turn the WORKLOAD argument into an absolute reference, checking it exists. */
export function resolveWorkloadArg(arg: string): string {
  if (builtins.has(arg)) return arg;
  if (!isWorkloadFile(arg)) {
    throw new UsageError(
      `unknown workload '${arg}'`,
      `built-in workloads: ${[...builtins.keys()].join(', ')}; or give a .smack, .sql (pgbench script), .ts or .js file`,
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

let tsxRegistered = false;

export async function loadWorkload(ref: WorkloadRef): Promise<Workload> {
  if (ref.ref === 'pgbench' || ref.ref.endsWith('.sql')) {
    const { pgbenchWorkload } = await import('./pgbench/workload.ts');
    return pgbenchWorkload(ref);
  }
  const b = builtins.get(ref.ref);
  if (b) return b.load();
  if (ref.ref.endsWith('.smack') || ref.ref === '-') {
    const { smackWorkload } = await import('./smack/workload.ts');
    return smackWorkload(ref);
  }
  if (/\.(ts|mts)$/.test(ref.ref) && !tsxRegistered && !import.meta.url.endsWith('.ts')) {
    const { register } = await import('tsx/esm/api');
    register();
    tsxRegistered = true;
  }
  let mod: { default?: unknown; workload?: unknown };
  try {
    mod = (await import(pathToFileURL(ref.ref).href)) as { default?: unknown; workload?: unknown };
  } catch (e) {
    throw new InputError(`${ref.ref}: cannot load workload module: ${(e as Error).message}`);
  }
  const w = (mod.default ?? mod.workload) as Workload | undefined;
  if (!w || typeof w !== 'object' || typeof w.client !== 'function' || typeof w.name !== 'string') {
    throw new InputError(
      `${ref.ref}: the module must export default defineWorkload({ name, client(ctx) { … } })`,
      'see the README section "Writing a workload"',
    );
  }
  return w;
}
