/**
 * A real Prometheus (Debian's `prometheus` package) scrapes a running dbsmack: the test starts its own
 * Prometheus server with a scrape configuration in a temporary directory (scrape interval 1 s, its own
 * ports, its own TSDB directory; never the system service), runs dbsmack with `--metrics-listen`, and asks
 * Prometheus's HTTP API whether the statement counters grow and the latency histograms fill, with the
 * README's p99 query. Without prometheus the test is skipped with the reason (it fails under CI=true).
 */
import assert from 'node:assert/strict';
import { type ChildProcess, spawn } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { after, test } from 'node:test';
import { startCli, tmpDir } from './helpers/cli.ts';
import { needCommand } from './helpers/preconditions.ts';
import { MYSQL_URL, needServer } from './helpers/servers.ts';
import { waitFor, waitForOutput } from './helpers/wait.ts';

/** A port nothing listens on at this moment (Prometheus cannot be told to take any free port and say which). */
function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = net.createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address() as net.AddressInfo;
      s.close(() => resolve(port));
    });
  });
}

const children: ChildProcess[] = [];
after(async () => {
  for (const c of children) {
    if (c.exitCode !== null || c.signalCode !== null) continue;
    c.kill('SIGTERM');
    await waitFor('a child of the test to exit', () => c.exitCode !== null || c.signalCode !== null, {
      timeoutMs: 15_000,
    }).catch(() => c.kill('SIGKILL'));
  }
});

interface PromSample {
  metric: Record<string, string>;
  value: [number, string];
}

/** An instant query through Prometheus's HTTP API. */
async function query(base: string, promql: string): Promise<PromSample[]> {
  const r = await fetch(`${base}/api/v1/query?query=${encodeURIComponent(promql)}`);
  const body = (await r.json()) as { status: string; error?: string; data?: { result: PromSample[] } };
  if (body.status !== 'success') throw new Error(`${promql}: ${body.error ?? r.status}`);
  return body.data?.result ?? [];
}

/** Start a Prometheus of the test's own that scrapes `target` (HOST:PORT) every second. */
async function startPrometheus(target: string): Promise<{ base: string; log: () => string }> {
  const dir = tmpDir('dbsmack-prometheus-');
  const config = path.join(dir, 'prometheus.yml');
  writeFileSync(
    config,
    [
      'global:',
      '  scrape_interval: 1s',
      '  scrape_timeout: 1s',
      'scrape_configs:',
      '  - job_name: dbsmack',
      '    static_configs:',
      `      - targets: ['${target}']`,
      '',
    ].join('\n'),
  );
  const port = await freePort();
  const child = spawn(
    'prometheus',
    [
      `--config.file=${config}`,
      `--storage.tsdb.path=${path.join(dir, 'data')}`,
      `--web.listen-address=127.0.0.1:${port}`,
      '--log.level=warn',
    ],
    { cwd: dir, stdio: ['ignore', 'pipe', 'pipe'] },
  );
  children.push(child);
  let log = '';
  child.stdout?.on('data', (d: Buffer) => {
    log += d.toString();
  });
  child.stderr?.on('data', (d: Buffer) => {
    log += d.toString();
  });
  const base = `http://127.0.0.1:${port}`;
  await waitFor(
    'prometheus to be ready',
    async () => {
      if (child.exitCode !== null) throw new Error(`prometheus exited (${child.exitCode}):\n${log}`);
      return (await fetch(`${base}/-/ready`)).ok;
    },
    { timeoutMs: 30_000, everyMs: 200 },
  );
  return { base, log: () => log };
}

async function scrapedRun(db: string | undefined, statement: RegExp): Promise<void> {
  // Long enough for Prometheus to start and find its target (its discovery passes targets on every 5 s);
  // the test stops the run with SIGINT once it has seen what it looks for.
  const args = ['run', 'select1', '--clients', '2', '--time', '60', '--metrics-listen', '127.0.0.1:0'];
  if (db !== undefined) args.push('--db', db);
  const { child, done } = startCli([...args, '--label', 'prom-test', '--no-history']);
  children.push(child);
  const [, target] = await waitForOutput(child, /metrics at http:\/\/(127\.0\.0\.1:\d+)\/metrics/, 'the URL');
  assert.ok(target);
  const prom = await startPrometheus(target);
  const bound = { timeoutMs: 45_000, everyMs: 250 };
  try {
    const up = await waitFor(
      'Prometheus to scrape dbsmack',
      async () => (await query(prom.base, 'up{job="dbsmack"} == 1')).length > 0,
      bound,
    );
    assert.ok(up);
    const total = 'sum(dbsmack_statements_total{workload="select1",label="prom-test"})';
    const first = await waitFor(
      'a scraped statement count',
      async () => {
        const v = Number((await query(prom.base, total))[0]?.value[1] ?? 0);
        return v > 0 ? v : undefined;
      },
      bound,
    );
    await waitFor(
      'the scraped statement count to grow',
      async () => Number((await query(prom.base, total))[0]?.value[1] ?? 0) > first,
      bound,
    );
    // the README's query: p99 per statement type from the histogram buckets
    const p99 = await waitFor(
      'histogram_quantile over the latency buckets',
      async () => {
        const r = await query(
          prom.base,
          'histogram_quantile(0.99, sum by (le, statement) (rate(dbsmack_statement_latency_seconds_bucket[5s])))',
        );
        return r.find((s) => statement.test(s.metric.statement ?? '') && Number.isFinite(Number(s.value[1])));
      },
      bound,
    );
    const seconds = Number(p99.value[1]);
    assert.ok(seconds > 0 && seconds <= 10, `p99 ${seconds} s`);
    // every bucket is a series, and the buckets hold what was counted
    const buckets = await query(prom.base, 'dbsmack_statement_latency_seconds_bucket{statement="select1"}');
    assert.equal(buckets.length, 18, 'buckets from 50 µs to 10 s and +Inf');
    const inf = Number(buckets.find((b) => b.metric.le === '+Inf')?.value[1]);
    assert.ok(inf > 0, 'the histogram filled');
    const increase = await query(prom.base, 'sum(increase(dbsmack_statement_latency_seconds_count[5s]))');
    assert.ok(Number(increase[0]?.value[1]) > 0, 'the histogram grows');
    const clients = await query(prom.base, 'dbsmack_clients');
    assert.equal(clients[0]?.metric.workload, 'select1');
    assert.equal(Number(clients[0]?.value[1]), 2);
  } catch (e) {
    throw new Error(`${(e as Error).message}\nprometheus log:\n${prom.log()}`);
  } finally {
    child.kill('SIGINT');
  }
  const r = await done;
  assert.equal(r.code, 130, r.stderr);
}

test('Prometheus scrapes a SQLite run: the counters grow and the histograms fill', async (t) => {
  if (!needCommand(t, 'prometheus', ['--version'], 'apt-get install prometheus')) return;
  await scrapedRun(undefined, /^select1$/);
});

test('Prometheus scrapes a MariaDB run: the counters grow and the histograms fill', async (t) => {
  if (!needCommand(t, 'prometheus', ['--version'], 'apt-get install prometheus')) return;
  if (!(await needServer(t, 'mysql'))) return;
  await scrapedRun(MYSQL_URL, /^select1$/);
});
