import { loadDriver } from '../driver/index.ts';
import type { Connection, Target } from '../driver/types.ts';
import type { AdminContext } from '../workload/types.ts';

/**
 * Open the connection(s) a workload's `prepare` or `cleanup` needs, in the main thread, and close them all
 * afterwards whatever happens.
 */
export async function withAdminContext<T>(
  target: Target,
  options: Record<string, unknown>,
  threads: number,
  connectTimeoutMs: number,
  log: (m: string) => void,
  fn: (ctx: AdminContext) => Promise<T>,
  targetOverridden?: boolean,
): Promise<T> {
  const driver = await loadDriver(target.driver);
  const opened: Connection[] = [];
  const open = async (): Promise<Connection> => {
    const c = await driver.connect(target, { connectTimeoutMs });
    opened.push(c);
    return c;
  };
  try {
    const conn = await open();
    const ctx: AdminContext = {
      target,
      driver: target.driver,
      options,
      threads,
      ...(targetOverridden !== undefined ? { targetOverridden } : {}),
      conn,
      log,
      async parallel(n, work) {
        const conns = await Promise.all(Array.from({ length: n }, () => open()));
        await Promise.all(conns.map((c, i) => work(c, i)));
      },
    };
    return await fn(ctx);
  } finally {
    await Promise.all(opened.map((c) => c.close().catch(() => {})));
  }
}
