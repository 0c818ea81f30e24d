/**
 * A stall under `--rate` is measured, not a reason to stop: a table lock held by another session for 2 s
 * on PostgreSQL, under oltp_point_select at 200 events/s on 4 clients. By default the schedule is kept and
 * the stall reported; with `--rate-max-lag` the run stops, saying that the server stalled.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { rateStalls } from '../src/analysis/rate-stalls.ts';
import type { IntervalPoint, RunResult } from '../src/metrics/run-result.ts';
import { runCli, startCli } from './helpers/cli.ts';
import { connectTo, needServer, PG_URL } from './helpers/servers.ts';
import { waitForOutput } from './helpers/wait.ts';

/** Hold an exclusive lock on sbtest1 for two seconds (the server times it), from a session of its own. */
async function lockFor2s(target: Parameters<typeof connectTo>[0]): Promise<void> {
  const admin = await connectTo(target);
  try {
    await admin.begin();
    await admin.query('LOCK TABLE sbtest1 IN ACCESS EXCLUSIVE MODE');
    await admin.query('SELECT pg_sleep(2)');
    await admin.commit();
  } finally {
    await admin.close();
  }
}

const RUN = ['run', 'oltp_point_select', '--table-size', '1000', '--rate', '200', '--threads', '4'];

test('rate stalls are told apart: statements in flight (server) or connections idle (client)', () => {
  const iv = (t: number, over: Partial<IntervalPoint>): IntervalPoint => ({
    t,
    dur: 1,
    queries: 200,
    events: 200,
    qps: 200,
    eps: 200,
    p95_ms: 0.5,
    event_p95_ms: 0.5,
    errors: 0,
    retries: 0,
    reconnects: 0,
    reads: 200,
    writes: 0,
    others: 0,
    max_ms: 1,
    rate_late: 0,
    rate_concurrency: 0,
    event_latency_ms: { p50: 0.3, p90: 0.4, p95: 0.5, p99: 0.9, p999: 1, max: 1 },
    ...over,
  });
  const stalled = (after: Partial<IntervalPoint>, during: Partial<IntervalPoint>): RunResult =>
    ({
      clients: 4,
      rate: { target: 200 },
      intervals: [
        iv(1, {}),
        iv(2, {}),
        iv(3, { queries: 0, events: 0, qps: 0, eps: 0, ...during }),
        iv(4, { queries: 0, events: 0, qps: 0, eps: 0, ...during }),
        iv(5, { rate_late: 390, ...after }),
        iv(6, { rate_late: 10 }),
        iv(7, {}),
        iv(8, {}),
      ],
    }) as unknown as RunResult;
  const [server] = rateStalls(
    stalled(
      {
        max_ms: 2000,
        event_latency_ms: { p50: 900, p90: 1800, p95: 1900, p99: 2000, p999: 2000, max: 2010 },
      },
      { rate_concurrency: 4 },
    ),
  );
  assert.ok(server);
  assert.deepEqual(
    [
      server.start_s,
      server.length_s,
      server.delayed,
      server.cause,
      server.max_statement_ms,
      server.max_event_ms,
    ],
    [2, 2, 400, 'server', 2000, 2010],
  );
  assert.match(
    server.reason,
    /^the server stalled \(intervals 2–4 s\): statements were in flight up to 2000 ms \(usually 0.5 ms at p95\)/,
  );
  const [client] = rateStalls(stalled({ max_ms: 1 }, { rate_concurrency: 0 }));
  assert.equal(client?.cause, 'client');
  assert.match(
    client?.reason ?? '',
    /the clients fell behind \(intervals 2–4 s\): statements took their usual time .*0 of 4 connections busy/,
  );
  // closed-loop runs have no rate stalls
  assert.deepEqual(rateStalls({ ...stalled({}, {}), rate: undefined } as unknown as RunResult), []);
});

test('postgres: a 2 s table lock under --rate is measured and reported; --rate-max-lag stops on it', async (t) => {
  const target = await needServer(t, 'postgres');
  if (!target) return;
  const prep = await runCli(['prepare', 'oltp_point_select', '--db', PG_URL, '--table-size', '1000']);
  assert.equal(prep.code, 0, prep.stderr);

  const { child, done } = startCli([
    ...RUN,
    '--db',
    PG_URL,
    '--time',
    '7',
    '--report-interval',
    '0.5',
    '--progress',
    '--no-history',
    '--format',
    'json',
  ]);
  await waitForOutput(child, /\[ 1s \]/, 'the first second of the measured part');
  await lockFor2s(target);
  const r = await done;
  assert.equal(r.code, 0, `the run keeps its schedule through the stall: ${r.stderr}`);
  const res = JSON.parse(r.stdout) as RunResult;
  assert.equal(res.status, 'complete');
  const stalls = res.rate?.stalls ?? [];
  assert.equal(stalls.length, 1, JSON.stringify(res.rate));
  const [s] = stalls;
  assert.ok(s);
  assert.equal(s.cause, 'server', s.reason);
  assert.ok(s.start_s >= 0.5 && s.start_s <= 6, `start ${s.start_s} s`);
  // the lock was held 2 s (timed by the server): a statement caught in it was in flight that long
  assert.ok(s.length_s >= 1.9 && s.length_s <= 4, `length ${s.length_s} s`);
  // the events due while the lock was held started late, and their latency from the schedule shows it
  assert.ok(s.delayed > 0, `${s.delayed} delayed`);
  assert.ok(s.max_statement_ms >= 1000, `statements in flight ${s.max_statement_ms} ms`);
  assert.ok(s.max_event_ms >= s.max_statement_ms, `${s.max_event_ms} vs ${s.max_statement_ms}`);
  assert.ok((res.rate?.lag_ms.max ?? 0) >= 1000, 'the schedule lag shows the stall');
  assert.equal(res.rate?.max_lag_s, undefined, 'no lag limit was asked for');

  // The same stall with stopping on lag asked for: RATE_NOT_KEPT, naming the server, not the clients.
  const stop = startCli([
    ...RUN,
    '--db',
    PG_URL,
    '--time',
    '20',
    '--rate-max-lag',
    '0.5',
    '--progress',
    '--no-history',
  ]);
  await waitForOutput(stop.child, /\[ 1s \]/, 'the first second of the measured part');
  await lockFor2s(target);
  const sr = await stop.done;
  assert.equal(sr.code, 4, sr.stdout + sr.stderr);
  assert.match(
    sr.stdout,
    /RATE_NOT_KEPT: the rate of 200 events\/s could not be kept: an event started [\d.]+ s behind its schedule \(limit --rate-max-lag 0.5 s\); the server stalled: /,
  );
  assert.match(sr.stdout, /the clients were not saturated/);
});
