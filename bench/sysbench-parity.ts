/**
 * sysbench parity: runs the real sysbench and dbsmack in turn on the same server, the same tables and the
 * same thread counts, for oltp_read_only and oltp_read_write on MariaDB and PostgreSQL, and prints the
 * queries per second of each and their ratio (dbsmack / sysbench).
 *
 *   npm run build && node --import tsx bench/sysbench-parity.ts [--time S] [--threads 1,4] [--table-size N]
 *        [--mysql URL] [--pg URL] [--only mysql|postgres]
 *
 * The tables are prepared once per server by sysbench and dropped at the end, in a database of the
 * benchmark's own (`dbsmack_parity` by default, created when missing), so that its sbtest1 is nobody else's:
 * not the tests', not bench/peers' (`dbsmack_perf`).
 */
import { spawnSync } from 'node:child_process';
import { parseTarget } from '../src/driver/url.ts';
import { sysbenchDbArgs } from '../test/helpers/sysbench.ts';
import { benchArgs, positiveOf, positivesOf } from './args.ts';
import { dbsmackRunArgs, ensureDatabase, measuringAlone } from './tools.ts';

const { values } = benchArgs(import.meta.url, {
  options: {
    time: { type: 'string', default: '10' },
    threads: { type: 'string', default: '1,4' },
    'table-size': { type: 'string', default: '10000' },
    mysql: { type: 'string', default: 'mysql://root@127.0.0.1:3306/dbsmack_parity' },
    pg: { type: 'string', default: 'postgres://root@127.0.0.1:5432/dbsmack_parity' },
    only: { type: 'string' },
  },
});

const time = values.time as string;
const size = values['table-size'] as string;
const threads = positivesOf(import.meta.url, 'threads', values.threads as string, true);
positiveOf(import.meta.url, 'time', time);
positiveOf(import.meta.url, 'table-size', size);
// one measuring script at a time on this machine (tools.ts)
await measuringAlone();

function sysbench(workload: string, url: string, args: string[], cmd: string): string {
  const r = spawnSync('sysbench', [workload, ...sysbenchDbArgs(parseTarget(url)), ...args, cmd], {
    encoding: 'utf8',
  });
  if (r.status !== 0) throw new Error(`sysbench ${workload} ${cmd} failed:\n${r.stdout}${r.stderr}`);
  return r.stdout;
}

function sysbenchQps(out: string): number {
  const m = /^\s+queries:\s+\d+\s+\(([\d.]+) per sec\.\)$/m.exec(out);
  if (!m) throw new Error(`no qps in sysbench output:\n${out}`);
  return Number(m[1]);
}

function dbsmackQps(workload: string, url: string, n: number): number {
  const r = spawnSync(
    process.execPath,
    dbsmackRunArgs(workload, url, n, Number(time), ['--table-size', size]),
    { encoding: 'utf8' },
  );
  if (r.status !== 0) throw new Error(`dbsmack ${workload} failed:\n${r.stderr}`);
  const res = JSON.parse(r.stdout) as { sysbench: { total: number }; elapsed_s: number };
  return res.sysbench.total / res.elapsed_s;
}

const rows: string[][] = [];
for (const [name, url] of [
  ['mysql', values.mysql as string],
  ['postgres', values.pg as string],
] as const) {
  if (values.only && values.only !== name) continue;
  ensureDatabase(parseTarget(url));
  sysbench('oltp_read_write', url, [`--table-size=${size}`], 'cleanup');
  sysbench('oltp_read_write', url, [`--table-size=${size}`], 'prepare');
  try {
    for (const workload of ['oltp_read_only', 'oltp_read_write']) {
      for (const n of threads) {
        const sb = sysbenchQps(
          sysbench(workload, url, [`--table-size=${size}`, `--threads=${n}`, `--time=${time}`], 'run'),
        );
        const db = dbsmackQps(workload, url, n);
        const row = [name, workload, String(n), sb.toFixed(1), db.toFixed(1), (db / sb).toFixed(2)];
        rows.push(row);
        process.stderr.write(`${row.join('  ')}\n`);
      }
    }
  } finally {
    sysbench('oltp_read_write', url, [], 'cleanup');
  }
}

const header = ['server', 'workload', 'threads', 'sysbench qps', 'dbsmack qps', 'ratio'];
const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? '').length)));
const line = (r: string[]): string =>
  r.map((c, i) => (i < 2 ? c.padEnd(widths[i] ?? 0) : c.padStart(widths[i] ?? 0))).join('  ');
process.stdout.write(`sysbench parity, --time ${time} --table-size ${size}\n${line(header)}\n`);
for (const r of rows) process.stdout.write(`${line(r)}\n`);
