import { asDbError, type DbError } from '../driver/errors.ts';
import { loadDriver } from '../driver/index.ts';
import type { Connection, Target } from '../driver/types.ts';
import type { AdminContext } from '../workload/types.ts';

/**
 * A connection of `prepare`, `cleanup` or a run's `check` could not be opened (refused login, unknown
 * database, server down). Like a load client's failure in the engine's connect phase, it is reported as
 * "cannot connect" (exit 3) whatever the server's code, not as a failure of the work itself.
 */
export class AdminConnectError extends Error {
  override readonly name = 'AdminConnectError';
  readonly error: DbError;
  constructor(error: DbError) {
    super(error.message);
    this.error = error;
  }
}

/**
 * Open the connection(s) a workload's `prepare` or `cleanup` needs, in the main thread, and close them all
 * afterwards whatever happens. `textOnly`: the work reads no typed values (a built-in workload's check,
 * `Workload.textCheck`), so its connections may take dbsmack's own client (ConnectOptions.info).
 */
export async function withAdminContext<T>(
  target: Target,
  options: Record<string, unknown>,
  threads: number,
  connectTimeoutMs: number,
  log: (m: string) => void,
  fn: (ctx: AdminContext) => Promise<T>,
  targetOverridden?: boolean,
  textOnly = false,
): Promise<T> {
  const driver = await loadDriver(target.driver);
  const opened: Connection[] = [];
  const open = async (): Promise<Connection> => {
    let c: Connection;
    try {
      c = await driver.connect(target, { connectTimeoutMs, ...(textOnly ? { info: true } : {}) });
    } catch (e) {
      throw new AdminConnectError(asDbError(e));
    }
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
