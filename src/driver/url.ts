import os from 'node:os';
import path from 'node:path';
import { UsageError } from '../errors.ts';
import { registerSecret } from './redact.ts';
import type { DriverName, MysqlConnector, PostgresConnector, Target } from './types.ts';

export const DEFAULT_URL = 'sqlite:./dbsmack.sqlite';

const SCHEMES: Record<string, DriverName> = {
  sqlite: 'sqlite',
  sqlite3: 'sqlite',
  mysql: 'mysql',
  mariadb: 'mysql',
  postgres: 'postgres',
  postgresql: 'postgres',
  pg: 'postgres',
};

/**
 * The URL as typed with its password masked, for error messages about a URL that failed to parse (or is
 * about to be). Everything from the first `:` of the user information to the last `@` of the whole text is
 * masked: a password may hold unencoded `@`, `/`, `?` or `#`, and a URL that failed to parse may have been
 * cut anywhere. Over-masking a malformed URL is fine; showing a byte of its password is not.
 */
export function redactUrlText(url: string): string {
  const at = url.lastIndexOf('@');
  if (at < 0) return url;
  const scheme = /^[a-z][a-z0-9+.-]*:\/\//i.exec(url);
  const from = scheme ? scheme[0].length : 0;
  const colon = url.indexOf(':', from);
  if (colon < 0 || colon > at) return url;
  return `${url.slice(0, colon + 1)}***${url.slice(at)}`;
}

/**
 * Parse `--db URL` into a resolved target. Parts the URL leaves out come from the usual environment
 * variables (`PGHOST`, `PGPORT`, `PGUSER`, `PGPASSWORD`, `PGDATABASE`; `MYSQL_HOST`, `MYSQL_TCP_PORT`,
 * `MYSQL_UNIX_PORT`, `MYSQL_PWD`, `USER`), then from the defaults of each server's own client.
 */
