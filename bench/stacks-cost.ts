/**
 * What `--profile-stacks` and `--count-calls` cost the server: the same run without and with them, in turn
 * (A B A B …, `--repeat` pairs), each the same length, with the window as long as the run so that the whole
 * measured part is recorded. Both arms run with `--profile`, for the CPU time of the run's own server threads
 * (or backends) per query, which a loaded machine disturbs less than throughput. Prints queries/s and server
 * CPU µs per query of each, their ratios per pair and the medians, and the recording's own figures (MB per
 * second of window, switches per second, CPU seconds to decode it after the run).
 * Prints figures; asserts nothing. Needs `npm run build` first, perf, and root.
 *
 *   node --import tsx bench/stacks-cost.ts [--db URL] [--workload oltp_read_only] [--clients 16] [--time 10]
 *     [--repeat 3] [--only stacks,calls] [--calls open_table]
 *
 * The sbtest tables must exist (`dbsmack prepare oltp_read_only --db URL --table-size 10000`).
 */
import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { median } from '../src/analysis/stats.ts';
import type { RunResult } from '../src/metrics/run-result.ts';
import type { CodeProfile } from '../src/report/stacks-text.ts';
import { benchArgs, namesOf, positiveOf } from './args.ts';
import { measuringAlone } from './tools.ts';

const ROOT = path.resolve(import.meta.dirname, '..');
const { values } = benchArgs(import.meta.url, {
  options: {
    db: { type: 'string', default: process.env.DBSMACK_TEST_MYSQL_URL ?? 'mysql://root@127.0.0.1:3306/test' },
    workload: { type: 'string', default: 'oltp_read_only' },
    clients: { type: 'string', default: '16' },
    time: { type: 'string', default: '10' },
    repeat: { type: 'string', default: '3' },
    only: { type: 'string', default: 'stacks,calls' },
    calls: { type: 'string' },
  },
});
const db = values.db as string;
const time = String(positiveOf(import.meta.url, 'time', values.time as string));
const repeat = positiveOf(import.meta.url, 'repeat', values.repeat as string);
const clients = String(positiveOf(import.meta.url, 'clients', values.clients as string));
const only = namesOf(import.meta.url, 'only', values.only as string, ['stacks', 'calls']);
// one measuring script at a time on this machine (tools.ts)
await measuringAlone();
const calls = values.calls ?? (db.startsWith('postgres') ? 'ExecInitIndexScan' : 'open_table');
const base = ['run', values.workload as string, '--db', db, '--clients', clients];
base.push('--time', time, '--profile', '--format', 'json', '--quiet', '--no-history');

const arms: Record<string, string[]> = {
  stacks: ['--profile-stacks', '--stacks-window', time],
  calls: ['--count-calls', calls, '--stacks-window', time],
};

function run(extra: string[]): RunResult & { profile?: CodeProfile } {
  const r = spawnSync(process.execPath, [path.join(ROOT, 'bin', 'dbsmack.js'), ...base, ...extra], {
    encoding: 'utf8',
    maxBuffer: 256 * 1024 * 1024,
  });
  if (r.status !== 0) throw new Error(`dbsmack ${[...base, ...extra].join(' ')}: ${r.stderr}`);
  return JSON.parse(r.stdout) as RunResult & { profile?: CodeProfile };
}

/** CPU µs per query of the run's own connection threads (MariaDB/MySQL) or backends (PostgreSQL). */
function sessionCpu(r: RunResult & { profile?: CodeProfile }): number {
  const t = r.profile?.threads?.threads.filter((x) => x.session) ?? [];
  const cpuS = t.reduce((s, x) => s + (x.cpu_pct / 100) * x.observed_s, 0);
  return r.totals.queries > 0 ? (cpuS * 1e6) / r.totals.queries : Number.NaN;
}

process.stdout.write(`dbsmack ${base.join(' ')}\n${repeat} pairs per arm, without then with\n\n`);
for (const name of only) {
  const extra = arms[name] as string[]; // namesOf let only these names through
  const ratios: number[] = [];
  const cpuRatios: number[] = [];
  for (let i = 0; i < repeat; i++) {
    const a = run([]);
    const b = run(extra);
    const ratio = b.totals.qps / a.totals.qps;
    ratios.push(ratio);
    const ca = sessionCpu(a);
    const cb = sessionCpu(b);
    cpuRatios.push(cb / ca);
    const s = b.profile?.stacks;
    const w = b.profile?.code_window;
    const detail = s
      ? `; ${(s.data_bytes / 1e6 / Math.max(0.001, s.window_s)).toFixed(0)} MB/s of window, ${((s.involuntary + s.voluntary) / Math.max(0.001, s.window_s)).toFixed(0)} switches/s, decode ${s.decode_cpu_s.toFixed(2)} s CPU, ${s.lost} lost`
      : b.profile?.calls
        ? `; ${Object.entries(b.profile.calls)
            .map(([f, n]) => `${f} ${(n / Math.max(0.001, w?.length_s ?? 0)).toFixed(0)}/s`)
            .join(', ')}`
        : '';
    const notes = (b.profile?.notes ?? []).map((n) => n.why).join(' | ');
    process.stdout.write(
      `${name} pair ${i + 1}: without ${a.totals.qps.toFixed(0)} q/s ${ca.toFixed(1)} µs/q, with ${b.totals.qps.toFixed(0)} q/s ${cb.toFixed(1)} µs/q; ratios ${ratio.toFixed(3)} q/s, ${(cb / ca).toFixed(3)} server CPU/query${detail}${notes ? `\n  notes: ${notes}` : ''}\n`,
    );
  }
  process.stdout.write(
    `${name}: median ratio with/without ${median(ratios).toFixed(3)} q/s (min ${Math.min(...ratios).toFixed(3)}, max ${Math.max(...ratios).toFixed(3)}), ${median(cpuRatios).toFixed(3)} server CPU per query (min ${Math.min(...cpuRatios).toFixed(3)}, max ${Math.max(...cpuRatios).toFixed(3)})\n\n`,
  );
}
