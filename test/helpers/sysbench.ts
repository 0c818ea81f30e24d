/** The real sysbench 1.0.20, as the reference the sysbench workloads are checked against. */
import { spawnSync } from 'node:child_process';
import type { TestContext } from 'node:test';
import type { Target } from '../../src/driver/types.ts';
import { need } from './preconditions.ts';

export function sysbenchAvailable(): string | undefined {
  const r = spawnSync('sysbench', ['--version'], { encoding: 'utf8' });
  return r.status === 0 ? r.stdout.trim() : undefined;
}

/** Skip (or fail under CI=true) when sysbench is not installed. */
export function needSysbench(t: TestContext): boolean {
  return need(t, sysbenchAvailable() ? undefined : 'sysbench is not installed (apt-get install sysbench)');
}

/** sysbench's connection options for a dbsmack target. */
export function sysbenchDbArgs(target: Target): string[] {
  if (target.driver === 'mysql') {
    return [
      '--db-driver=mysql',
      `--mysql-host=${target.host ?? '127.0.0.1'}`,
      `--mysql-port=${target.port ?? 3306}`,
      `--mysql-user=${target.user ?? 'root'}`,
      ...(target.password ? [`--mysql-password=${target.password}`] : []),
      `--mysql-db=${target.database ?? 'test'}`,
    ];
  }
  return [
    '--db-driver=pgsql',
    `--pgsql-host=${target.host ?? '127.0.0.1'}`,
    `--pgsql-port=${target.port ?? 5432}`,
    `--pgsql-user=${target.user ?? 'root'}`,
    ...(target.password ? [`--pgsql-password=${target.password}`] : []),
    `--pgsql-db=${target.database ?? 'test'}`,
  ];
}

export interface SysbenchOutput {
  code: number | null;
  stdout: string;
  stderr: string;
}

export function runSysbench(
  workload: string,
  target: Target,
  args: string[],
  command: string,
): SysbenchOutput {
  const r = spawnSync('sysbench', [workload, ...sysbenchDbArgs(target), ...args, command], {
    encoding: 'utf8',
    timeout: 120_000,
  });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

/** The figures of sysbench's final report, parsed as tools that read sysbench's output do. */
export interface SysbenchReport {
  read: number;
  write: number;
  other: number;
  total: number;
  transactions: number;
  ignoredErrors: number;
  reconnects: number;
  events: number;
  latency: { min: number; avg: number; max: number; sum: number; percentile?: number };
  fairnessEvents: number;
}

export function parseSysbenchReport(text: string): SysbenchReport {
  const num = (re: RegExp): number => {
    const m = re.exec(text);
    if (!m) throw new Error(`sysbench report has no ${re}:\n${text}`);
    return Number(m[1]);
  };
  const pct = /^\s+\d+th percentile:\s+([\d.]+)$/m.exec(text);
  return {
    read: num(/^\s+read:\s+(\d+)$/m),
    write: num(/^\s+write:\s+(\d+)$/m),
    other: num(/^\s+other:\s+(\d+)$/m),
    total: num(/^\s+total:\s+(\d+)$/m),
    transactions: num(/^\s+transactions:\s+(\d+)\s+\([\d.]+ per sec\.\)$/m),
    ignoredErrors: num(/^\s+ignored errors:\s+(\d+)\s+\([\d.]+ per sec\.\)$/m),
    reconnects: num(/^\s+reconnects:\s+(\d+)\s+\([\d.]+ per sec\.\)$/m),
    events: num(/^\s+total number of events:\s+(\d+)$/m),
    latency: {
      min: num(/^\s+min:\s+([\d.]+)$/m),
      avg: num(/^\s+avg:\s+([\d.]+)$/m),
      max: num(/^\s+max:\s+([\d.]+)$/m),
      sum: num(/^\s+sum:\s+([\d.]+)$/m),
      ...(pct ? { percentile: Number(pct[1]) } : {}),
    },
    fairnessEvents: num(/^\s+events \(avg\/stddev\):\s+([\d.]+)\/[\d.]+$/m),
  };
}

/** sysbench's --report-interval lines. */
export const SYSBENCH_INTERVAL_LINE =
  /^\[ \d+s \] thds: \d+ tps: \d+\.\d\d qps: \d+\.\d\d \(r\/w\/o: \d+\.\d\d\/\d+\.\d\d\/\d+\.\d\d\) lat \(ms,\d+%\): \d+\.\d\d err\/s: \d+\.\d\d reconn\/s: \d+\.\d\d$/;
