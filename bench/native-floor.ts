/**
 * The two designs of the native I/O core on the raw point select of `bench/node-floor.ts`: N connections
 * (logged in by the lean clients, then handed to the addon), one prepared point select in flight on each,
 * pre-encoded statements submitted and their completions awaited, no driver objects, no engine.
 *
 *   node --import tsx bench/native-floor.ts [--clients 1,8,32] [--time 5] [--repeat 2] [--only mysql,postgres]
 *        [--designs B,A] [--sysbench] [--mysql URL] [--pg URL]
 *
 * Design B (0): epoll driven from the calling thread; design A (1): a thread per connection with blocking
 * I/O, completions handed to the calling thread. Each measurement runs in a child process (the design is
 * chosen once per thread); CPU is the child's user + system time by the kernel's accounting, per query.
 * `--sysbench` alternates sysbench oltp_point_select with the same clients (A B) and prints its figures.
 */
import { spawnSync } from 'node:child_process';
import { parseTarget } from '../src/driver/url.ts';
import { benchArgs, positiveOf, positivesOf } from './args.ts';
import { measuringAlone, sysbenchRun } from './tools.ts';

const { values } = benchArgs(import.meta.url, {
  options: {
    clients: { type: 'string', default: '1,8,32' },
    time: { type: 'string', default: '5' },
    repeat: { type: 'string', default: '2' },
    only: { type: 'string', default: 'mysql,postgres' },
    designs: { type: 'string', default: 'B,A' },
    mysql: { type: 'string', default: 'mysql://root@127.0.0.1:3306/dbsmack_perf' },
    pg: { type: 'string', default: 'postgres://root@127.0.0.1:5432/dbsmack_perf' },
    sysbench: { type: 'boolean', default: false },
    child: { type: 'string' },
  },
});
const TIME = positiveOf(import.meta.url, 'time', values.time as string);

async function child(spec: string): Promise<void> {
  const [kind, clientsText] = spec.split(':') as [string, string];
  const clients = Number(clientsText);
  const native = await import('../src/driver/native-core.ts');
  const url = kind === 'mysql' ? (values.mysql as string) : (values.pg as string);
  const target = parseTarget(url);
  const conns: { id: number; next: (i: number) => Uint8Array; kind: number; flags: number }[] = [];
  let done = 0;
  let lat = 0;
  const sink = (idx: number) => ({
    onCompletion(status: number, _value: number, us: number): void {
      if (status !== native.ST_OK) throw new Error(`status ${status}`);
      done++;
      lat += us;
      const c = conns[idx] as (typeof conns)[number];
      native.submitNative(c.id, c.next(done), c.kind, c.flags);
    },
  });
  for (let i = 0; i < clients; i++) {
    if (kind === 'mysql') {
      const { connectMysqlLean } = await import('../src/driver/mysql-lean.ts');
      const { ExecuteEncoder } = await import('../src/driver/mysql-wire-encode.ts');
      const lean = (await connectMysqlLean(target, { connectTimeoutMs: 5000, load: true })) as unknown as {
        socket: { _handle: { fd: number }; destroy(): void };
        deprecateEof: boolean;
        cacheMetadata: boolean;
        prepare(sql: string): Promise<{ encoder: InstanceType<typeof ExecuteEncoder> }>;
      };
      const stmt = await lean.prepare('SELECT c FROM sbtest1 WHERE id=?');
      const enc = stmt.encoder;
      const { coreOptionsOf } = await import('../src/driver/native-mysql.ts');
      const id = native.openNative(lean.socket._handle.fd, native.P_MYSQL, coreOptionsOf(lean), sink(i));
      lean.socket.destroy();
      conns.push({ id, next: (n) => enc.encode([(n % 100000) + 1]), kind: native.K_MY_RESULT, flags: 0 });
    } else {
      const { connectPgLean } = await import('../src/driver/pg-lean.ts');
      const { bindHead, bindMessage, EXEC_SYNC } = await import('../src/driver/pg-wire-encode.ts');
      const lean = (await connectPgLean(target, { connectTimeoutMs: 5000, load: true })) as unknown as {
        socket: { _handle: { fd: number }; destroy(): void };
        prepare(sql: string): Promise<unknown>;
      };
      await lean.prepare('SELECT c FROM sbtest1 WHERE id=$1');
      const head = bindHead('dbsmack_1');
      const id = native.openNative(lean.socket._handle.fd, native.P_PG, 0, sink(i));
      lean.socket.destroy();
      conns.push({
        id,
        next: (n) => bindMessage(null, head, [(n % 100000) + 1], EXEC_SYNC),
        kind: native.K_PG,
        flags: native.F_PG_EXT,
      });
    }
  }
  const cpu0 = process.cpuUsage();
  const t0 = performance.now();
  for (const c of conns) native.submitNative(c.id, c.next(0), c.kind, c.flags);
  await new Promise((r) => setTimeout(r, TIME * 1000));
  const secs = (performance.now() - t0) / 1000;
  const cpu = process.cpuUsage(cpu0);
  const q = done;
  console.log(
    JSON.stringify({
      qps: q / secs,
      usPerQuery: (cpu.user + cpu.system) / q,
      latUs: lat / q,
      user: cpu.user / q,
    }),
  );
  process.exit(0);
}

if (values.child !== undefined) {
  await child(values.child);
} else {
  const designs = (values.designs as string).split(',');
  const clientCounts = positivesOf(import.meta.url, 'clients', values.clients as string, true);
  const repeat = positiveOf(import.meta.url, 'repeat', values.repeat as string);
  // one measuring script at a time on this machine (tools.ts); the children run under the parent's
  await measuringAlone();
  for (const kind of (values.only as string).split(',')) {
    for (const clients of clientCounts) {
      for (let r = 0; r < repeat; r++) {
        for (const d of designs) {
          const res = spawnSync(
            process.execPath,
            [
              ...process.execArgv,
              import.meta.filename,
              '--child',
              `${kind}:${clients}`,
              ...process.argv.slice(2),
            ],
            { encoding: 'utf8', env: { ...process.env, DBSMACK_NATIVE_DESIGN: d === 'A' ? '1' : '0' } },
          );
          const line = res.stdout.trim().split('\n').pop() ?? '';
          try {
            const m = JSON.parse(line) as { qps: number; usPerQuery: number; latUs: number; user: number };
            console.log(
              `${kind} clients=${clients} design ${d}: ${Math.round(m.qps)} q/s, ${m.usPerQuery.toFixed(1)} µs CPU/query ` +
                `(user ${m.user.toFixed(1)}), latency ${m.latUs.toFixed(0)} µs`,
            );
          } catch {
            console.log(`${kind} clients=${clients} design ${d}: failed: ${res.stderr.slice(-400)}`);
          }
        }
        if (values.sysbench) {
          const url = kind === 'mysql' ? (values.mysql as string) : (values.pg as string);
          const s = sysbenchRun('oltp_point_select', url, clients, 100000, TIME);
          console.log(
            `${kind} clients=${clients} sysbench: ${Math.round(s.qps)} q/s, ${((s.cpuS * 1e6) / s.queries).toFixed(1)} µs CPU/query`,
          );
        }
      }
    }
  }
}
