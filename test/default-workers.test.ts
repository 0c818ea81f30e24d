import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { type TestContext, test } from 'node:test';
import { resolveWorkload } from '../src/cli/run.ts';
import { loadIoOf, sharedIoOf, soloIoOf } from '../src/driver/connectors.ts';
import {
  loadDesign,
  SHARED_LOOP_CPU_VENDORS,
  SOLO_IO_MAX_CLIENTS,
  SOLO_IO_READS_MAX_CLIENTS,
  sharedIoSupported,
} from '../src/driver/native-core.ts';
import { parseTarget } from '../src/driver/url.ts';
import {
  capacityProblem,
  defaultWorkers,
  type MachineLimits,
  machineLimits,
  maxWorkers,
  SQLITE_WORKERS_PER_CORE,
  soloIoMaxClients,
  WORKER_BYTES,
} from '../src/engine/engine.ts';
import { InputError } from '../src/errors.ts';
import { readsOnly } from '../src/run/plan.ts';
import { BIN, runCli, tmpDir } from './helpers/cli.ts';
import { needFile } from './helpers/preconditions.ts';

const GiB = 2 ** 30;
const big: MachineLimits = { cores: 2, totalMemBytes: 24 * GiB, fileLimit: 20000 };

/** DBSMACK_NATIVE_DESIGN unset for the rest of the test (the test sets it as it goes), put back after it. */
function designUnset(t: TestContext): void {
  const saved = process.env.DBSMACK_NATIVE_DESIGN;
  t.after(() => {
    if (saved === undefined) delete process.env.DBSMACK_NATIVE_DESIGN;
    else process.env.DBSMACK_NATIVE_DESIGN = saved;
  });
  delete process.env.DBSMACK_NATIVE_DESIGN;
}

test('default workers: one per SQLite client up to a bound, one per two cores (at least two) for network clients, never more than clients', () => {
  assert.equal(defaultWorkers('sqlite', 4, 2), 4);
  assert.equal(defaultWorkers('mysql', 32, 2), 2);
  assert.equal(defaultWorkers('postgres', 32, 3), 2);
  assert.equal(defaultWorkers('postgres', 32, 1), 1);
  assert.equal(defaultWorkers('postgres', 32, 8), 4);
  assert.equal(defaultWorkers('postgres', 32, 16), 8);
  assert.equal(defaultWorkers('mysql', 2, 16), 2);
  assert.equal(defaultWorkers('mysql', 1, 1), 1);
});

test('many PostgreSQL clients on the native core: one load thread with the shared I/O thread, where two would be the default', (t) => {
  for (const cores of [2, 3, 4, 5]) {
    assert.equal(defaultWorkers('postgres', 8, cores, big, true), 1, `${cores} cores`);
    assert.equal(defaultWorkers('postgres', 500, cores, big, true), 1, `${cores} cores`);
    assert.equal(defaultWorkers('postgres', 7, cores, big, true), 2, `${cores} cores, 7 clients`);
    assert.equal(defaultWorkers('postgres', 64, cores, big, false), 2, `${cores} cores, no shared thread`);
  }
  // more cores: the load threads their default gives (the shared thread was measured on two)
  assert.equal(defaultWorkers('postgres', 64, 8, big, true), 4);
  assert.equal(defaultWorkers('postgres', 64, 1, big, true), 1);
  // the load thread's design follows: 4 where it holds all of 8 or more PostgreSQL clients
  designUnset(t);
  assert.equal(loadDesign('postgres', 8, true), sharedIoSupported ? 4 : 3);
  assert.equal(loadDesign('postgres', 7, true), 3);
  assert.equal(loadDesign('postgres', 32, false), 3, 'a share of the clients: two load threads');
  assert.equal(loadDesign('mysql', 32, true), 3);
  assert.equal(loadDesign('sqlite', 32, true), 3);
  for (const [asked, design] of [
    ['0', 0],
    ['2', 2],
    ['3', 3],
    ['4', 4],
    ['7', sharedIoSupported ? 4 : 3],
    ['', sharedIoSupported ? 4 : 3],
  ] as const) {
    process.env.DBSMACK_NATIVE_DESIGN = asked;
    assert.equal(loadDesign('postgres', 64, true), design, `DBSMACK_NATIVE_DESIGN=${asked}`);
  }
  // and the default number of load threads with it: DBSMACK_NATIVE_DESIGN=3 keeps two
  const pg = parseTarget('postgres://root@127.0.0.1/test');
  process.env.DBSMACK_NATIVE_DESIGN = '3';
  assert.equal(sharedIoOf(pg), false);
  delete process.env.DBSMACK_NATIVE_DESIGN;
  assert.equal(sharedIoOf(pg), sharedIoSupported && loadIoOf(pg) === 'native');
  assert.equal(sharedIoOf({ ...pg, params: { ...pg.params, io: 'js' } }), false);
  assert.equal(sharedIoOf(parseTarget('mysql://root@127.0.0.1/test')), false);
});

