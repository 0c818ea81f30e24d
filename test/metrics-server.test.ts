/**
 * `--metrics-listen`: the exposition text a scraper gets from a running dbsmack (counters that grow, the
 * run's labels without secrets, histograms), the listener's life (closed after the run, kept with
 * `--metrics-linger`), and the errors before a run (unparsable address, port in use: exit 2 before any
 * connection). test/metrics-prometheus.test.ts scrapes a run with a real Prometheus.
 */
import assert from 'node:assert/strict';
import net from 'node:net';
import { test } from 'node:test';
import { parseListenAddress } from '../src/cli/metrics-options.ts';
import { registerSecret } from '../src/driver/redact.ts';
import { parseTarget } from '../src/driver/url.ts';
import { UsageError } from '../src/errors.ts';
import {
  decodeHistogram,
  encodeHistogram,
  forEachRecorded,
  histogramOf,
  mergingHistogram,
  recordingHistogram,
} from '../src/metrics/histogram.ts';
import { BucketHistogram, LATENCY_BUCKETS_S, LiveMetrics, runLabels } from '../src/report/live-metrics.ts';
import { startCli } from './helpers/cli.ts';
import { waitFor, waitForOutput } from './helpers/wait.ts';

/** The value of the first sample of `name` whose line matches `labels`, or undefined. */
function sample(text: string, name: string, labels: RegExp = /.*/): number | undefined {
  for (const line of text.split('\n')) {
    if (!line.startsWith(`${name}{`) && !line.startsWith(`${name} `)) continue;
    if (!labels.test(line)) continue;
    return Number(line.slice(line.lastIndexOf(' ') + 1));
  }
  return undefined;
}

async function scrape(url: string): Promise<{ status: number; type: string; text: string }> {
  const r = await fetch(url);
  return { status: r.status, type: r.headers.get('content-type') ?? '', text: await r.text() };
}

/** A local port nothing listens on now, and a server holding another one. */
function listen(onConnection: () => void = () => {}): Promise<net.Server> {
  return new Promise((resolve) => {
    const s = net.createServer((c) => {
      onConnection();
      c.destroy();
    });
    s.listen(0, '127.0.0.1', () => resolve(s));
  });
}
const portOf = (s: net.Server): number => (s.address() as net.AddressInfo).port;

test('the run labels carry the target and the label without their passwords', () => {
  const t = parseTarget('mysql://bob:Sw0rdfish-42@db.example:3306/shop');
  const l = runLabels('oltp_read_only', t, 'nightly mysql://eve:Hunter2-xyz@other/db');
  assert.equal(l.workload, 'oltp_read_only');
  assert.equal(l.target, 'mysql://bob:***@db.example:3306/shop');
  assert.equal(l.label, 'nightly mysql://eve:***@other/db');
  // a password the process has learned is masked wherever it shows, in a label too
  registerSecret('Pl41n-s3cret');
  assert.equal(runLabels('w', t, 'with Pl41n-s3cret inside').label, 'with *** inside');
  assert.equal(runLabels('w', t).label, undefined);
});

test('--metrics-listen addresses: HOST:PORT, [IPv6]:PORT, :PORT; anything else is a usage error', () => {
  assert.deepEqual(parseListenAddress('127.0.0.1:9464'), {
    host: '127.0.0.1',
    port: 9464,
    text: '127.0.0.1:9464',
  });
  assert.deepEqual(parseListenAddress('localhost:0'), { host: 'localhost', port: 0, text: 'localhost:0' });
  assert.deepEqual(parseListenAddress('[::1]:9464'), { host: '::1', port: 9464, text: '[::1]:9464' });
  assert.deepEqual(parseListenAddress(':9464'), { host: undefined, port: 9464, text: ':9464' });
  for (const bad of ['9464', 'localhost', 'host:', 'host:65536', 'host:12x', '::1:9464', 'a b:1', '']) {
    assert.throws(() => parseListenAddress(bad), UsageError, bad);
  }
});

