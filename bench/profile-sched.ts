/**
 * The first story of DESIGN.md in small: the same run as a baseline and under a scheduling experiment on the
 * server's threads, both with --profile, printed side by side (throughput, CPU per query, thread statistics,
 * waits). Prints figures; asserts nothing.
 *
 *   node --import tsx bench/profile-sched.ts [--db URL] [--clients N] [--time S] [--workload W] -- EXPERIMENT…
 *   e.g. node --import tsx bench/profile-sched.ts --db postgres://root@127.0.0.1/test -- --server-cpus 0
 *
 * The experiment options are any of --server-nice, --server-policy, --server-priority, --server-cpus. Needs
 * `npm run build` first (it runs bin/dbsmack.js, as a user would).
 */
import { spawnSync } from 'node:child_process';
import path from 'node:path';
import type { RunResult } from '../src/metrics/run-result.ts';
import { renderProfileComparison } from '../src/report/profile.ts';

const ROOT = path.resolve(import.meta.dirname, '..');
const argv = process.argv.slice(2);
const split = argv.indexOf('--');
const own = split < 0 ? argv : argv.slice(0, split);
const experiment = split < 0 ? ['--server-nice', '10'] : argv.slice(split + 1);
const opt = (name: string, def: string): string => {
  const i = own.indexOf(name);
  return i >= 0 ? (own[i + 1] ?? def) : def;
};
const db = opt('--db', process.env.DBSMACK_DB ?? 'postgres://root@127.0.0.1:5432/test');
const base = ['run', opt('--workload', 'select1'), '--db', db, '--clients', opt('--clients', '4')];
base.push('--time', opt('--time', '5'), '--profile', '--format', 'json', '--quiet');

function run(extra: string[]): RunResult {
  const r = spawnSync(process.execPath, [path.join(ROOT, 'bin', 'dbsmack.js'), ...base, ...extra], {
    encoding: 'utf8',
    maxBuffer: 64 * 1024 * 1024,
  });
  if (r.status !== 0) throw new Error(`dbsmack ${[...base, ...extra].join(' ')}: ${r.stderr}`);
  return JSON.parse(r.stdout) as RunResult;
}

const baseline = run([]);
const tried = run(experiment);
process.stdout.write(`dbsmack ${base.join(' ')}\nexperiment: ${experiment.join(' ')}\n\n`);
process.stdout.write(
  renderProfileComparison([
    { label: 'baseline', result: baseline },
    { label: 'experiment', result: tried },
  ]),
);
process.stdout.write(
  `\nratio experiment/baseline: ${(tried.totals.qps / baseline.totals.qps).toFixed(2)} queries/s\n`,
);
