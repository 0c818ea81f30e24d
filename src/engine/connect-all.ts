import type { Connection } from '../driver/types.ts';

/**
 * Connections a worker opens at the same time. A thousand simultaneous connects overflow the server's
 * listen backlog (MariaDB's back_log is about 80 + max_connections/5): dropped SYNs come back as
 * ETIMEDOUT after the kernel's retries. A few dozen in flight connect a thousand clients in well under a
 * second on loopback.
 */
export const CONNECT_CONCURRENCY = 32;

/**
 * Open every client's connection, at most CONNECT_CONCURRENCY at once, in client order. On the first
 * failure no new connect starts, the connections already open are closed, and the failure is thrown.
 */
export async function connectAll<T extends { conn: Connection }>(
  ids: readonly number[],
  open: (id: number) => Promise<T>,
): Promise<T[]> {
  const done: T[] = [];
  let next = 0;
  let failure: { error: unknown } | undefined;
  const lane = async (): Promise<void> => {
    while (failure === undefined && next < ids.length) {
      const i = next++;
      try {
        done[i] = await open(ids[i] as number);
      } catch (error) {
        failure ??= { error };
      }
    }
  };
  await Promise.all(Array.from({ length: Math.min(CONNECT_CONCURRENCY, ids.length) }, lane));
  if (failure !== undefined) {
    await Promise.all(done.map((d) => d?.conn.close().catch(() => {})));
    throw failure.error;
  }
  return done;
}