export function parseTarget(url: string, env: NodeJS.ProcessEnv = process.env): Target {
  const m = /^([a-z][a-z0-9+.-]*):/i.exec(url);
  const scheme = m?.[1]?.toLowerCase();
  const driver = scheme === undefined ? undefined : SCHEMES[scheme];
  if (driver === undefined) {
    throw new UsageError(
      `unsupported database URL '${redactUrlText(url)}'`,
      'use sqlite:PATH, mysql://user:pass@host:port/db, mariadb://… or postgres://user:pass@host:port/db',
    );
  }
  if (driver === 'sqlite') return parseSqlite(url, scheme as string);

  // Parsed by hand rather than with WHATWG URL: libpq accepts an empty host (`postgres://u@/db?host=/sock`).
  // As in WHATWG URL, the authority ends at the first '/', '?' or '#', and the user information runs up to
  // its last '@': a password may hold unencoded '@' and ':' (only the first ':' splits user and password).
  const start = (/^[a-z][a-z0-9+.-]*:\/\//i.exec(url)?.[0] ?? '').length;
  const authEnd = url.slice(start).search(/[/?#]/);
  const authority = start === 0 ? '' : url.slice(start, authEnd < 0 ? url.length : start + authEnd);
  const tail = start === 0 ? url : url.slice(start + authority.length);
  const encodeHint =
    'percent-encode the special characters of the user name and password: / as %2F, ? as %3F, # as %23, @ as %40, % as %25';
  // An '@' after the authority means a password with an unencoded '/', '?' or '#' (a database name or
  // socket path that holds '@' is written %40): refuse rather than connect somewhere else, or echo the
  // password as a host, port or database name.
  if (start > 0 && tail.includes('@')) {
    throw new UsageError(
      `malformed database URL '${redactUrlText(url)}': '@' after the host part`,
      encodeHint,
    );
  }
  const at = authority.lastIndexOf('@');
  const userinfo = at >= 0 ? authority.slice(0, at) : undefined;
  const hostport = authority.slice(at + 1);
  const hp = /^(\[[^\]]*\]|[^:[\]]*)(?::([^:]*))?$/.exec(hostport);
  const pq = /^(\/[^?#]*)?(?:\?([^#]*))?$/.exec(tail);
  if (start === 0 || hp === null || pq === null) {
    throw new UsageError(
      `malformed database URL '${redactUrlText(url)}'`,
      `expected a URL like postgres://bench@127.0.0.1:5432/test or mysql://root@localhost/test?socket=/run/mysqld/mysqld.sock (${encodeHint})`,
    );
  }
  const [, hostPart, portPart] = hp;
  const [, pathPart, query] = pq;
  // The typed form of the password is a secret too (from the start: the errors below may show the URL).
  const typedPassword = userinfo?.includes(':') ? userinfo.slice(userinfo.indexOf(':') + 1) : undefined;
  registerSecret(typedPassword);
  const params: Record<string, string> = {};
  for (const [k, v] of new URLSearchParams(query ?? '')) params[k] = v;
  const dec = (s: string): string => {
    try {
      return decodeURIComponent(s);
    } catch {
      throw new UsageError(`malformed percent-encoding in database URL '${redactUrlText(url)}'`, encodeHint);
    }
  };
  let user: string | undefined;
  let password: string | undefined;
  if (userinfo !== undefined) {
    const colon = userinfo.indexOf(':');
    const u = colon >= 0 ? userinfo.slice(0, colon) : userinfo;
    const pw = colon >= 0 ? userinfo.slice(colon + 1) : '';
    user = u ? dec(u) : undefined;
    password = pw ? dec(pw) : undefined;
  }
  const host = hostPart ? dec(hostPart.replace(/^\[|\]$/g, '')) : undefined;
  let port: number | undefined;
  if (portPart !== undefined && portPart !== '') {
    if (!/^\d{1,5}$/.test(portPart) || Number(portPart) > 65535) {
      // Without an '@', `user:password` with the host left out reads as host:port: show no such port.
      if (userinfo === undefined) {
        throw new UsageError(
          `malformed database URL '${url.slice(0, start + hostPart!.length + 1)}***${tail}': bad port`,
          'the port is a number up to 65535; a user and password are written user:password@host',
        );
      }
      throw new UsageError(`malformed database URL '${redactUrlText(url)}': bad port '${portPart}'`);
    }
    port = Number(portPart);
  }
  const dbPath = (pathPart ?? '').replace(/^\//, '');
  const database = dbPath ? dec(dbPath) : undefined;
  if (database?.includes('/')) {
    throw new UsageError(`malformed database URL '${redactUrlText(url)}': the database name contains '/'`);
  }

  const t: Target =
    driver === 'postgres'
      ? resolvePostgres({ user, password, host, port, database, params }, env)
      : resolveMysql({ user, password, host, port, database, params }, env);
  registerSecret(t.password);
  t.redactedUrl = formatRedacted(scheme as string, t);
  return t;
}

interface UrlParts {
  user: string | undefined;
  password: string | undefined;
  host: string | undefined;
  port: number | undefined;
  database: string | undefined;
  params: Record<string, string>;
}

function osUser(env: NodeJS.ProcessEnv): string {
  if (env.USER) return env.USER;
  try {
    return os.userInfo().username;
  } catch {
    return 'root';
  }
}

function resolvePostgres(p: UrlParts, env: NodeJS.ProcessEnv): Target {
  const { host: hostParam, ...rest } = p.params;
  let host = p.host;
  let socket: string | undefined;
  // libpq: a host that starts with '/' is a socket directory; the URL form puts it in ?host=.
  const sockCandidate = hostParam ?? (host === undefined ? env.PGHOST : undefined);
  if (sockCandidate?.startsWith('/')) socket = sockCandidate;
  else if (host === undefined) host = sockCandidate ?? 'localhost';
  const port = p.port ?? (env.PGPORT ? Number(env.PGPORT) : 5432);
  const user = p.user ?? env.PGUSER ?? osUser(env);
  const password = p.password ?? env.PGPASSWORD;
  const database = p.database ?? env.PGDATABASE ?? user;
  checkConnector('PostgreSQL', rest.connector, PG_CONNECTORS);
  checkIo(rest);
  return {
    driver: 'postgres',
    redactedUrl: '',
    host: socket ? undefined : host,
    port,
    socket,
    user,
    password,
    database,
    params: rest,
  };
}

const MYSQL_CONNECTORS: readonly MysqlConnector[] = ['mysql2', 'mariadb', 'dbsmack'];
const PG_CONNECTORS: readonly PostgresConnector[] = ['pg', 'dbsmack'];

function checkConnector(server: string, given: string | undefined, known: readonly string[]): void {
  if (given !== undefined && !known.includes(given)) {
    throw new UsageError(
      `unknown ${server} connector '${given}'`,
      `use ${known.map((k) => `?connector=${k}`).join(', ')}`,
    );
  }
}

/**
 * The values `?io=` and `?batch=` take, as do the environment's `DBSMACK_IO` and `DBSMACK_BATCH`
 * (connectors.ts `loadEnvironmentNotes`).
 */
const LOAD_SETTINGS: Record<'io' | 'batch', { what: string; takes: readonly string[] }> = {
  io: { what: 'I/O path', takes: ['native', 'js'] },
  batch: { what: 'batch setting', takes: ['on', 'off'] },
};

/**
 * Refuses a value of `?io=` or `?batch=` (and of `DBSMACK_IO`, `DBSMACK_BATCH`: `where` names the variable)
 * that they do not take; `hint` says how to write one they do.
 */
export function checkLoadSetting(
  name: keyof typeof LOAD_SETTINGS,
  value: string | undefined,
  hint: string,
  where?: string,
): void {
  const { what, takes } = LOAD_SETTINGS[name];
  if (value !== undefined && !takes.includes(value))
    throw new UsageError(`unknown ${what} '${value}'${where ? ` in ${where}` : ''}`, hint);
}

/**
 * `?io=native|js`: the load connections' I/O path; native I/O is a part of the `dbsmack` connector.
 * `?batch=on|off`: whether the native core may batch events of one statement (connectors.ts batchingOf).
 */
function checkIo(params: Record<string, string>): void {
  checkIoValues(params);
  const io = params.io;
  if (io === 'native' && params.connector !== undefined && params.connector !== 'dbsmack')
    throw new UsageError(
      `?io=native needs the dbsmack connector, not ${params.connector}`,
      'leave ?connector= out or name connector=dbsmack',
    );
}

/**
 * That `?io=` and `?batch=` name values they take. Also on a SQLite URL, which has no I/O path of its own
 * (its driver is in-process) and ignores them: a typo there is refused as it is on a server's URL.
 */
function checkIoValues(params: Record<string, string>): void {
  checkLoadSetting('batch', params.batch, 'use ?batch=on or ?batch=off');
  checkLoadSetting('io', params.io, 'use ?io=native or ?io=js');
}

function resolveMysql(p: UrlParts, env: NodeJS.ProcessEnv): Target {
  const { socket: socketParam, ...rest } = p.params;
  let socket = socketParam;
  let host = p.host;
  if (socket === undefined && host === undefined) {
    if (env.MYSQL_UNIX_PORT && !env.MYSQL_HOST) socket = env.MYSQL_UNIX_PORT;
    else host = env.MYSQL_HOST ?? 'localhost';
  }
  const port = p.port ?? (env.MYSQL_TCP_PORT ? Number(env.MYSQL_TCP_PORT) : 3306);
  const user = p.user ?? osUser(env);
  const password = p.password ?? env.MYSQL_PWD;
  checkConnector('MySQL', rest.connector, MYSQL_CONNECTORS);
  checkIo(rest);
  return {
    driver: 'mysql',
    redactedUrl: '',
    host: socket ? undefined : host,
    port,
    socket,
    user,
    password,
    database: p.database,
    params: rest,
  };
}

function parseSqlite(url: string, scheme: string): Target {
  // sqlite:PATH, sqlite://PATH (relative), sqlite:///abs/path, sqlite::memory:
  let rest = url.slice(scheme.length + 1);
  const q = rest.indexOf('?');
  const params: Record<string, string> = {};
  if (q >= 0) {
    for (const [k, v] of new URLSearchParams(rest.slice(q + 1))) params[k] = v;
    rest = rest.slice(0, q);
  }
  if (rest.startsWith('//')) rest = rest.slice(2);
  if (rest === '') {
    throw new UsageError(
      `malformed database URL '${url}': no file path`,
      'use sqlite:./file.sqlite or sqlite::memory:',
    );
  }
  checkIoValues(params);
  const file = rest === ':memory:' ? rest : path.resolve(rest);
  return { driver: 'sqlite', redactedUrl: `sqlite:${rest}`, path: file, params };
}

function formatRedacted(scheme: string, t: Target): string {
  const auth = t.user ? `${encodeURIComponent(t.user)}${t.password ? ':***' : ''}@` : '';
  const host = t.host ? (t.host.includes(':') ? `[${t.host}]` : t.host) : '';
  const port = t.host && t.port ? `:${t.port}` : '';
  const db = t.database ? `/${encodeURIComponent(t.database)}` : '';
  const qs = new URLSearchParams(t.params);
  if (t.socket) qs.set(t.driver === 'postgres' ? 'host' : 'socket', t.socket);
  const q = qs.toString();
  return `${scheme}://${auth}${host}${port}${db}${q ? `?${q.replace(/%2F/g, '/')}` : ''}`;
}
