import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import Database from 'better-sqlite3';
import { buildSweep, summarizeRun } from '../src/analysis/sweep-build.ts';
import type { RunResult } from '../src/metrics/run-result.ts';
import { History, HistoryError } from '../src/store/history.ts';
import { tmpDir } from './helpers/cli.ts';

function fakeRun(clients: number, qps: number, label = 'l'): RunResult {
  const lat = { min: 0.1, mean: 1, p50: 1, p90: 1.5, p95: 2, p99: 3, p999: 4, max: 5, stddev: 0.5 };
  return {
    schema: 'dbsmack/run@1',
    status: 'complete',
    workload: { name: 'select1', ref: 'select1', options: { prepared: true }, args: [] },
    target: { driver: 'sqlite', url: 'sqlite:x', server_version: 'SQLite 3' },
    label,
    clients,
    workers: clients,
    started_at: new Date().toISOString(),
    elapsed_s: 1,
    limits: { events: 100, warmup_s: 0, report_interval_s: 1 },
    totals: { queries: qps, events: qps, errors: 0, retries: 0, reconnects: 0, qps, eps: qps },
    events: { count: qps, latency_ms: lat, histogram: '' },
    types: {},
    connect_ms: { min: 0, mean: 0, max: 0, count: 0 },
    intervals: [],
    errors: [],
    client_stats: [],
    client_cpu: { user_s: 0, system_s: 0, us_per_query: 0 },
    env: {
      host: 'h',
      os: 'o',
      kernel: 'k',
      arch: 'x',
      cpu_model: 'c',
      cpu_count: 2,
      memory_gb: 1,
      node: 'v20',
      dbsmack: '0',
    },
    server: { version: 'SQLite 3', settings: { journal_mode: 'wal' } },
  };
}

test('runs and sweeps go in and come out whole', () => {
  const file = path.join(tmpDir(), 'sub', 'h.sqlite');
  const h = History.open(file, { create: true });
  const id = h.addRun(fakeRun(1, 500, 'solo'));
  assert.equal(h.run(id)?.totals.qps, 500);
  assert.equal(h.run(id)?.server?.settings.journal_mode, 'wal');
  const runs = [fakeRun(1, 100, 'sw'), fakeRun(1, 110, 'sw'), fakeRun(2, 200, 'sw')];
  const done: { clients: number; run: ReturnType<typeof summarizeRun> }[] = [];
  let sweepId: number | undefined;
  for (const [i, r] of runs.entries()) {
    done.push({ clients: r.clients, run: summarizeRun(r, i === 1 ? 2 : 1) });
    const doc = buildSweep(
      { label: 'sw', repeat: 2, clients: [1, 2], started_at: 'now', finished: i === 2 },
      done,
    );
    sweepId = h.addSweepRun(sweepId, doc, r, i === 1 ? 2 : 1).sweepId;
  }
  const s = h.sweep(sweepId!)!;
  assert.equal(s.points.length, 2);
  assert.deepEqual(
    s.points[0]!.runs.map((r) => r.result.totals.qps),
    [100, 110],
  );
  assert.ok(s.points[0]!.runs.every((r) => typeof r.id === 'number'));
  assert.equal(h.latestSweepWithLabel('sw'), sweepId);
  assert.deepEqual(
    h.runsWithLabel('solo').map((r) => r.totals.qps),
    [500],
  );
  assert.deepEqual(h.runsWithLabel('sw'), [], 'runs of a sweep are not standalone runs');
  assert.deepEqual(
    h.list().map((e) => e.kind),
    ['sweep', 'run'],
  );
  assert.equal(h.list({ sweepRuns: true }).length, 5);
  assert.equal(h.list({ label: 'solo' }).length, 1);
  assert.equal(h.list({ limit: 1 }).length, 1);
  h.close();
});

test('a history from a newer schema is refused and left untouched', () => {
  const file = path.join(tmpDir(), 'h.sqlite');
  History.open(file, { create: true }).close();
  const db = new Database(file);
  db.prepare("UPDATE meta SET value = '99' WHERE key = 'schema_version'").run();
  db.close();
  assert.throws(
    () => History.open(file, { create: true }),
    (e: unknown) =>
      e instanceof HistoryError && /newer dbsmack \(schema 99; this one knows up to 1\)/.test(e.message),
  );
  const again = new Database(file, { readonly: true });
  assert.equal(
    (again.prepare("SELECT value FROM meta WHERE key='schema_version'").get() as { value: string }).value,
    '99',
  );
  again.close();
});

test('other SQLite files, garbage files and missing files get clear messages', () => {
  const dir = tmpDir();
  const other = path.join(dir, 'other.sqlite');
  const db = new Database(other);
  db.exec('CREATE TABLE t (x)');
  db.close();
  assert.throws(
    () => History.open(other, { create: true }),
    /is an SQLite database but not a dbsmack history/,
  );
  const junk = path.join(dir, 'junk.sqlite');
  writeFileSync(
    junk,
    'this is not a database at all, just some text that is long enough to matter\n'.repeat(20),
  );
  assert.throws(() => History.open(junk, { create: true }), HistoryError);
  assert.throws(
    () => History.open(path.join(dir, 'none.sqlite'), { create: false }),
    /no history at .*none\.sqlite yet/,
  );
});
