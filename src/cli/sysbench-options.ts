/**
 * sysbench's command-line options that are not workload options: open-loop rate, the percentile, and
 * `--db-driver` with `--mysql-*`/`--pgsql-*` connection options, which become a `--db` URL so that a
 * sysbench command line works with `sysbench` replaced by `dbsmack`.
 */
import { type Command, Option } from '@commander-js/extra-typings';
import { registerSecret } from '../driver/redact.ts';
import { UsageError } from '../errors.ts';
import type { RatePlan, StagePlan } from '../metrics/outcome.ts';
import { helpDefault } from './help.ts';
import { seconds } from './parse.ts';

export interface SysbenchDbOptions {
  dbDriver?: string;
  mysqlHost?: string;
  mysqlPort?: string;
  mysqlSocket?: string;
  mysqlUser?: string;
  mysqlPassword?: string;
  mysqlDb?: string;
  pgsqlHost?: string;
  pgsqlPort?: string;
  pgsqlUser?: string;
  pgsqlPassword?: string;
  pgsqlDb?: string;
}

export interface SysbenchRunOptions extends SysbenchDbOptions {
  rate?: number;
  rateShape: string;
  rateMaxLag?: number;
  rateLateMs: number;
  percentile?: number;
}

/** Add `--db-driver` and the `--mysql-*`/`--pgsql-*` options (run, prepare, cleanup). */
// biome-ignore lint/suspicious/noExplicitAny: commander's typed builder changes type with every option
export function addSysbenchDbOptions<C extends Command<any, any, any>>(cmd: C): C {
  const opt = (flags: string, help: string, shown?: string): Option =>
    shown === undefined ? new Option(flags, help) : helpDefault(new Option(flags, help), shown);
  for (const o of [
    opt('--db-driver <name>', 'sysbench style: mysql or pgsql (with --mysql-*/--pgsql-*, instead of --db)'),
    opt('--mysql-host <host>', 'sysbench style: MySQL host (first of a list)', 'localhost'),
    opt('--mysql-port <port>', 'sysbench style: MySQL port', '3306'),
    opt('--mysql-socket <path>', 'sysbench style: MySQL socket'),
    opt('--mysql-user <user>', 'sysbench style: MySQL user', 'sbtest'),
    opt('--mysql-password <pw>', 'sysbench style: MySQL password'),
    opt('--mysql-db <db>', 'sysbench style: MySQL database', 'sbtest'),
    opt('--pgsql-host <host>', 'sysbench style: PostgreSQL host', 'localhost'),
    opt('--pgsql-port <port>', 'sysbench style: PostgreSQL port', '5432'),
    opt('--pgsql-user <user>', 'sysbench style: PostgreSQL user', 'sbtest'),
    opt('--pgsql-password <pw>', 'sysbench style: PostgreSQL password'),
    opt('--pgsql-db <db>', 'sysbench style: PostgreSQL database', 'sbtest'),
  ]) {
    cmd.addOption(o);
  }
  return cmd;
}