test('a few PostgreSQL clients on the native core: a load thread each, on two cores or more', (t) => {
  for (const cores of [2, 3, 8, 64]) {
    for (const clients of [1, 2, 3, SOLO_IO_MAX_CLIENTS])
      assert.equal(defaultWorkers('postgres', clients, cores, big, true, true), clients, `${cores} cores`);
    // beyond: the shared I/O thread's one load thread on 2 to 5 cores, else the cores' default
    assert.equal(
      defaultWorkers('postgres', SOLO_IO_MAX_CLIENTS + 1, cores, big, true, true),
      defaultWorkers('postgres', SOLO_IO_MAX_CLIENTS + 1, cores, big, true),
    );
  }
  assert.equal(defaultWorkers('postgres', SOLO_IO_MAX_CLIENTS + 1, 2, big, true, true), 2);
  assert.equal(defaultWorkers('postgres', 8, 2, big, true, true), 1, 'the shared I/O thread from 8');
  // one core keeps its one; without the native core (soloIo false) the default of before
  assert.equal(defaultWorkers('postgres', 4, 1, big, true, true), 1);
  assert.equal(defaultWorkers('postgres', 4, 2, big, false, false), 2);
  // and never more than the memory holds
  const small: MachineLimits = { cores: 2, totalMemBytes: 4 * WORKER_BYTES, fileLimit: 1024 };
  assert.equal(defaultWorkers('postgres', 4, 2, small, true, true), maxWorkers(small));
  // which targets: PostgreSQL on the native core, unless DBSMACK_NATIVE_DESIGN names another design than 3
  designUnset(t);
  const pg = parseTarget('postgres://root@127.0.0.1/test');
  assert.equal(soloIoOf(pg), loadIoOf(pg) === 'native');
  assert.equal(soloIoOf({ ...pg, params: { ...pg.params, io: 'js' } }), false);
  assert.equal(soloIoOf(parseTarget('mysql://root@127.0.0.1/test')), false);
  for (const [asked, solo] of [
    ['3', true],
    ['4', false],
    ['0', false],
    ['2', false],
  ] as const) {
    process.env.DBSMACK_NATIVE_DESIGN = asked;
    assert.equal(soloIoOf(pg), solo && loadIoOf(pg) === 'native', `DBSMACK_NATIVE_DESIGN=${asked}`);
  }
});

