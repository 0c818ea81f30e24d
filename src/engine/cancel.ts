/**
 * Cancelling the statements still in flight once a run is stopping (the engine's stop flag: Ctrl-C,
 * --exit-on-abort, a fatal error, --threshold-abort; not the deadline, after which events end as pgbench's
 * and sysbench's do). Without it a minute-long statement held the stop until the engine's grace gave up on
 * its worker, which lost what that worker had measured, and the statement went on running on the server.
 *
 * A load thread calls `tick` every CANCEL_TICK_MS. Once the stop is CANCEL_AFTER_US old, each client still
 * in its loop has its statement cancelled (`Client.cancelRequest`: PostgreSQL `pg_cancel_backend`, MySQL
 * `KILL QUERY`), through one connection of the thread's own per target, opened at the first cancel: a
 * thousand clients cost one connection and a thousand short statements, not a thousand connections. A
 * client still in its loop a second later (it went on to another statement) is cancelled again. Statements
 * that end within the first 200 ms are left alone: a short one is not turned into an error.
 */
import type { Connection, Driver, Target } from '../driver/types.ts';
import { nowUs } from '../metrics/clock.ts';
import type { Client } from './client.ts';
import { CTRL_STOP } from './protocol.ts';

export const CANCEL_TICK_MS = 100;
const CANCEL_AFTER_US = 200_000;
const AGAIN_AFTER_US = 1_000_000;

export class StopCanceller {
  private stopSeenAt = 0;
  private running = false;
  private readonly cancelledAt = new Map<Client, number>();
  private readonly admins = new Map<string, Promise<Connection | undefined>>();

  constructor(
    private readonly ctrl: Int32Array,
    private readonly inLoop: ReadonlySet<Client>,
    private readonly connectTimeoutMs: number,
  ) {}

  tick(): void {
    if (this.ctrl[CTRL_STOP] === 0 || this.inLoop.size === 0 || this.running) return;
    const now = nowUs();
    if (this.stopSeenAt === 0) this.stopSeenAt = now;
    if (now - this.stopSeenAt < CANCEL_AFTER_US) return;
    const due: Client[] = [];
    for (const c of this.inLoop) {
      const at = this.cancelledAt.get(c);
      if (at === undefined || now - at >= AGAIN_AFTER_US) due.push(c);
    }
    if (due.length === 0) return;
    this.running = true;
    void this.cancel(due, now).finally(() => {
      this.running = false;
    });
  }

  private async cancel(due: readonly Client[], now: number): Promise<void> {
    for (const c of due) {
      this.cancelledAt.set(c, now);
      const req = c.cancelRequest();
      if (req === undefined) continue;
      const admin = await this.admin(req.driver, req.target);
      // best effort: the statement may have ended and its session gone; the engine's grace still ends the run
      await admin?.query(req.sql).catch(() => {});
    }
  }

  /** The thread's cancelling connection to `target`, opened once (undefined when it cannot connect). */
  private admin(driver: Driver, target: Target): Promise<Connection | undefined> {
    const key = JSON.stringify(target);
    let a = this.admins.get(key);
    if (a === undefined) {
      a = driver.connect(target, { connectTimeoutMs: this.connectTimeoutMs }).catch(() => undefined);
      this.admins.set(key, a);
    }
    return a;
  }

  /** Close the cancelling connections (the load is over). */
  async close(): Promise<void> {
    const all = [...this.admins.values()];
    this.admins.clear();
    await Promise.all(all.map(async (a) => (await a)?.close().catch(() => {})));
  }
}
