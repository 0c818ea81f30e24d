/**
 * A database of a test's own on a test server, created for it and dropped after it, so that its tables
 * (the sysbench workloads always name theirs `sbtest1…N`) and its sessions are nobody else's: another test
 * run, an engineer's manual run or `bench/peers` on the same server never sees them, and the test may kill
 * every session in it but its own.
 */
import { randomBytes } from 'node:crypto';
import type { TestContext } from 'node:test';
import { loadDriver } from '../../src/driver/index.ts';
import type { Target } from '../../src/driver/types.ts';
import { parseTarget } from '../../src/driver/url.ts';
import { missing } from './preconditions.ts';
import { needServer, SERVER_URLS, withDatabase } from './servers.ts';

export interface OwnDatabase {
  /** The server's test URL with the database replaced by the test's own. */
  url: string;
  target: Target;
  name: string;
}

async function admin<T>(
  target: Target,
  fn: (q: (sql: string) => Promise<unknown>) => Promise<T>,
): Promise<T> {
  const driver = await loadDriver(target.driver);
  const c = await driver.connect(target, { connectTimeoutMs: 5000 });
  try {
    return await fn((sql) => c.query(sql));
  } finally {
    await c.close();
  }
}

/**
 * Create a database named after `label` and this process, and drop it (with any session still in it)
 * when the test ends. Undefined after skipping the test when the server is down or the account may not
 * create databases (both fail under CI=true).
 */
export async function ownDatabase(
  t: TestContext,
  driver: 'mysql' | 'postgres',
  label: string,
): Promise<OwnDatabase | undefined> {
  const base = await needServer(t, driver);
  if (!base) return undefined;
  const name = `dbsmack_t_${label}_${process.pid}_${randomBytes(3).toString('hex')}`.toLowerCase();
  const url = withDatabase(SERVER_URLS[driver], name);
  try {
    await admin(base, (q) => q(`CREATE DATABASE ${name}`));
  } catch (e) {
    missing(t, `cannot create a database of the test's own on ${base.redactedUrl}: ${(e as Error).message}`);
    return undefined;
  }
  t.after(() =>
    admin(base, (q) =>
      q(
        driver === 'postgres'
          ? `DROP DATABASE IF EXISTS ${name} WITH (FORCE)`
          : `DROP DATABASE IF EXISTS ${name}`,
      ),
    ),
  );
  return { url, target: parseTarget(url), name };
}
