/**
 * Counts that add up: the intervals of a run sum exactly to its totals (statements, events, reads, writes,
 * others, errors, retries, reconnects), the histograms hold as many values as their counts, and an event of
 * one statement is counted in the same interval as its statement, so that eps equals qps in every interval
 * (it did not: the statement that crossed a boundary was counted before it and its event after it).
 */
import assert from 'node:assert/strict';
import path from 'node:path';
import { test } from 'node:test';
import { decodeHistogram } from '../src/metrics/histogram.ts';
import type { RunResult } from '../src/metrics/run-result.ts';
import { runCli, tmpDir } from './helpers/cli.ts';
import { ownDatabase } from './helpers/own-database.ts';

function checkSums(r: RunResult): void {
  const sum = (f: (p: RunResult['intervals'][number]) => number): number =>
    r.intervals.reduce((a, p) => a + f(p), 0);
  const sb = r.sysbench;
  assert.ok(sb);
  const pairs: [string, number, number][] = [
    ['queries', sum((p) => p.queries), r.totals.queries],
    ['events', sum((p) => p.events), r.totals.events],
    ['errors', sum((p) => p.errors), r.totals.errors],
    ['retries', sum((p) => p.retries), r.totals.retries],
    ['reconnects', sum((p) => p.reconnects), r.totals.reconnects],
    ['reads', sum((p) => p.reads), sb.read],
    ['writes', sum((p) => p.writes), sb.write],
    ['others', sum((p) => p.others), sb.other],
    ['ignored errors', sum((p) => p.ignored_errors ?? 0), sb.ignored_errors],
    ['sysbench total', sb.total, r.totals.queries],
    ['transactions', sb.transactions, r.totals.events],
    ['statement types', Object.values(r.types).reduce((a, t) => a + t.count, 0), r.totals.queries],
    ['client events', r.client_stats.reduce((a, c) => a + c.events, 0), r.totals.events],
    ['client queries', r.client_stats.reduce((a, c) => a + c.queries, 0), r.totals.queries],
  ];
  for (const [what, got, want] of pairs) assert.equal(got, want, what);
  // every count has its values in the histogram
  for (const t of Object.values(r.types)) assert.equal(decodeHistogram(t.histogram).totalCount, t.count);
  assert.equal(decodeHistogram(r.events.histogram).totalCount, r.events.count);
}

/** Ten boundaries a second, so that many statements and events end near one. */
const RUN = ['--threads', '4', '--time', '2', '--report-interval', '0.1', '--format', 'json'];

async function pointSelects(db: string, extra: string[] = []): Promise<RunResult> {
  const r = await runCli(['run', 'oltp_point_select', '--db', db, '--table-size', '1000', ...RUN, ...extra]);
  assert.equal(r.code, 0, r.stderr);
  const res = JSON.parse(r.stdout) as RunResult;
  assert.equal(res.status, 'complete');
  assert.ok(res.intervals.length >= 15, `${res.intervals.length} intervals`);
  return res;
}

function checkOneStatementEvents(res: RunResult): void {
  checkSums(res);
  for (const p of res.intervals) {
    assert.equal(
      p.events,
      p.queries,
      `interval ending at ${p.t} s: ${p.events} events, ${p.queries} queries`,
    );
    assert.equal(p.eps, p.qps);
  }
}

test('sqlite: intervals add up to the totals; one-statement events give eps = qps in every interval', async () => {
  const db = `sqlite:${path.join(tmpDir(), 'sb.sqlite')}`;
  assert.equal((await runCli(['prepare', 'oltp_read_write', '--db', db, '--table-size', '1000'])).code, 0);
  checkOneStatementEvents(await pointSelects(db));
  // warm-up: what ran before the measured part is not in the intervals, nor in the totals
  const warm = await pointSelects(db, ['--warmup', '0.5']);
  checkOneStatementEvents(warm);
  assert.ok((warm.warmup?.events ?? 0) > 0 && warm.warmup?.events === warm.warmup?.queries);
  // statements of many per event: they may straddle a boundary, but every one is counted once
  const rw = await runCli(['run', 'oltp_read_write', '--db', db, '--table-size', '1000', ...RUN]);
  assert.equal(rw.code, 0, rw.stderr);
  checkSums(JSON.parse(rw.stdout) as RunResult);
});

for (const driver of ['mysql', 'postgres'] as const) {
  test(`${driver}: intervals add up to the totals; one-statement events give eps = qps in every interval`, async (t) => {
    const own = await ownDatabase(t, driver, 'intervals');
    if (!own) return;
    const db = own.url;
    assert.equal(
      (await runCli(['prepare', 'oltp_point_select', '--db', db, '--table-size', '1000'])).code,
      0,
    );
    checkOneStatementEvents(await pointSelects(db));
    // sysbench's interval lines then show tps = qps, as sysbench's own do
    const sb = await runCli([
      'run',
      'oltp_point_select',
      '--db',
      db,
      '--table-size',
      '1000',
      '--threads',
      '4',
      '--time',
      '3',
      '--report-interval',
      '1',
      '--format',
      'sysbench',
    ]);
    assert.equal(sb.code, 0, sb.stderr);
    const lines = [...sb.stdout.matchAll(/tps: ([\d.]+) qps: ([\d.]+) /g)];
    assert.ok(lines.length >= 2, sb.stdout);
    for (const m of lines) assert.equal(m[1], m[2], m[0]);
  });
}
