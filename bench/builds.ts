/**
 * Two builds of dbsmack against each other, A B pairs in turn (then B A, so the arm that runs second is not
 * always the same): "does this change cost anything?" for a refactoring or an optimisation.
 *
 *   node --import tsx bench/builds.ts --a /path/to/old/checkout --b . [--workload oltp_point_select]
 *        [--db URL,URL] [--clients 1,8] [--time 8] [--pairs 3] [--table-size 100000]
 *        [--args="--scale 1"] [--env-a K=V,…] [--env-b K=V,…] (with "=": the value starts with a dash)
 *
 * Each checkout must be built (`npm run build`: its bin/dbsmack.js runs dist/). The workload's tables must be
 * there (`dbsmack prepare WORKLOAD --db URL --table-size N`); `--table-size` goes to built-in workloads only,
 * not to a file (a smack file, a pgbench script, a module such as ./bench/pgbench-select.ts), whose own
 * options `--args` gives. For each URL and client count it prints every pair's B/A ratio of queries per
 * second and of client CPU per query, both over the measured part (the RunResult's `totals.qps` and
 * `client_cpu`), of the whole process's CPU per query by the kernel's accounting (start-up included), and of
 * the steady state's (the tool's seconds 4 to T-1, bench/steady.ts; with --time 6 or more), then the median
 * of each ratio. On a shared 2-core machine the pairs differ by 5–15%: only a median well away from 1 over
 * several pairs says something.
 */
import { existsSync } from 'node:fs';
import path from 'node:path';
import { median } from '../src/analysis/stats.ts';
import type { RunResult } from '../src/metrics/run-result.ts';
import { benchArgs, positiveOf, positivesOf } from './args.ts';
import { dbsmackSeconds, steadyUs } from './steady.ts';
import { measuringAlone, timed } from './tools.ts';

const { values } = benchArgs(import.meta.url, {
  options: {
    a: { type: 'string' },
    b: { type: 'string', default: '.' },
    workload: { type: 'string', default: 'oltp_point_select' },
    db: {
      type: 'string',
      default: 'mysql://root@127.0.0.1:3306/dbsmack_perf,postgres://root@127.0.0.1:5432/dbsmack_perf',
    },
    clients: { type: 'string', default: '1,8' },
    // 8 s: the steady-state ratio reads seconds 4 to 7 (it needs 6 or more)
    time: { type: 'string', default: '8' },
    pairs: { type: 'string', default: '3' },
    'table-size': { type: 'string', default: '100000' },
    args: { type: 'string', default: '' },
    'env-a': { type: 'string', default: '' },
    'env-b': { type: 'string', default: '' },
  },
});
if (values.a === undefined) {
  console.error('bench/builds.ts: --a CHECKOUT is needed (the build to compare against)');
  process.exit(2);
}

const CLIENTS = positivesOf(import.meta.url, 'clients', values.clients, true);
const PAIRS = positiveOf(import.meta.url, 'pairs', values.pairs);
const TIME = positiveOf(import.meta.url, 'time', values.time);
/** A file (smack file, pgbench script, module) has no --table-size of its own. */
const builtIn = !/[/\\]|\.(smack|sql|ts|mts|js|mjs|cjs)$/.test(values.workload);
const EXTRA = [
  ...(builtIn ? ['--table-size', values['table-size']] : []),
  ...values.args.split(/\s+/).filter((a) => a !== ''),
];
positiveOf(import.meta.url, 'table-size', values['table-size']);

const envOf = (spec: string): Record<string, string> =>
  Object.fromEntries(
    spec
      .split(',')
      .filter((s) => s.includes('='))
      .map((s) => [s.slice(0, s.indexOf('=')), s.slice(s.indexOf('=') + 1)]),
  );
