import type { Connection } from '../driver/types.ts';

/**
 * Connections a worker opens at the same time. A thousand simultaneous connects overflow the server's
 * listen backlog (MariaDB's back_log is about 80 + max_connections/5): dropped SYNs come back as
 * ETIMEDOUT after the kernel's retries. A few dozen in flight connect a thousand clients in well under a
 * second on loopback.
 */
export const CONNECT_CONCURRENCY = 32;

/**
 * Open every client's connection, in client order: the first alone, then at most CONNECT_CONCURRENCY at
 * once. Each connection times its own connect and handshake (`Connection.connectMs`); what is left in it
 * of the others in flight is the server and this thread serving their handshakes at the same time, as
 * super-smack's client processes, connecting together, competed for the server and the CPU. On the first
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
  // The first connection alone: it loads the connector and runs its code cold (compiling it, the first
  // use of its crypto), which no other connection's connect time should include.
  if (ids.length > 1) {
    next = 1;
    try {
      done[0] = await open(ids[0] as number);
    } catch (error) {
      failure = { error };
    }
  }
  await Promise.all(Array.from({ length: Math.min(CONNECT_CONCURRENCY, ids.length) }, lane));
  if (failure !== undefined) {
    await Promise.all(done.map((d) => d?.conn.close().catch(() => {})));
    throw failure.error;
  }
  return done;
}
