/**
 * Resolves a `WorkloadRef` to a `Workload`, the same way in the main thread and in every worker:
 * a built-in name, a `.smack` file, or a user's TypeScript/JavaScript module.
 */
import { existsSync } from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { InputError, UsageError } from '../cli/errors.ts';
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

export function builtinNames(): { name: string; description: string }[] {
  return [...builtins].map(([name, b]) => ({ name, description: b.description }));
}

/** Is this argument a workload file (as opposed to a built-in name)? */
export function isWorkloadFile(arg: string): boolean {
  return arg === '-' || /\.(smack|ts|mts|js|mjs)$/.test(arg) || arg.includes('/');
}

/** Turn the WORKLOAD argument into an absolute reference, checking it exists. */
export function resolveWorkloadArg(arg: string): string {
  if (builtins.has(arg)) return arg;
  if (!isWorkloadFile(arg)) {
    throw new UsageError(
      `unknown workload '${arg}'`,
      `built-in workloads: ${[...builtins.keys()].join(', ')}; or give a .smack, .ts or .js file`,
    );
  }
  if (arg === '-') return arg;
  const abs = path.resolve(arg);
  if (!existsSync(abs)) throw new InputError(`${arg}: no such file`);
  return abs;
}

let tsxRegistered = false;

export async function loadWorkload(ref: WorkloadRef): Promise<Workload> {
  const b = builtins.get(ref.ref);
  if (b) return b.load();
  if (ref.ref.endsWith('.smack') || ref.ref === '-') {
    throw new UsageError(`.smack files are not supported yet: ${ref.ref}`);
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