const armOf = (name: string, dir: string, env: string) => {
  const root = path.resolve(dir);
  return { name, root, bin: path.join(root, 'bin', 'dbsmack.js'), env: envOf(env) };
};
const arms = [armOf('A', values.a, values['env-a']), armOf('B', values.b, values['env-b'])];
// a checkout that is not there, or not built, is said in one line before any run (not as a failed run's trace)
for (const a of arms) {
  if (!existsSync(a.bin) || !existsSync(path.join(a.root, 'dist'))) {
    console.error(
      `bench/builds.ts: --${a.name.toLowerCase()} ${a.root} is not a built dbsmack checkout ` +
        '(bin/dbsmack.js and dist/ are needed: npm run build in it)',
    );
    process.exit(2);
  }
}
// one measuring script at a time on this machine (tools.ts)
await measuringAlone();

interface Figures {
  qps: number;
  cpuUs: number;
  wholeUs: number;
  /** The steady state's CPU a query (bench/steady.ts), NaN when the run is too short for it. */
  steadyUs: number;
}

function once(arm: (typeof arms)[number], url: string, clients: number): Figures {
  const r = timed(
    process.execPath,
    [
      arm.bin,
      'run',
      values.workload,
      '--db',
      url,
      ...EXTRA,
      '--clients',
      String(clients),
      '--time',
      values.time,
      '--format',
      'json',
      '--no-history',
    ],
    { ...process.env, ...arm.env },
    true,
  );
  const res = JSON.parse(r.stdout) as RunResult;
  const q = res.totals.queries;
  const cpu = res.client_cpu;
  return {
    qps: res.totals.qps,
    cpuUs: cpu ? (1e6 * (cpu.user_s + cpu.system_s)) / q : Number.NaN,
    wholeUs: (1e6 * r.cpuS) / q,
    steadyUs: steadyUs(r.series, dbsmackSeconds(res.intervals, 'qps'), TIME) ?? Number.NaN,
  };
}

// '-' where a figure is missing (the steady state of a run under 6 s)
const f2 = (v: number): string => (Number.isFinite(v) ? v.toFixed(2) : '-');

console.log(
  `# B/A: B = ${values.b} ${values['env-b']}, A = ${values.a} ${values['env-a']}; ${values.workload}`,
);
console.log(
  'target\tclients\tpair\tA q/s\tB q/s\tq/s B/A\tcpu/q B/A (measured)\tcpu/q B/A (whole)\tcpu/q B/A (steady)',
);
for (const url of values.db.split(',')) {
  for (const clients of CLIENTS) {
    const ratios = {
      qps: [] as number[],
      cpu: [] as number[],
      whole: [] as number[],
      steady: [] as number[],
    };
    for (let i = 0; i < PAIRS; i++) {
      // A B, then B A: the second arm of a pair runs on a machine the first has warmed
      const order = i % 2 === 0 ? arms : [...arms].reverse();
      const got = new Map(order.map((arm) => [arm.name, once(arm, url, clients)]));
      const a = got.get('A') as Figures;
      const b = got.get('B') as Figures;
      ratios.qps.push(b.qps / a.qps);
      ratios.cpu.push(b.cpuUs / a.cpuUs);
      ratios.whole.push(b.wholeUs / a.wholeUs);
      ratios.steady.push(b.steadyUs / a.steadyUs);
      console.log(
        `${url.split(':')[0]}\t${clients}\t${i + 1}${order[0]?.name}\t${Math.round(a.qps)}\t${Math.round(b.qps)}\t` +
          `${f2(b.qps / a.qps)}\t${f2(b.cpuUs / a.cpuUs)}\t${f2(b.wholeUs / a.wholeUs)}\t${f2(b.steadyUs / a.steadyUs)}`,
      );
    }
    console.log(
      `${url.split(':')[0]}\t${clients}\tmedian\t\t\t${f2(median(ratios.qps))}\t${f2(median(ratios.cpu))}\t` +
        `${f2(median(ratios.whole))}\t${f2(median(ratios.steady))}`,
    );
  }
}
