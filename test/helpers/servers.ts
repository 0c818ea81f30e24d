/**
 * Real servers for integration tests. A test that needs one it cannot reach is skipped with the reason
 * printed; under CI=true it fails instead, so a missing server never passes silently.
 */
import type { TestContext } from 'node:test';
import { loadDriver } from '../../src/driver/index.ts';
import type { DriverName, Target } from '../../src/driver/types.ts';
import { parseTarget } from '../../src/driver/url.ts';

export const MYSQL_URL = process.env.DBSMACK_TEST_MYSQL_URL ?? 'mysql://root@127.0.0.1:3306/test';
export const PG_URL = process.env.DBSMACK_TEST_PG_URL ?? 'postgres://root@127.0.0.1:5432/test';

export const SERVER_URLS: Record<Exclude<DriverName, 'sqlite'>, string> = {
  mysql: MYSQL_URL,
  postgres: PG_URL,
};

const reachable = new Map<string, Promise<string | undefined>>();

/** Resolves to undefined when the server answers, or to the reason it does not. */
function probe(url: string): Promise<string | undefined> {
  let p = reachable.get(url);
  if (p === undefined) {
    p = (async () => {
      const target = parseTarget(url);
      try {
        const driver = await loadDriver(target.driver);
        const c = await driver.connect(target, { connectTimeoutMs: 3000 });
        await c.close();
        return undefined;
      } catch (e) {
        return `${target.redactedUrl} is not reachable: ${(e as Error).message}`;
      }
    })();
    reachable.set(url, p);
  }
  return p;
}

/**
 * The target of a server, or undefined after skipping the test (fails under CI=true).
 * Usage: `const target = await needServer(t, 'mysql'); if (!target) return;`
 */
export async function needServer(
  t: TestContext,
  driver: 'mysql' | 'postgres',
  url?: string,
): Promise<Target | undefined> {
  const u = url ?? SERVER_URLS[driver];
  const why = await probe(u);
  if (why === undefined) return parseTarget(u);
  if (process.env.CI === 'true') throw new Error(`CI=true and a required server is down: ${why}`);
  t.skip(why);
  process.stderr.write(`# skipped: ${why}\n`);
  return undefined;
}
