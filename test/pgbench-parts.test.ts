import assert from 'node:assert/strict';
import { test } from 'node:test';
import { benchSettings, PgbenchOptions, parsePgbenchArgs } from '../src/cli/pgbench.ts';
import { nativeUnavailable, SHARED_IO_MIN_CLIENTS, sharedIoSupported } from '../src/driver/native-core.ts';
import { parseTarget } from '../src/driver/url.ts';
import { UsageError } from '../src/errors.ts';
import { PgPrng } from '../src/workload/pgbench/prng.ts';
import { seedsOf } from '../src/workload/pgbench/workload.ts';
import { need } from './helpers/preconditions.ts';

const options = (...argv: string[]) => new PgbenchOptions(parsePgbenchArgs(argv).opts);
const PG = parseTarget('postgres://root@127.0.0.1:5432/bench');

test('the options are read by long name: the last value wins, repeated ones keep every value, modes apart', () => {
  const o = options('-c', '2', '--client=4', '-f', 'a.sql', '-f', 'b.sql', '-n');
  assert.equal(o.last('client'), '4');
  assert.deepEqual(o.all('file'), ['a.sql', 'b.sql']);
  assert.equal(o.has('no-vacuum'), true);
  assert.equal(o.last('no-vacuum'), 'true');
  assert.equal(o.has('time'), false);
  const { has, last } = o; // bound, as the mapping uses them
  assert.equal(has('client') && last('client'), '4');
  assert.equal(o.anyOf('init'), false);
  assert.equal(options('-i', '-F', '90').anyOf('init'), true);
  assert.equal(options('-c', '3').anyOf('bench'), true);
});

test('benchmark settings: clients, jobs, -T or -t, rate and the workload options as pgbench means them', () => {
  const b = benchSettings(
    options('-c', '6', '-j', '2', '-T', '5', '-S', '-R', '100', '-M', 'prepared'),
    PG,
    10,
    0,
  );
  assert.equal(b.ro.clients, 6);
  assert.equal(b.ro.workers, 2);
  assert.equal(b.ro.time, 5);
  assert.equal(b.duration, 5);
  assert.equal(b.ro.rate?.perSec, 100);
  assert.equal(b.rawOptions.protocol, 'prepared');
  assert.equal(b.rawOptions.builtin, JSON.stringify(['select-only']));
  assert.equal(b.rawOptions.jobs, '2');
  const t = benchSettings(options('-t', '50'), PG, 10, 3);
  assert.equal(t.ro.rounds, 50);
  assert.equal(t.duration, undefined);
  assert.equal(t.rawOptions.scale, '3');
  assert.equal(benchSettings(options(), PG, 10, 0).ro.rounds, 10);
  assert.equal(benchSettings(options(), parseTarget('sqlite::memory:'), 10, 0).ro.workers, 1);
  for (const bad of [
    ['-t', '5', '-T', '5'],
    ['--progress-timestamp'],
    ['-M', 'fancy'],
    ['-D', 'x'],
    ['--max-tries=0'],
  ])
    assert.throws(() => benchSettings(options(...bad), PG, 10, 0), UsageError, bad.join(' '));
});

test('-j: one load worker per job, but -j 2 with many PostgreSQL clients is one worker and the shared I/O thread', (t) => {
  const workers = (target = PG, ...argv: string[]) =>
    benchSettings(options(...argv), target, 10, 0).ro.workers;
  const n = String(SHARED_IO_MIN_CLIENTS);
  // what does not depend on the native core
  assert.equal(workers(PG, '-c', '4', '-j', '2'), 2);
  assert.equal(workers(PG, '-c', '3', '-j', '8'), 3); // at most one per client
  assert.equal(workers(parseTarget('sqlite::memory:'), '-c', '4', '-j', '2'), 4); // SQLite: one per client
  assert.equal(workers(parseTarget('postgres://root@127.0.0.1/bench?io=js'), '-c', n, '-j', '2'), 2);
  assert.equal(workers(parseTarget('mysql://root@127.0.0.1/bench'), '-c', n, '-j', '2'), 2);
  assert.equal(workers(PG, '-c', n, '-j', '4'), 4);
  assert.equal(workers(PG, '-c', String(SHARED_IO_MIN_CLIENTS - 1), '-j', '2'), 2);
  const noSharedThread = sharedIoSupported
    ? undefined
    : `the native core has no shared I/O thread on ${process.arch}`;
  if (!need(t, nativeUnavailable() ?? noSharedThread)) return;
  assert.equal(workers(PG, '-c', n, '-j', '2'), 1);
  assert.equal(workers(PG, '-c', '64', '-j', '2', '-T', '5'), 1);
  assert.equal(benchSettings(options('-c', '64', '-j', '2'), PG, 10, 0).rawOptions.jobs, '2'); // still shown as 2
});

test('the clients’ seeds drawn once per run are those pgbench draws for each client from the run’s seed', () => {
  // pgbench's order, drawn afresh for every client: outputs 1..clients each client's generator, then
  // :default_seed, then three per client of which the first chooses its scripts
  for (const [seed, clients] of [
    [0n, 1],
    [12345n, 3],
    [18446744073709551615n, 8],
    [77n, 17],
  ] as const) {
    for (let clientId = 0; clientId < clients; clientId++) {
      const base = new PgPrng(seed);
      let rngSeed = 0n;
      for (let i = 0; i <= clientId; i++) rngSeed = base.uint64();
      for (let i = clientId + 1; i < clients; i++) base.uint64();
      const defaultSeed = base.uint64();
      let chooseSeed = 0n;
      for (let i = 0; i <= clientId; i++) {
        chooseSeed = base.uint64();
        base.uint64();
        base.uint64();
      }
      assert.deepEqual(
        seedsOf(seed, clients, clientId),
        { rngSeed, defaultSeed, chooseSeed },
        `${seed} ${clientId}/${clients}`,
      );
    }
  }
});
