/**
 * Soak: does dbsmack hold 1024 clients, and does its memory stay flat over a long run?
 *
 *   npm run build && node --import tsx bench/soak.ts [--time 600] [--big-time 30] [--big-clients 1024]
 *        [--clients 64] [--db mysql://root@127.0.0.1:3306/dbsmack_perf] [--only big,long]
 *
 * 1. `--big-clients` (1024) clients run oltp_point_select for `--big-time` seconds.
 * 2. `--clients` (64) clients run it for `--time` seconds (default 600: the 10 minutes of the issue).
 *
 * Each run prints the resident memory (VmRSS of the whole dbsmack process, every worker thread included) at
 * the first interval line (clients connected, measuring), at the middle and at the last interval line, and
 * the growth from start to end (target: under 10%), and the lowest RSS in the first and the last fifth of
 * the run: the heap saws up and down between garbage collections, so the floors tell retained memory apart
 * from garbage not yet collected. `--series` prints every sample. The sbtest1 table (100,000 rows) is prepared by
 * sysbench when missing. MariaDB's default max_connections (151) is too low for 1024 clients: the script
 * raises it with SET GLOBAL for the big run only and sets the old value back afterwards. (PostgreSQL's
 * default of 100 would need a server restart, so the big run is meant for MariaDB.)
 */
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { parseTarget } from '../src/driver/url.ts';
import { benchArgs, namesOf, positiveIn } from './args.ts';
import { cliSql, ensureSbtest, measuringAlone } from './tools.ts';

const ROOT = path.resolve(import.meta.dirname, '..');
const BIN = path.join(ROOT, 'bin', 'dbsmack.js');

const { values } = benchArgs(import.meta.url, {
  options: {
    time: { type: 'string', default: '600' },
    'big-time': { type: 'string', default: '30' },
    'big-clients': { type: 'string', default: '1024' },
    clients: { type: 'string', default: '64' },
    db: { type: 'string', default: 'mysql://root@127.0.0.1:3306/dbsmack_perf' },
    only: { type: 'string', default: 'big,long' },
    series: { type: 'boolean', default: false },
  },
});
const URL_ = values.db as string;
const target = parseTarget(URL_);
const only = namesOf(import.meta.url, 'only', values.only as string, ['big', 'long']);
const positive = positiveIn(import.meta.url, values);
const TIME = positive('time');
const BIG_TIME = positive('big-time');
const BIG_CLIENTS = positive('big-clients');
const CLIENTS = positive('clients');
// one measuring script at a time on this machine (tools.ts)
await measuringAlone();

function rssMb(pid: number): number {
  try {
    const m = /^VmRSS:\s+(\d+) kB/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return m ? Number(m[1]) / 1024 : Number.NaN;
  } catch {
    return Number.NaN;
  }
}

interface Soak {
  clients: number;
  seconds: number;
  rss: { t: number; mb: number }[];
  qps: number;
  errors: number;
}

/** Run dbsmack and note its resident memory at every interval line it prints. */
function soak(clients: number, seconds: number): Promise<Soak> {
  return new Promise((resolve, reject) => {
    const child = spawn(
      process.execPath,
      [
        BIN,
        'run',
        'oltp_point_select',
        '--db',
        URL_,
        '--tables',
        '1',
        '--table-size',
        '100000',
        '--threads',
        String(clients),
        '--time',
        String(seconds),
        '--connect-timeout',
        '60',
        '--progress',
        '--format',
        'json',
        '--no-history',
      ],
      { stdio: ['ignore', 'pipe', 'pipe'] },
    );
    const rss: Soak['rss'] = [];
    let out = '';
    let err = '';
    child.stdout.on('data', (d) => {
      out += d;
    });
    child.stderr.on('data', (d: Buffer) => {
      const text = d.toString();
      err += text;
      for (const m of text.matchAll(/^\[ (\d+)s \]/gm)) {
        rss.push({ t: Number(m[1]), mb: rssMb(child.pid as number) });
      }
    });
    child.on('error', reject);
    child.on('close', (code) => {
      if (code !== 0) return reject(new Error(`dbsmack exited with ${code}:\n${err.slice(-2000)}`));
      const r = JSON.parse(out) as { totals: { qps: number; errors: number } };
      resolve({ clients, seconds, rss, qps: r.totals.qps, errors: r.totals.errors });
    });
  });
}

function report(s: Soak): void {
  const pts = s.rss.filter((p) => Number.isFinite(p.mb));
  if (pts.length === 0) {
    console.log(`${s.clients} clients, ${s.seconds} s: no interval lines seen`);
    return;
  }
  const first = pts[0] as { t: number; mb: number };
  const last = pts[pts.length - 1] as { t: number; mb: number };
  const mid = pts.reduce((a, b) => (Math.abs(b.t - s.seconds / 2) < Math.abs(a.t - s.seconds / 2) ? b : a));
  const peak = Math.max(...pts.map((p) => p.mb));
  const growth = ((last.mb - first.mb) / first.mb) * 100;
  // The heap saws up and down between collections; the lowest RSS in the first and last fifth of the run
  // (the floor after a collection) says whether memory is retained, where start and end only say where in a
  // saw tooth the run happened to be.
  const fifth = Math.max(1, Math.floor(pts.length / 5));
  const floorStart = Math.min(...pts.slice(0, fifth).map((p) => p.mb));
  const floorEnd = Math.min(...pts.slice(-fifth).map((p) => p.mb));
  if (values.series) console.log(pts.map((p) => `${p.t}s ${p.mb.toFixed(0)}`).join(', '));
  console.log(
    `${s.clients} clients, ${s.seconds} s: ${s.qps.toFixed(0)} q/s, ${s.errors} errors; RSS MB ` +
      `start (${first.t}s) ${first.mb.toFixed(1)}, middle (${mid.t}s) ${mid.mb.toFixed(1)}, ` +
      `end (${last.t}s) ${last.mb.toFixed(1)}, peak ${peak.toFixed(1)}; growth start→end ${growth.toFixed(1)}%; ` +
      `floor first fifth ${floorStart.toFixed(1)}, last fifth ${floorEnd.toFixed(1)} ` +
      `(${(((floorEnd - floorStart) / floorStart) * 100).toFixed(1)}%)`,
  );
}

ensureSbtest(target, 100_000);
if (only.has('big')) {
  const big = BIG_CLIENTS;
  let restore: string | undefined;
  if (target.driver === 'mysql') {
    const cur = Number(cliSql(target, 'SELECT @@GLOBAL.max_connections', ''));
    if (cur < big + 50) {
      restore = String(cur);
      console.error(`raising max_connections from ${cur} to ${big + 50} for this run (set back afterwards)`);
      cliSql(target, `SET GLOBAL max_connections = ${big + 50}`, '');
    }
  }
  try {
    report(await soak(big, BIG_TIME));
  } finally {
    if (restore !== undefined) cliSql(target, `SET GLOBAL max_connections = ${restore}`, '');
  }
}
if (only.has('long')) report(await soak(CLIENTS, TIME));