test('PostgreSQL clients that only read: a load thread each up to a higher bound', () => {
  assert.ok(SOLO_IO_READS_MAX_CLIENTS > SOLO_IO_MAX_CLIENTS);
  for (const cores of [2, 3, 8]) {
    for (let clients = 1; clients <= SOLO_IO_READS_MAX_CLIENTS; clients++)
      assert.equal(defaultWorkers('postgres', clients, cores, big, true, true, true), clients, `${clients}`);
    // beyond: what the clients would get if they wrote
    assert.equal(
      defaultWorkers('postgres', SOLO_IO_READS_MAX_CLIENTS + 1, cores, big, true, true, true),
      defaultWorkers('postgres', SOLO_IO_READS_MAX_CLIENTS + 1, cores, big, true, true, false),
    );
  }
  // the same clients that may write keep the shared loop; one core, or no native core, keeps its default
  assert.equal(defaultWorkers('postgres', SOLO_IO_READS_MAX_CLIENTS, 2, big, true, true, false), 1);
  assert.equal(defaultWorkers('postgres', 6, 2, big, true, true, false), 2);
  assert.equal(defaultWorkers('postgres', 8, 1, big, true, true, true), 1);
  assert.equal(defaultWorkers('postgres', 8, 2, big, true, false, true), 1);
  assert.equal(defaultWorkers('mysql', 8, 2, big, false, false, true), 2);
});

test('on an AMD EPYC machine PostgreSQL clients that only read share load threads as writers do', () => {
  const amd: MachineLimits = { ...big, cpuVendor: 'AuthenticAMD' };
  const intel: MachineLimits = { ...big, cpuVendor: 'GenuineIntel' };
  assert.ok(SHARED_LOOP_CPU_VENDORS.includes('AuthenticAMD'));
  assert.equal(soloIoMaxClients(true, amd), SOLO_IO_MAX_CLIENTS);
  assert.equal(soloIoMaxClients(true, intel), SOLO_IO_READS_MAX_CLIENTS);
  assert.equal(soloIoMaxClients(true, big), SOLO_IO_READS_MAX_CLIENTS, 'a vendor not read: the thread each');
  assert.equal(soloIoMaxClients(false, intel), SOLO_IO_MAX_CLIENTS);
  for (const cores of [2, 3, 8])
    for (let clients = 1; clients <= SOLO_IO_READS_MAX_CLIENTS + 2; clients++) {
      const reads = defaultWorkers('postgres', clients, cores, { ...amd, cores }, true, true, true);
      const writes = defaultWorkers('postgres', clients, cores, { ...amd, cores }, true, true, false);
      assert.equal(reads, writes, `${clients} clients on ${cores} cores`);
    }
  // a thread each up to 4, two load threads at 5 to 7, the shared I/O thread's one from 8 (2 cores)
  assert.equal(defaultWorkers('postgres', 4, 2, amd, true, true, true), 4);
  assert.equal(defaultWorkers('postgres', 6, 2, amd, true, true, true), 2);
  assert.equal(defaultWorkers('postgres', 8, 2, amd, true, true, true), 1);
  assert.equal(defaultWorkers('postgres', 8, 2, intel, true, true, true), 8);
  // this machine's vendor, as /proc/cpuinfo says it
  if (process.platform === 'linux') {
    const line = /^vendor_id\s*:\s*(\S+)/m.exec(readFileSync('/proc/cpuinfo', 'utf8'));
    assert.equal(machineLimits().cpuVendor, line?.[1]);
  }
});

