/**
 * CPU of the lean clients' own code per point select, without the socket: after a real handshake and
 * prepare, writes go nowhere and a recorded reply (the point select's result: one column, one row of 120
 * bytes) is handed to the client's read callback directly. What is left is the statement's encoding, the
 * reply's parsing and the promise round trip: the part of the hot path that the wire code owns, measured
 * apart from the kernel's loopback costs that dominate (and blur) `bench/peers.ts` on a loaded machine.
 *
 *   node --import tsx bench/wire-cpu.ts [--root DIR] [--n 2000000] [--repeat 3] \
 *        [--mysql mysql://root@127.0.0.1:3306/dbsmack_perf] [--pg postgres://root@127.0.0.1:5432/dbsmack_perf]
 *
 * The sbtest1 table (100,000 rows, as bench/peers makes it) is prepared with sysbench when it is missing.
 * `--root` imports the clients from another checkout (e.g. the main branch) for an A B comparison.
 */
import path from 'node:path';
import { parseTarget } from '../src/driver/url.ts';
import { benchArgs, namesOf, positiveOf } from './args.ts';
import { ensureSbtest, measuringAlone } from './tools.ts';

const { values } = benchArgs(import.meta.url, {
  options: {
    root: { type: 'string', default: path.resolve(import.meta.dirname, '..') },
    n: { type: 'string', default: '1000000' },
    repeat: { type: 'string', default: '3' },
    mysql: { type: 'string', default: 'mysql://root@127.0.0.1:3306/dbsmack_perf' },
    pg: { type: 'string', default: 'postgres://root@127.0.0.1:5432/dbsmack_perf' },
    only: { type: 'string', default: 'mysql,postgres' },
  },
});
const N = positiveOf(import.meta.url, 'n', values.n as string);
const REPEAT = positiveOf(import.meta.url, 'repeat', values.repeat as string);
const ROOT = values.root as string;

type Internals = {
  socket: { write: (b: Buffer) => boolean; writableLength: number };
  rb?: Buffer;
  onRead: (n: number, b?: Buffer) => boolean;
};

function mysqlReply(): Buffer {
  const pkt = (seq: number, body: number[]): number[] => [body.length, 0, 0, seq, ...body];
  const str = (s: string): number[] => [s.length, ...Buffer.from(s)];
  const col = [...str('def'), ...str('db'), ...str('sbtest1'), ...str('sbtest1'), ...str('c'), ...str('c')];
  col.push(0x0c, 0x21, 0, 0xe0, 1, 0, 0, 0xfe, 0, 0, 0, 0, 0);
  const row = str('x'.repeat(119));
  return Buffer.from([
    ...pkt(1, [1]),
    ...pkt(2, col),
    ...pkt(3, row),
    ...pkt(4, [0xfe, 0, 0, 0x22, 0, 0, 0]),
  ]);
}

function pgReply(): Buffer {
  const msg = (t: string, body: Buffer): Buffer => {
    const h = Buffer.alloc(5);
    h.write(t, 0, 'latin1');
    h.writeInt32BE(4 + body.length, 1);
    return Buffer.concat([h, body]);
  };
  const v = Buffer.from('x'.repeat(120));
  const dr = Buffer.alloc(6);
  dr.writeInt16BE(1, 0);
  dr.writeInt32BE(v.length, 2);
  return Buffer.concat([
    msg('2', Buffer.alloc(0)),
    msg('D', Buffer.concat([dr, v])),
    msg('C', Buffer.from('SELECT 1\0')),
    msg('Z', Buffer.from('I')),
  ]);
}

async function measure(name: string, url: string, sql: string, reply: Buffer, pg: boolean): Promise<void> {
  const mod = pg
    ? await import(path.join(ROOT, 'src/driver/pg-lean.ts'))
    : await import(path.join(ROOT, 'src/driver/mysql-lean.ts'));
  const connect = pg ? mod.connectPgLean : mod.connectMysqlLean;
  ensureSbtest(parseTarget(url), 100_000);
  const conn = await connect(parseTarget(url), { connectTimeoutMs: 5000, load: true });
  const stmt = await conn.prepare(sql);
  const c = conn as unknown as Internals;
  const real = c.socket.write;
  c.socket.write = () => true;
  const rb = pg ? Buffer.allocUnsafe(64 * 1024) : (c.rb as Buffer);
  const out: number[] = [];
  for (let r = 0; r < REPEAT; r++) {
    const t0 = process.cpuUsage();
    for (let i = 0; i < N; i++) {
      const p = stmt.run([(i % 100000) + 1]);
      reply.copy(rb, 0);
      c.onRead(reply.length, rb);
      await p;
    }
    const t = process.cpuUsage(t0);
    out.push(((t.user + t.system) * 1000) / N);
  }
  c.socket.write = real;
  await conn.close();
  console.log(`${name} ${ROOT}: ns per statement ${out.map((x) => x.toFixed(0)).join(' ')}`);
}

const only = namesOf(import.meta.url, 'only', values.only as string, ['mysql', 'postgres']);
// one measuring script at a time on this machine (tools.ts)
await measuringAlone();
if (only.has('mysql'))
  await measure('mysql', values.mysql as string, 'SELECT c FROM sbtest1 WHERE id=?', mysqlReply(), false);
if (only.has('postgres'))
  await measure('postgres', values.pg as string, 'SELECT c FROM sbtest1 WHERE id=$1', pgReply(), true);