test('HDR histograms fill the Prometheus buckets: cumulative counts, +Inf, _sum and _count; runs add up', async () => {
  const h = new BucketHistogram('x_seconds', 'x', LATENCY_BUCKETS_S);
  const run1 = mergingHistogram();
  for (const us of [40, 40, 50, 150]) run1.recordValue(us);
  h.track({ statement: 'a' }, run1);
  // the engine goes on merging into the same histogram: a scrape reads what it holds then
  run1.recordValue(150);
  run1.recordValue(3_000_000);
  h.fold(); // the run ended (a sweep's next run follows)
  const run2 = mergingHistogram();
  run2.recordValue(20_000_000); // above the highest bound: +Inf only
  h.track({ statement: 'a' }, run2);
  const got = await h.get();
  const bucket = (le: string): number | undefined =>
    got.values.find((v) => v.metricName === 'x_seconds_bucket' && v.labels.le === le)?.value;
  assert.equal(bucket('0.00005'), 3, '40, 40 and 50 µs are at most 50 µs');
  assert.equal(bucket('0.0001'), 3);
  assert.equal(bucket('0.0002'), 5);
  assert.equal(bucket('2'), 5);
  assert.equal(bucket('5'), 6);
  assert.equal(bucket('10'), 6);
  assert.equal(bucket('+Inf'), 7);
  assert.equal(
    got.values.filter((v) => v.metricName === 'x_seconds_bucket').length,
    LATENCY_BUCKETS_S.length + 1,
  );
  const sum = got.values.find((v) => v.metricName === 'x_seconds_sum')?.value ?? 0;
  assert.ok(Math.abs(sum - 23.00043) < 0.03, `sum ${sum}`);
  assert.equal(got.values.find((v) => v.metricName === 'x_seconds_count')?.value, 7);
});

test('the walk over recorded values visits every value, decoded or merged, zero and the maximum too', async () => {
  const rec = recordingHistogram();
  for (const us of [0, 1, 7, 2047, 2048, 99_999, 3_599_999_999]) rec.recordValue(us);
  const decoded = decodeHistogram(encodeHistogram(histogramOf(rec.counts())));
  const merged = mergingHistogram();
  merged.add(decoded);
  for (const h of [decoded, merged]) {
    const seen: number[] = [];
    forEachRecorded(h, (lo, _mid, c) => {
      for (let i = 0; i < c; i++) seen.push(lo);
    });
    assert.equal(seen.length, 7);
    assert.equal(seen[0], 0);
    assert.ok((seen[6] as number) > 3_590_000_000);
  }
});