test('which workloads say they only read: the built-ins, pgbench scripts and smack files by their SQL', async () => {
  const dir = tmpDir('dbsmack-reads-');
  const reads = async (args: string[]): Promise<boolean> => {
    const [arg, ...rest] = args;
    const w = await resolveWorkload(arg as string, rest, { name: 'run', options: [] });
    return readsOnly(w);
  };
  for (const name of ['select1', 'oltp_point_select', 'oltp_read_only', 'select_random_points'])
    assert.equal(await reads([name]), true, name);
  for (const name of [
    'oltp_read_write',
    'oltp_write_only',
    'oltp_update_index',
    'oltp_insert',
    'bulk_insert',
  ])
    assert.equal(await reads([name]), false, name);
  assert.equal(await reads(['pgbench', '--builtin', 'select-only']), true, 'pgbench -S');
  assert.equal(await reads(['pgbench', '--builtin', 'tpcb-like']), false, 'TPC-B');
  assert.equal(await reads(['pgbench', '--builtin', 'select-only', '--builtin', 'simple-update']), false);
  const script = (name: string, sql: string): string => {
    const file = path.join(dir, name);
    writeFileSync(file, sql);
    return file;
  };
  assert.equal(await reads([script('r.sql', '\\set a random(1, 10)\nBEGIN;\nSELECT :a;\nEND;\n')]), true);
  assert.equal(await reads([script('l.sql', 'SELECT 1\n  FROM t FOR UPDATE;\n')]), false, 'a lock');
  assert.equal(await reads([script('c.sql', 'SELECT 1 \\; SELECT 2;\n')]), false, 'compound');
  // a TypeScript module says so itself (bench/pgbench-select.ts does); undefined is not known
  assert.equal(await reads([path.resolve('examples/kv-zipfian.ts')]), false);
  // written as a value instead of a function: a clear error before anything runs, not an internal one
  const mod = script('ro.mjs', "export default { name: 'ro', readOnly: true, client() { return {}; } };\n");
  await assert.rejects(
    reads([mod]),
    (e: Error) =>
      e instanceof InputError &&
      /ro\.mjs: readOnly must be a function of the workload's options, not boolean$/.test(e.message),
  );
  const good = script(
    'ro2.mjs',
    "export default { name: 'ro', readOnly: () => true, client() { return {}; } };\n",
  );
  assert.equal(await reads([good]), true, 'a module that says so');
  // smack files: every client type's barrel (the set-up of tables is not a round)
  assert.equal(await reads([path.resolve('examples/select-key.smack'), '10', '1000']), true);
  assert.equal(await reads([path.resolve('examples/update-select.smack'), '10', '1000']), false);
  assert.equal(await reads([path.resolve('test/fixtures/smack/barrel-mix.smack'), '2', '10']), false);
});

test('the default stays bounded on every driver: 5000 SQLite clients share a few threads', () => {
  assert.equal(defaultWorkers('sqlite', 5000, 2, big), 2 * SQLITE_WORKERS_PER_CORE);
  assert.equal(defaultWorkers('sqlite', 5000, 64, big), 64 * SQLITE_WORKERS_PER_CORE);
  // a small machine: what its memory holds
  const small: MachineLimits = { cores: 64, totalMemBytes: GiB, fileLimit: 1024 };
  assert.equal(maxWorkers(small), Math.floor((GiB * 0.5) / WORKER_BYTES));
  assert.equal(defaultWorkers('sqlite', 5000, 64, small), maxWorkers(small));
  assert.equal(defaultWorkers('mysql', 5000, 1024, small), maxWorkers(small));
  for (const driver of ['sqlite', 'mysql', 'postgres'] as const) {
    assert.equal(capacityProblem(driver, 5000, defaultWorkers(driver, 5000, 2, big), big), undefined);
  }
});

test('a client count or --workers the machine cannot hold is a problem with a hint', () => {
  const w = capacityProblem('sqlite', 5000, 5000, big);
  assert.match(w?.reason ?? '', /^5000 load worker threads need about 80000 MiB/);
  assert.match(w?.hint ?? '', new RegExp(`give --workers ${maxWorkers(big)} or fewer`));
  const m = capacityProblem('postgres', 10_000_000, 1, big);
  assert.match(m?.reason ?? '', /^10000000 postgres clients need about/);
  assert.match(m?.hint ?? '', /give at most about \d+ clients here/);
  const f = capacityProblem('sqlite', 1000, 8, { ...big, fileLimit: 1024 });
  assert.match(f?.reason ?? '', /need about 3064 open files; this process may open 1024/);
  assert.match(f?.hint ?? '', /ulimit -n 3064/);
  assert.equal(capacityProblem('sqlite', 1000, 8, { ...big, fileLimit: undefined }), undefined);
});