/** Add `--rate`, `--rate-shape`, `--rate-max-lag`, `--rate-late-ms` and `--percentile` to `run`. */
// biome-ignore lint/suspicious/noExplicitAny: see above
export function addSysbenchRunOptions<C extends Command<any, any, any>>(cmd: C): C {
  cmd.addOption(
    helpDefault(
      new Option(
        '--rate <n>',
        'open loop: start N events per second in total, at the times --rate-shape draws; 0 is the closed loop',
      ).argParser((v: string) => {
        const n = Number(v);
        if (v.trim() === '' || !Number.isFinite(n) || n < 0) {
          throw new UsageError(`--rate expects a number of events per second, got '${v}'`);
        }
        return n;
      }),
      '0',
    ),
  );
  cmd.addOption(
    new Option('--rate-shape <shape>', 'arrivals under --rate: poisson (as sysbench) or constant (as wrk2)')
      .choices(['poisson', 'constant'])
      .default('poisson'),
  );
  cmd.addOption(
    new Option(
      '--rate-max-lag <s>',
      'stop the run when an event starts S seconds behind its schedule (off when not given: a stall is measured and reported)',
    ).argParser(seconds('--rate-max-lag', false)),
  );
  cmd.addOption(
    new Option('--rate-late-ms <ms>', 'count an event late when it starts more than MS after its schedule')
      .argParser(seconds('--rate-late-ms'))
      .default(1),
  );
  cmd.addOption(
    helpDefault(
      new Option(
        '--percentile <p>',
        'latency percentile for the sysbench report and intervals (1-100, 0 = off)',
      ).argParser((v: string) => {
        const n = Number(v);
        if (v.trim() === '' || !Number.isFinite(n) || n < 0 || n > 100) {
          throw new UsageError(`--percentile expects a number from 0 to 100, got '${v}'`);
        }
        return n;
      }),
      '95',
    ),
  );
  return cmd;
}

/** The `--db` URL that sysbench-style connection options describe, or undefined when none was given. */
export function sysbenchDbUrl(o: SysbenchDbOptions): string | undefined {
  const mysqlGiven = [o.mysqlHost, o.mysqlPort, o.mysqlSocket, o.mysqlUser, o.mysqlPassword, o.mysqlDb].some(
    (v) => v !== undefined,
  );
  const pgGiven = [o.pgsqlHost, o.pgsqlPort, o.pgsqlUser, o.pgsqlPassword, o.pgsqlDb].some(
    (v) => v !== undefined,
  );
  if (o.dbDriver === undefined && !mysqlGiven && !pgGiven) return undefined;
  const driver = o.dbDriver ?? (pgGiven && !mysqlGiven ? 'pgsql' : 'mysql');
  const enc = encodeURIComponent;
  const first = (v: string | undefined): string | undefined => v?.split(',')[0]?.trim();
  if (driver === 'mysql') {
    registerSecret(o.mysqlPassword);
    const auth = `${enc(o.mysqlUser ?? 'sbtest')}${o.mysqlPassword ? `:${enc(o.mysqlPassword)}` : ''}`;
    const host = first(o.mysqlHost) ?? 'localhost';
    const port = first(o.mysqlPort) ?? '3306';
    const socket = first(o.mysqlSocket);
    return `mysql://${auth}@${host}:${port}/${enc(o.mysqlDb ?? 'sbtest')}${socket ? `?socket=${enc(socket)}` : ''}`;
  }
  if (driver === 'pgsql') {
    registerSecret(o.pgsqlPassword);
    const auth = `${enc(o.pgsqlUser ?? 'sbtest')}${o.pgsqlPassword ? `:${enc(o.pgsqlPassword)}` : ''}`;
    return `postgres://${auth}@${o.pgsqlHost ?? 'localhost'}:${o.pgsqlPort ?? '5432'}/${enc(o.pgsqlDb ?? 'sbtest')}`;
  }
  throw new UsageError(`--db-driver must be mysql or pgsql, got '${driver}'`, 'or give --db URL');
}

/**
 * The open-loop plan of `--rate` (undefined for 0 or absent: the closed loop). `--rate-stages` makes a run
 * open-loop too: it starts at `--rate` when given, else at its first stage's rate.
 */
export function ratePlan(o: SysbenchRunOptions, stages?: readonly StagePlan[]): RatePlan | undefined {
  const perSec = stages !== undefined && !o.rate ? (stages[0]?.rate ?? 0) : o.rate;
  if (perSec === undefined || (perSec === 0 && stages === undefined)) return undefined;
  return {
    perSec,
    shape: o.rateShape === 'constant' ? 'constant' : 'poisson',
    maxLagUs: o.rateMaxLag !== undefined ? o.rateMaxLag * 1e6 : Number.POSITIVE_INFINITY,
    lateUs: o.rateLateMs * 1000,
  };
}
