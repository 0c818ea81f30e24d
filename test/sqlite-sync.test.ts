/**
 * SQLite, where a client has its load thread alone (as many workers as clients), runs events of one statement
 * (`ClientHandler.single`: prepared statements and text queries) synchronously, with no promise per event
 * (client.ts `syncEvent`); where clients share a thread (fewer workers), each statement is a promise that
 * waits for locks without blocking the thread. Both must count the same: statements, events, errors, the
 * rows written, and a draw that throws ends the run the same way.
 */
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import Database from 'better-sqlite3';
import type { RunResult } from '../src/metrics/run-result.ts';
import { runCli, tmpDir } from './helpers/cli.ts';
import { totalCounts } from './helpers/run-counts.ts';

const ROOT = path.resolve(import.meta.dirname, '..');
const FIXTURES = path.join(ROOT, 'test', 'fixtures', 'workloads');

/** Two clients with a thread each (the synchronous path) and sharing one (the promise path). */
const ARMS = [
  ['own threads', ['--clients', '2', '--workers', '2']],
  ['shared thread', ['--clients', '2', '--workers', '1']],
] as const;

function counts(r: RunResult): unknown {
  return {
    ...totalCounts(r),
    types: Object.fromEntries(Object.entries(r.types).map(([k, s]) => [k, [s.count, s.errors]])),
    errorCodes: r.errors.map((e) => [e.code, e.count]),
  };
}

function rows(file: string, sql: string): number {
  const db = new Database(file, { readonly: true });
  try {
    return Number((db.prepare(sql).get() as { n: number }).n);
  } finally {
    db.close();
  }
}

test('sqlite: events of one statement count the same on a thread of their own and on a shared one', async () => {
  const dir = tmpDir('dbsmack-sqlite-sync-');
  const out: Record<string, unknown> = {};
  for (const [arm, threads] of ARMS) {
    // every 7th insert of each client hits a duplicate key, ignored: 2 × 42 errors, 2 × 258 rows added
    const file = path.join(dir, `${arm.replace(' ', '-')}.sqlite`);
    const mod = path.join(FIXTURES, 'single-dup.ts');
    const p = await runCli(['prepare', mod, '--db', `sqlite:${file}`]);
    assert.equal(p.code, 0, p.stderr);
    const ignore = ['--ignore-errors', 'SQLITE_CONSTRAINT_PRIMARYKEY'];
    const r = await runCli([
      'run',
      mod,
      '--db',
      `sqlite:${file}`,
      ...threads,
      '--rounds',
      '300',
      ...ignore,
      '--format',
      'json',
    ]);
    assert.equal(r.code, 0, `${arm}: ${r.stderr}`);
    const res = JSON.parse(r.stdout) as RunResult;
    assert.equal(res.workers, arm === 'own threads' ? 2 : 1, arm);
    out[arm] = {
      ...(counts(res) as object),
      rows: rows(file, 'SELECT COUNT(*) AS n FROM dbsmack_single_dup'),
    };
  }
  assert.deepEqual(out['own threads'], out['shared thread']);
  assert.deepEqual(out['shared thread'], {
    status: 'complete',
    queries: 516,
    events: 516,
    errors: 84,
    types: { insert: [516, 84] },
    errorCodes: [['SQLITE_CONSTRAINT_PRIMARYKEY', 84]],
    rows: 1 + 516,
  });
});

test('sqlite: text queries of one an event (oltp_insert) count the same on a thread of their own and on a shared one', async () => {
  const dir = tmpDir('dbsmack-sqlite-sync-');
  const out: Record<string, unknown> = {};
  for (const [arm, threads] of ARMS) {
    const file = path.join(dir, `${arm.replace(' ', '-')}.sqlite`);
    const db = ['--db', `sqlite:${file}`, '--table-size', '100', '--auto-inc=off'];
    const p = await runCli(['prepare', 'oltp_insert', ...db]);
    assert.equal(p.code, 0, p.stderr);
    const r = await runCli(['run', 'oltp_insert', ...db, ...threads, '--events', '900', '--format', 'json']);
    assert.equal(r.code, 0, `${arm}: ${r.stderr}`);
    out[arm] = {
      ...(counts(JSON.parse(r.stdout) as RunResult) as object),
      rows: rows(file, 'SELECT COUNT(*) AS n FROM sbtest1'),
    };
  }
  assert.deepEqual(out['own threads'], out['shared thread']);
  assert.deepEqual((out['shared thread'] as { types: unknown }).types, { inserts: [900, 0] });
  assert.equal((out['shared thread'] as { rows: number }).rows, 900);
});

test('sqlite: a draw that throws on the synchronous path ends the run as on the others', async () => {
  const file = path.join(tmpDir('dbsmack-sqlite-sync-'), 'throws.sqlite');
  const mod = path.join(FIXTURES, 'single-throws.ts');
  const r = await runCli(['run', mod, '--db', `sqlite:${file}`, '--time', '5', '--format', 'json']);
  assert.equal(r.code, 4, r.stderr);
  const res = JSON.parse(r.stdout) as RunResult;
  assert.deepEqual(
    [res.status, res.totals.queries, res.totals.events, res.errors.map((e) => [e.message, e.kind])],
    ['partial', 50, 50, [['the 51st draw refuses', 'fatal']]],
  );
});

test("sqlite: a pgbench script's random numbers are the same on a thread of their own and on a shared one", async () => {
  const dir = tmpDir('dbsmack-sqlite-sync-');
  const script = path.join(dir, 'x.sql');
  writeFileSync(script, '\\set x random(1, 1000000)\nINSERT INTO xs (cid, x) VALUES (:client_id, :x);\n');
  const out: Record<string, unknown> = {};
  for (const [arm, jobs] of [
    ['own threads', '2'],
    ['shared thread', '1'],
  ] as const) {
    const file = path.join(dir, `${arm.replace(' ', '-')}.sqlite`);
    const db = new Database(file);
    db.exec('CREATE TABLE xs (n INTEGER PRIMARY KEY AUTOINCREMENT, cid INTEGER, x INTEGER)');
    db.close();
    const args = ['-f', script, '-c', '2', '-j', jobs, '-t', '300', '--random-seed', '7', '--no-history'];
    const r = await runCli(['pgbench', '--db', `sqlite:${file}`, ...args]);
    assert.equal(r.code, 0, `${arm}: ${r.stderr}`);
    assert.match(r.stdout, /number of transactions actually processed: 600\/600/, arm);
    const read = new Database(file, { readonly: true });
    try {
      out[arm] = read.prepare('SELECT cid, x FROM xs ORDER BY cid, n').all();
    } finally {
      read.close();
    }
  }
  assert.equal((out['shared thread'] as unknown[]).length, 600);
  assert.deepEqual(out['own threads'], out['shared thread']);
});