test('5000 SQLite clients run on a bounded number of threads', async () => {
  const dir = tmpDir('dbsmack-workers-');
  const r = await runCli(
    [
      'run',
      'select1',
      '--db',
      `sqlite:${path.join(dir, 's.sqlite')}`,
      '--clients',
      '5000',
      '--events',
      '10000',
      '--format',
      'json',
    ],
    { cwd: dir },
  );
  assert.equal(r.code, 0, r.stderr);
  const res = JSON.parse(r.stdout) as { clients: number; workers: number; status: string };
  assert.equal(res.status, 'complete');
  assert.equal(res.clients, 5000);
  assert.equal(res.workers, defaultWorkers('sqlite', 5000));
  assert.ok(res.workers <= maxWorkers(), `${res.workers} workers`);
});

test('more workers or clients than the machine holds are refused before the run, with the hint', async () => {
  const dir = tmpDir('dbsmack-workers-');
  const db = `sqlite:${path.join(dir, 's.sqlite')}`;
  const most = maxWorkers();
  for (const args of [
    ['run', 'select1', '--db', db, '--clients', String(most + 1), '--workers', String(most + 1)],
    ['sweep', 'select1', '--db', db, '--clients', `1,${most + 1}`, '--workers', String(most + 1)],
    ['run', 'select1', '--db', db, '--clients', '100000000'],
  ]) {
    const r = await runCli([...args, '--time', '1'], { cwd: dir });
    assert.equal(r.code, 2, `${args.join(' ')}: ${r.stderr}`);
    assert.match(r.stderr, /^dbsmack: cannot run \d+ clients: .*this machine (holds|offers)/);
    assert.match(r.stderr, /\nhint: give (--workers \d+ or fewer|at most about \d+ clients)/);
    assert.equal(r.stdout, '', 'nothing ran');
    assert.doesNotMatch(r.stderr, /\[1\/\d+\]/, 'no run of the sweep started');
  }
});

test('more clients than open files allow (ulimit -n) are refused before the run', (t) => {
  if (!needFile(t, '/proc/self/limits', 'the open-file limit is read there (Linux)')) return;
  if (!needFile(t, '/bin/sh', '/bin/sh sets the limit (ulimit -n)')) return;
  const dir = tmpDir('dbsmack-workers-');
  const r = spawnSync(
    '/bin/sh',
    [
      '-c',
      `ulimit -n 256 && exec '${process.execPath}' '${BIN}' run select1 --db sqlite:${dir}/s.sqlite --clients 200 --time 1 --no-history`,
    ],
    { encoding: 'utf8', timeout: 60_000 },
  );
  assert.equal(r.status, 2, r.stderr);
  assert.match(
    r.stderr,
    /cannot run 200 clients: 200 sqlite clients need about 664 open files; this process may open 256/,
  );
  assert.match(r.stderr, /hint: raise the limit \(ulimit -n 664\)/);
});

test('SQLite clients sharing a thread wait for locks without blocking it: a write workload completes', async () => {
  const dir = tmpDir('dbsmack-workers-');
  const db = `sqlite:${path.join(dir, 'sb.sqlite')}`;
  const size = ['--tables', '1', '--table-size', '1000'];
  const p = await runCli(['prepare', 'oltp_read_write', '--db', db, ...size], { cwd: dir });
  assert.equal(p.code, 0, p.stderr);
  // 8 clients on 2 threads, every event a write transaction: a client waiting in SQLite's own busy handler
  // would hold up the lock's holder on its thread (until the busy timeout, then the run was killed)
  const r = await runCli(
    ['run', 'oltp_read_write', '--db', db, ...size, '--threads', '8', '--workers', '2', '--time', '2'],
    { cwd: dir },
  );
  assert.equal(r.code, 0, r.stderr);
  assert.match(r.stdout, /status complete/);
  assert.match(r.stdout, /8 clients in 2 workers/);
});