test('LiveMetrics counts snapshots, reads the totals, and formats them with the run labels', async () => {
  const m = new LiveMetrics({ workload: 'w', target: 'sqlite:x.db', label: 'say "hi"' });
  const snap = {
    types: [{ name: 'point_selects', kind: 'read' as const, count: 3, errors: 1 }],
    events: 2,
    errors: [{ code: '1213', kind: 'retryable' as const, count: 1, ignored: false, message: 'deadlock' }],
    retries: 1,
    reconnects: 0,
  };
  const stmt = mergingHistogram();
  const events = mergingHistogram();
  const totals = { types: new Map([['point_selects', { hist: stmt }]]), events: { hist: events } };
  stmt.recordValue(120);
  events.recordValue(120);
  m.snapshot(snap, 0, totals);
  stmt.recordValue(130);
  events.recordValue(130);
  m.snapshot(snap, 1, totals);
  m.phase('measuring');
  const text = await m.text();
  // the label's quotes escaped as the exposition format wants them
  const line =
    'dbsmack_statements_total{statement="point_selects",kind="read",workload="w",target="sqlite:x.db",label="say \\"hi\\""} 6';
  assert.ok(text.split('\n').includes(line), text);
  assert.match(text, /^# TYPE dbsmack_statement_latency_seconds histogram$/m);
  assert.equal(sample(text, 'dbsmack_statement_latency_seconds_bucket', /le="0.0002"/), 2);
  assert.equal(sample(text, 'dbsmack_statement_latency_seconds_bucket', /le="0.0001"/), 0);
  assert.equal(sample(text, 'dbsmack_event_latency_seconds_count'), 2);
  assert.equal(sample(text, 'dbsmack_errors_total', /code="1213",kind="retryable"/), 2);
  assert.equal(sample(text, 'dbsmack_statement_errors_total'), 2);
  assert.equal(sample(text, 'dbsmack_events_total'), 4);
  assert.equal(sample(text, 'dbsmack_retries_total'), 2);
  assert.equal(sample(text, 'dbsmack_run_phase', /phase="measuring"/), 1);
  assert.equal(sample(text, 'dbsmack_run_phase', /phase="setup"/), 0);
});

test('a running dbsmack serves /metrics: counters grow, labels without secrets; closed after the run', async () => {
  const label = 'metrics-test mysql://bob:Sw0rdfish-42@db.example/x';
  const { child, done } = startCli([
    'run',
    'select1',
    '--clients',
    '2',
    '--time',
    '6',
    '--metrics-listen',
    '127.0.0.1:0',
    '--label',
    label,
    '--format',
    'json',
    '--no-history',
  ]);
  const [, url] = await waitForOutput(
    child,
    /metrics at (http:\/\/127\.0\.0\.1:\d+\/metrics)/,
    'the metrics URL',
  );
  assert.ok(url);
  const first = await waitFor('a scrape that counts statements', async () => {
    const s = await scrape(url);
    const n = sample(s.text, 'dbsmack_statements_total', /statement="select1"/);
    return n !== undefined && n > 0 ? { s, n } : undefined;
  });
  assert.equal(first.s.status, 200);
  assert.match(first.s.type, /^text\/plain; version=0\.0\.4/);
  const text = first.s.text;
  for (const name of [
    'dbsmack_statements_total',
    'dbsmack_events_total',
    'dbsmack_errors_total',
    'dbsmack_reconnects_total',
    'dbsmack_statement_latency_seconds',
    'dbsmack_event_latency_seconds',
  ]) {
    assert.match(text, new RegExp(`^# TYPE ${name} (counter|histogram)$`, 'm'), name);
  }
  assert.match(text, /^# TYPE dbsmack_clients gauge$/m);
  assert.equal(sample(text, 'dbsmack_clients'), 2);
  assert.equal(sample(text, 'dbsmack_run_phase', /phase="measuring"/), 1);
  const labels =
    /workload="select1",target="sqlite:\.\/dbsmack\.sqlite",label="metrics-test mysql:\/\/bob:\*\*\*@db\.example\/x"/;
  assert.match(
    text,
    new RegExp(`^dbsmack_statements_total\\{statement="select1",kind="read",${labels.source}\\} \\d+$`, 'm'),
  );
  assert.doesNotMatch(text, /Sw0rdfish/);
  assert.ok(
    (sample(text, 'dbsmack_statement_latency_seconds_bucket', /le="\+Inf"/) ?? 0) > 0,
    'buckets filled',
  );
  await waitFor('the statement counter to grow', async () => {
    const n = sample((await scrape(url)).text, 'dbsmack_statements_total', /statement="select1"/);
    return n !== undefined && n > first.n;
  });
  const r = await done;
  assert.equal(r.code, 0, r.stderr);
  assert.doesNotMatch(r.stdout, /"metrics"/, 'nothing of the metrics goes into the RunResult');
  // no --metrics-linger: the listener is gone with the run
  await assert.rejects(fetch(url));
});

test('--metrics-linger keeps the final values for a last scrape, phase done; sweep serves its runs', async () => {
  const { child, done } = startCli([
    'sweep',
    'select1',
    '--clients',
    '1,2',
    '--repeat',
    '1',
    '--time',
    '1',
    '--metrics-listen',
    '127.0.0.1:0',
    '--metrics-linger',
    '30',
    '--no-history',
  ]);
  const [, url] = await waitForOutput(
    child,
    /metrics at (http:\/\/127\.0\.0\.1:\d+\/metrics)/,
    'the metrics URL',
  );
  assert.ok(url);
  await waitForOutput(child, /serving the final metrics at .* for 30 s/, 'the linger message', {
    timeoutMs: 60_000,
  });
  const { text } = await scrape(url);
  assert.equal(sample(text, 'dbsmack_run_phase', /phase="done"/), 1);
  assert.equal(sample(text, 'dbsmack_clients'), 0);
  assert.ok((sample(text, 'dbsmack_statements_total', /statement="select1"/) ?? 0) > 0);
  assert.match(text, /label="select1-\d{8}-\d{6}"/, "the sweep's label");
  // a signal ends the linger early; the exit code is the sweep's
  child.kill('SIGINT');
  const r = await done;
  assert.equal(r.code, 0, r.stderr);
  await assert.rejects(fetch(url));
});

test('a port in use is a usage error before the run connects anywhere; so is a bad address', async () => {
  let connections = 0;
  const server = await listen(() => connections++); // stands where the database would be
  const busy = await listen();
  try {
    const r = await startCli([
      'run',
      'select1',
      '--db',
      `mysql://root@127.0.0.1:${portOf(server)}/test`,
      '--metrics-listen',
      `127.0.0.1:${portOf(busy)}`,
    ]).done;
    assert.equal(r.code, 2, r.stderr);
    assert.match(
      r.stderr,
      new RegExp(`--metrics-listen 127\\.0\\.0\\.1:${portOf(busy)}: port ${portOf(busy)} is in use`),
    );
    assert.match(r.stderr, /hint: choose another port/);
    assert.equal(connections, 0, 'nothing connected to the database');
    assert.doesNotMatch(r.stderr, /internal error/);

    const bad = await startCli(['run', 'select1', '--metrics-listen', 'localhost']).done;
    assert.equal(bad.code, 2, bad.stderr);
    assert.match(bad.stderr, /--metrics-listen expects HOST:PORT, got 'localhost'/);

    const linger = await startCli(['run', 'select1', '--metrics-linger', '5']).done;
    assert.equal(linger.code, 2, linger.stderr);
    assert.match(linger.stderr, /--metrics-linger goes with --metrics-listen/);
  } finally {
    server.close();
    busy.close();
  }
});
