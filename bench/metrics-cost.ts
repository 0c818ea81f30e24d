/**
 * What `--metrics-listen` costs a run: the same run without and with it, in turn (A B, B A, A B …,
 * `--repeat` pairs), on SQLite and on MariaDB. While the B run goes, the benchmark scrapes its /metrics every
 * `--scrape` seconds as Prometheus would. Prints per pair the queries/s and dbsmack's CPU µs per query
 * (`client_cpu` of the RunResult: every thread of the process over the measured part) of each, their
 * ratios with/without, the medians, and the scrapes' size and time. On a machine shared with the server
 * (and others) whole runs differ by ±10% or more, more than the option can cost; so the `feed` arm also
 * times, in this process, what the option adds to dbsmack's main thread: counting one worker's interval
 * snapshot of 11 statement types and a scrape (the engine's merged HDR histograms walked into buckets, the
 * text formatted). Prints figures; asserts nothing. Needs `npm run build` first.
 *
 *   node --import tsx bench/metrics-cost.ts [--time 10] [--threads 4] [--repeat 3] [--scrape 1]
 *     [--only feed,sqlite,mysql] [--mysql URL] [--workload select1]
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { median } from '../src/analysis/stats.ts';
import type { CounterSnapshot } from '../src/engine/protocol.ts';
import { type Histogram, mergingHistogram } from '../src/metrics/histogram.ts';
import type { RunResult } from '../src/metrics/run-result.ts';
import { LiveMetrics } from '../src/report/live-metrics.ts';
import { benchArgs, namesOf, positiveOf } from './args.ts';
import { measuringAlone } from './tools.ts';

const ROOT = path.resolve(import.meta.dirname, '..');
const { values } = benchArgs(import.meta.url, {
  options: {
    time: { type: 'string', default: '10' },
    threads: { type: 'string', default: '4' },
    repeat: { type: 'string', default: '3' },
    scrape: { type: 'string', default: '1' },
    workload: { type: 'string', default: 'select1' },
    only: { type: 'string', default: 'feed,sqlite,mysql' },
    mysql: {
      type: 'string',
      default: process.env.DBSMACK_TEST_MYSQL_URL ?? 'mysql://root@127.0.0.1:3306/test',
    },
  },
});
const time = String(positiveOf(import.meta.url, 'time', values.time as string));
const threads = String(positiveOf(import.meta.url, 'threads', values.threads as string));
const repeat = positiveOf(import.meta.url, 'repeat', values.repeat as string);
const scrapeS = positiveOf(import.meta.url, 'scrape', values.scrape as string);
const workload = values.workload as string;
const only = namesOf(import.meta.url, 'only', values.only as string, ['feed', 'sqlite', 'mysql']);
// one measuring script at a time on this machine (tools.ts)
await measuringAlone();
const dir = mkdtempSync(path.join(os.tmpdir(), 'dbsmack-metrics-cost-'));
const targets: Record<string, string> = {
  sqlite: `sqlite:${path.join(dir, 'bench.sqlite')}`,
  mysql: values.mysql as string,
};

interface Arm {
  result: RunResult;
  scrapes: number;
  bytes: number;
  scrapeMs: number[];
}

/** One run; with `metrics`, scraped every `scrapeS` seconds while it runs. */
function run(db: string, metrics: boolean): Promise<Arm> {
  const args = ['run', workload, '--db', db, '--threads', threads, '--time', time];
  args.push('--format', 'json', '--no-history');
  if (metrics) args.push('--metrics-listen', '127.0.0.1:0');
  const child = spawn(process.execPath, [path.join(ROOT, 'bin', 'dbsmack.js'), ...args], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  const arm = { scrapes: 0, bytes: 0, scrapeMs: [] as number[] };
  let timer: NodeJS.Timeout | undefined;
  child.stdout.on('data', (d: Buffer) => {
    stdout += d.toString();
  });
  child.stderr.on('data', (d: Buffer) => {
    stderr += d.toString();
    const m = /metrics at (http:\/\/\S+)/.exec(stderr);
    if (m && timer === undefined) {
      const url = m[1] as string;
      timer = setInterval(() => {
        const t0 = performance.now();
        fetch(url)
          .then((r) => r.text())
          .then((text) => {
            arm.scrapes++;
            arm.bytes = text.length;
            arm.scrapeMs.push(performance.now() - t0);
          })
          .catch(() => {});
      }, scrapeS * 1000);
    }
  });
  return new Promise((resolve, reject) => {
    child.on('close', (code) => {
      clearInterval(timer);
      if (code !== 0) reject(new Error(`dbsmack ${args.join(' ')} exited ${code}:\n${stderr}`));
      else resolve({ result: JSON.parse(stdout) as RunResult, ...arm });
    });
  });
}

const f = (v: number, d = 0): string => v.toFixed(d);

process.stdout.write(
  `dbsmack run ${workload} --threads ${threads} --time ${time}, without and with --metrics-listen ` +
    `(scraped every ${scrapeS} s), ${repeat} pairs per target\n\n`,
);
/**
 * Main-thread cost of the option, timed here: counting a snapshot (the histograms are only referenced), and
 * a scrape (which walks the engine's merged histograms into buckets and formats the text).
 */
async function feedCost(): Promise<void> {
  const hist = (scaleUs: number): Histogram => {
    // a run's worth of one statement type: log-normal around scaleUs, a tail to seconds
    const h = mergingHistogram();
    for (let i = 0; i < 200_000; i++) h.recordValue(Math.round(scaleUs * Math.exp(1.2 * gauss())));
    for (let i = 0; i < 20; i++) h.recordValue(Math.round(scaleUs * 1000 * (1 + i)));
    return h;
  };
  const names = ['point_selects', 'simple_ranges', 'sum_ranges', 'order_ranges', 'distinct_ranges'];
  names.push('index_updates', 'non_index_updates', 'deletes', 'inserts', 'begin', 'commit');
  const snap: CounterSnapshot = {
    types: names.map((name) => ({ name, kind: 'read', count: 20_000, errors: 0 })),
    events: 1000,
    errors: [],
    retries: 0,
    reconnects: 0,
  };
  const totals = {
    types: new Map(names.map((name, i) => [name, { hist: hist(80 + 40 * i) }])),
    events: { hist: hist(3000) },
  };
  const m = new LiveMetrics({ workload: 'oltp_read_write', target: 'mysql://root@127.0.0.1:3306/sbtest' });
  const n = 2000;
  let t0 = performance.now();
  for (let i = 0; i < n; i++) m.snapshot(snap, i % 4, totals);
  const feedUs = ((performance.now() - t0) * 1000) / n;
  let bytes = 0;
  t0 = performance.now();
  for (let i = 0; i < n / 10; i++) bytes = (await m.text()).length;
  const scrapeUs = ((performance.now() - t0) * 1000) / (n / 10);
  const perSecond = (Number(threads) * feedUs + scrapeUs / scrapeS) / 1000;
  process.stdout.write(
    `feed: one interval snapshot of 11 statement types + events ${f(feedUs, 1)} µs; a scrape (${bytes} bytes) ` +
      `${f(scrapeUs)} µs; with ${threads} workers, 1 s intervals and a scrape every ${scrapeS} s: ` +
      `${f(perSecond, 2)} ms of main-thread CPU per second (${f(perSecond / 10, 3)}% of a core)\n\n`,
  );
}

/** A standard normal draw (Box–Muller). */
function gauss(): number {
  return Math.sqrt(-2 * Math.log(1 - Math.random())) * Math.cos(2 * Math.PI * Math.random());
}

try {
  for (const name of only) {
    if (name === 'feed') {
      await feedCost();
      continue;
    }
    const db = targets[name] as string; // namesOf let only these names through
    const qpsRatios: number[] = [];
    const cpuRatios: number[] = [];
    for (let i = 0; i < repeat; i++) {
      // A B, then B A: a run that always goes second (a warmer server, a calmer machine) would bias the ratio
      const withFirst = i % 2 === 1;
      const first = await run(db, withFirst);
      const second = await run(db, !withFirst);
      const [a, b] = withFirst ? [second, first] : [first, second];
      const qa = a.result.totals.qps;
      const qb = b.result.totals.qps;
      const ca = a.result.client_cpu.us_per_query;
      const cb = b.result.client_cpu.us_per_query;
      qpsRatios.push(qb / qa);
      cpuRatios.push(cb / ca);
      process.stdout.write(
        `${name} pair ${i + 1}${withFirst ? ' (with first)' : ''}: without ${f(qa)} q/s ${f(ca, 2)} µs/q, with ${f(qb)} q/s ${f(cb, 2)} µs/q; ` +
          `ratios ${f(qb / qa, 3)} q/s, ${f(cb / ca, 3)} CPU/query; ${b.scrapes} scrapes of ${b.bytes} bytes, ` +
          `median ${f(median(b.scrapeMs), 1)} ms\n`,
      );
    }
    process.stdout.write(
      `${name}: median ratio with/without ${f(median(qpsRatios), 3)} q/s (min ${f(Math.min(...qpsRatios), 3)}, ` +
        `max ${f(Math.max(...qpsRatios), 3)}), ${f(median(cpuRatios), 3)} CPU per query ` +
        `(min ${f(Math.min(...cpuRatios), 3)}, max ${f(Math.max(...cpuRatios), 3)})\n\n`,
    );
  }
} finally {
  rmSync(dir, { recursive: true, force: true });
}
