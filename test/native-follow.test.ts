/**
 * The native core's threads that wait for one connection's reply follow its server thread to the CPU the
 * reply came from (followServer in native/dbsmack_io.cc): they look (getsockopt SO_INCOMING_CPU) every 16th
 * read where the server is on this machine, as often as DBSMACK_NATIVE_FOLLOW asks, never with 0, and never on
 * a Unix socket (no incoming CPU there). Counted from outside, by the kernel: `perf stat` of the getsockopt
 * system call over a whole `dbsmack run` on MariaDB with 8 clients on two load threads (4 connections each:
 * every batch on its connection's own thread).
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { loadDriver } from '../src/driver/index.ts';
import { nativeUnavailable } from '../src/driver/native-core.ts';
import { need, needCommand, needFile } from './helpers/preconditions.ts';
import { MYSQL_URL, needServer } from './helpers/servers.ts';
import { PERF_TRACEPOINTS, syscallsOfRun } from './helpers/syscall-count.ts';

const EVENT = 'syscalls:sys_enter_getsockopt';

/** getsockopt calls of a one-second `run select1` with 8 clients on two load threads, and its queries. */
function looks(url: string, asked?: string): { looks: number; queries: number } {
  const r = syscallsOfRun({
    event: EVENT,
    url,
    workload: 'select1',
    workers: 2,
    knob: 'DBSMACK_NATIVE_FOLLOW',
    asked,
  });
  return { looks: r.calls, queries: r.queries };
}

test('native io: threads waiting for one reply look where a local server replied from every 16th read; DBSMACK_NATIVE_FOLLOW sets how often, 0 never; a Unix socket never', async (t) => {
  if (!need(t, nativeUnavailable())) return;
  if (!needCommand(t, 'perf', ['stat', '-e', EVENT, '--', 'true'], PERF_TRACEPOINTS)) return;
  const target = await needServer(t, 'mysql');
  if (!target) return;
  // The rest of the process calls getsockopt a few times (connecting); none is a look.
  const off = looks(MYSQL_URL, '0');
  const base = off.looks;
  assert.ok(off.queries > 1000, `${off.queries} queries`);
  assert.ok(base < 100, `DBSMACK_NATIVE_FOLLOW=0: ${base} getsockopt calls`);
  const every = looks(MYSQL_URL);
  // one look a read, every 16th read of a reply (a reply is one read here: SELECT 1's few bytes)
  const want = every.queries / 16;
  assert.ok(
    every.looks - base > 0.5 * want && every.looks - base < 1.5 * want + 20,
    `by default: ${every.looks} getsockopt calls for ${every.queries} queries (${base} with none)`,
  );
  const each = looks(MYSQL_URL, '1');
  assert.ok(
    each.looks - base > 0.8 * each.queries,
    `DBSMACK_NATIVE_FOLLOW=1: ${each.looks} getsockopt calls for ${each.queries} queries`,
  );
  const admin = await (await loadDriver('mysql')).connect(target, { connectTimeoutMs: 5000 });
  const [{ socket }] = (await admin.all('SELECT @@socket AS socket')) as [{ socket: string }];
  await admin.close();
  if (!needFile(t, socket, 'the server’s Unix socket (@@socket)')) return;
  const unix = looks(`mysql://root@localhost/${target.database}?socket=${socket}`, '1');
  assert.ok(unix.queries > 1000, `${unix.queries} queries on the Unix socket`);
  assert.ok(unix.looks < 100, `a Unix socket, DBSMACK_NATIVE_FOLLOW=1: ${unix.looks} getsockopt calls`);
});
