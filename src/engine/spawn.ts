import { Worker } from 'node:worker_threads';

/**
 * Start a load worker. From the compiled package the worker is plain JS; when dbsmack itself runs from its
 * TypeScript sources (tests, `tsx`), Node 20 cannot start a `.ts` worker directly, so a small shim registers
 * tsx inside the worker first.
 */
export function spawnLoadWorker(): Worker {
  const here = import.meta.url;
  if (here.endsWith('.ts')) {
    const entry = new URL('./worker-main.ts', here).href;
    const shim = `import('tsx/esm/api').then(({ register }) => { register(); return import(${JSON.stringify(entry)}); })`;
    return new Worker(shim, { eval: true });
  }
  return new Worker(new URL('./worker-main.js', here));
}
