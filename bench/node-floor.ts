/**
 * The floor of any Node.js benchmark client on this machine: N connections, one prepared point select in
 * flight on each, with nothing but pre-encoded protocol messages written to a socket and the replies
 * scanned for their end. No driver, no timing, no histograms, no engine. Whatever dbsmack costs above this
 * is its own; whatever this costs above sysbench is Node.js and libuv (one event loop thread, epoll, a JS
 * call per read), not something a client written in JavaScript can remove.
 *
 *   node --import tsx bench/node-floor.ts [--clients 1,8,32] [--time 5] [--repeat 2] [--only mysql,postgres]
 *        [--mysql mysql://root@127.0.0.1:3306/dbsmack_perf] [--pg postgres://root@127.0.0.1:5432/dbsmack_perf]
 *        [--reads data|onread] [--sysbench]
 *
 * Reads arrive by default through `onread` into one reused buffer (`--reads data`: through 'data' events,
 * a new Buffer each). `--sysbench` also runs sysbench oltp_point_select with the same clients, alternating
 * A B, and prints the ratio. Needs the sbtest1 table of `bench/peers.ts` (100,000 rows) and, for MySQL, an
 * account without a password (mysql_native_password), for PostgreSQL trust authentication: this is a
 * measuring stick, not a client.
 */
import net from 'node:net';
import { parseTarget } from '../src/driver/url.ts';
import { benchArgs, positiveOf, positivesOf } from './args.ts';
import { measuringAlone, sysbenchRun } from './tools.ts';

const { values } = benchArgs(import.meta.url, {
  options: {
    clients: { type: 'string', default: '1,8,32' },
    time: { type: 'string', default: '5' },
    repeat: { type: 'string', default: '2' },
    only: { type: 'string', default: 'mysql,postgres' },
    mysql: { type: 'string', default: 'mysql://root@127.0.0.1:3306/dbsmack_perf' },
    pg: { type: 'string', default: 'postgres://root@127.0.0.1:5432/dbsmack_perf' },
    'table-size': { type: 'string', default: '100000' },
    reads: { type: 'string', default: 'onread' },
    sysbench: { type: 'boolean', default: false },
  },
});
const TIME = positiveOf(import.meta.url, 'time', values.time as string);
const SIZE = positiveOf(import.meta.url, 'table-size', values['table-size'] as string);
const CLIENTS = positivesOf(import.meta.url, 'clients', values.clients as string, true);
const REPEAT = positiveOf(import.meta.url, 'repeat', values.repeat as string);
const ONREAD = values.reads !== 'data';
// one measuring script at a time on this machine (tools.ts)
await measuringAlone();

/** One connection of the loop: what it sends per query, and how it recognises the end of a reply. */
interface Wire {
  /** Bytes that open the session (startup or handshake reply); called with each received chunk until ready. */
  handshake(chunk: Buffer, send: (b: Buffer) => void): boolean;
  /** The next query, pre-encoded but for its id. */
  query(id: number): Buffer;
  /** Feed received bytes; returns how many replies ended in them. */
  replies(chunk: Buffer): number;
}

// ---- PostgreSQL: Parse once, then Bind/Execute/Sync; a reply ends at ReadyForQuery ----------------

function pgMessage(type: string, body: Buffer): Buffer {
  const b = Buffer.alloc(5 + body.length);
  b.write(type, 0, 'latin1');
  b.writeInt32BE(4 + body.length, 1);
  body.copy(b, 5);
  return b;
}
const cstr = (s: string): Buffer => Buffer.from(`${s}\0`);

function pgWire(user: string, db: string): Wire {
  const parse = pgMessage(
    'P',
    Buffer.concat([cstr('f'), cstr('SELECT c FROM sbtest1 WHERE id=$1'), Buffer.alloc(2)]),
  );
  const execSync = Buffer.concat([pgMessage('E', Buffer.alloc(5)), pgMessage('S', Buffer.alloc(0))]);
  let carry = Buffer.alloc(0);
  let ready = false;
  const scan = (chunk: Buffer): number => {
    const buf = carry.length > 0 ? Buffer.concat([carry, chunk]) : chunk;
    let o = 0;
    let ends = 0;
    while (buf.length - o >= 5) {
      const len = buf.readInt32BE(o + 1);
      if (buf.length - o < 1 + len) break;
      if (buf[o] === 0x45) throw new Error(`PostgreSQL: ${buf.toString('latin1', o + 5, o + 1 + len)}`);
      if (buf[o] === 0x5a) ends++;
      o += 1 + len;
    }
    carry = Buffer.from(buf.subarray(o));
    return ends;
  };
  return {
    handshake(chunk, send) {
      if (chunk.length === 0) {
        const body = Buffer.concat([
          Buffer.from([0, 3, 0, 0]),
          cstr('user'),
          cstr(user),
          cstr('database'),
          cstr(db),
          Buffer.from([0]),
        ]);
        const b = Buffer.alloc(4);
        b.writeInt32BE(4 + body.length, 0);
        send(Buffer.concat([b, body]));
        return false;
      }
      if (scan(chunk) > 0 && !ready) {
        ready = true;
        send(parse);
      }
      return ready;
    },
    query(id) {
      const p = String(id);
      const body = Buffer.alloc(13 + p.length);
      let o = 0;
      body.write('f\0', 1, 'latin1'); // unnamed portal, statement "f"
      o = 3;
      o = body.writeInt16BE(0, o);
      o = body.writeInt16BE(1, o);
      o = body.writeInt32BE(p.length, o);
      o += body.write(p, o, 'latin1');
      body.writeInt16BE(0, o);
      return Buffer.concat([pgMessage('B', body), execSync]);
    },
    replies: scan,
  };
}

// ---- MySQL: COM_STMT_PREPARE once, then COM_STMT_EXECUTE; a reply ends at its second EOF -------------

function mysqlWire(user: string, db: string): Wire {
  let carry = Buffer.alloc(0);
  let stage: 'greeting' | 'auth' | 'prepare' | 'ready' = 'greeting';
  let prepareLeft = -1;
  let stmtId = 0;
  /** Within a reply: packets seen, EOFs seen. */
  let eofs = 0;
  let first = true;
  const packets = (chunk: Buffer, each: (p: Buffer, seq: number) => void): void => {
    const buf = carry.length > 0 ? Buffer.concat([carry, chunk]) : chunk;
    let o = 0;
    while (buf.length - o >= 4) {
      const len = buf.readUIntLE(o, 3);
      if (buf.length - o < 4 + len) break;
      each(buf.subarray(o + 4, o + 4 + len), buf[o + 3] as number);
      o += 4 + len;
    }
    carry = Buffer.from(buf.subarray(o));
  };
  const packet = (seq: number, payload: Buffer): Buffer => {
    const h = Buffer.alloc(4);
    h.writeUIntLE(payload.length, 0, 3);
    h[3] = seq;
    return Buffer.concat([h, payload]);
  };
  const fail = (p: Buffer): never => {
    throw new Error(`MySQL ${p.readUInt16LE(1)}: ${p.toString('utf8', 9)}`);
  };
  return {
    handshake(chunk, send) {
      if (chunk.length === 0) return false;
      packets(chunk, (p, seq) => {
        if (p[0] === 0xff) fail(p);
        if (stage === 'greeting') {
          // protocol 41, secure connection, plugin auth, connect with db, long password, transactions
          const caps = 0x200 | 0x8000 | 0x80000 | 0x8 | 0x1 | 0x2000;
          const head = Buffer.alloc(32);
          head.writeUInt32LE(caps, 0);
          head.writeUInt32LE(1 << 24, 4);
          head[8] = 45; // utf8mb4
          send(
            packet(
              seq + 1,
              Buffer.concat([head, cstr(user), Buffer.from([0]), cstr(db), cstr('mysql_native_password')]),
            ),
          );
          stage = 'auth';
        } else if (stage === 'auth') {
          if (p[0] === 0xfe)
            send(packet(seq + 1, Buffer.alloc(0))); // auth switch: empty password
          else if (p[0] === 0x00) {
            stage = 'prepare';
            send(
              packet(
                0,
                Buffer.concat([Buffer.from([0x16]), Buffer.from('SELECT c FROM sbtest1 WHERE id=?')]),
              ),
            );
          }
        } else if (stage === 'prepare') {
          if (prepareLeft < 0) {
            stmtId = p.readUInt32LE(1);
            const cols = p.readUInt16LE(5);
            const params = p.readUInt16LE(7);
            prepareLeft = (params > 0 ? params + 1 : 0) + (cols > 0 ? cols + 1 : 0);
          } else prepareLeft--;
          if (prepareLeft === 0) stage = 'ready';
        }
      });
      return stage === 'ready';
    },
    query(id) {
      const b = Buffer.alloc(4 + 1 + 4 + 1 + 4 + 1 + 1 + 2 + 8);
      b.writeUIntLE(b.length - 4, 0, 3);
      b[4] = 0x17;
      b.writeUInt32LE(stmtId, 5);
      b.writeUInt32LE(1, 10); // iterations; flags byte 9 = 0
      b[15] = 1; // new params bound; null bitmap byte 14 = 0
      b[16] = 0x08; // LONGLONG
      b.writeBigInt64LE(BigInt(id), 18);
      return b;
    },
    replies(chunk) {
      let ends = 0;
      packets(chunk, (p) => {
        if (p[0] === 0xff) fail(p);
        if (first) {
          first = false;
          eofs = 0;
          return;
        }
        if (p[0] === 0xfe && p.length < 9 && ++eofs === 2) {
          ends++;
          first = true;
        }
      });
      return ends;
    },
  };
}

// ---- the loop ------------------------------------------------------------------------------------------

function openSocket(url: string, onChunk: (b: Buffer) => void): net.Socket {
  const t = parseTarget(url);
  const port = t.port ?? (t.driver === 'mysql' ? 3306 : 5432);
  const host = t.host ?? '127.0.0.1';
  if (!ONREAD) return net.connect({ port, host }).on('data', onChunk);
  const buffer = Buffer.allocUnsafe(65536);
  // The chunk is a view of the reused buffer: the wire copies out of it what it keeps (its carry).
  return net.connect({
    port,
    host,
    onread: {
      buffer,
      callback: (n: number): boolean => {
        onChunk(buffer.subarray(0, n));
        return true;
      },
    },
  });
}

async function floor(url: string, clients: number): Promise<{ qps: number; usPerQuery: number }> {
  const t = parseTarget(url);
  let total = 0;
  let started = 0;
  const runOne = (): Promise<void> =>
    new Promise((resolve, reject) => {
      const wire =
        t.driver === 'mysql'
          ? mysqlWire(t.user ?? 'root', t.database ?? 'test')
          : pgWire(t.user ?? 'root', t.database ?? 'test');
      let ready = false;
      let n = 0;
      let end = 0;
      const next = (): void => {
        s.write(wire.query(1 + Math.floor(Math.random() * SIZE)));
      };
      const s = openSocket(url, (chunk) => {
        try {
          if (!ready) {
            ready = wire.handshake(chunk, (b) => s.write(b));
            if (ready) {
              started++;
              end = performance.now() + TIME * 1000;
              next();
            }
            return;
          }
          if (wire.replies(chunk) > 0) {
            n++;
            if (performance.now() < end) next();
            else {
              total += n;
              s.end();
              resolve();
            }
          }
        } catch (e) {
          reject(e);
        }
      });
      s.setNoDelay(true);
      s.on('error', reject);
      s.on('connect', () => wire.handshake(Buffer.alloc(0), (b) => s.write(b)));
    });
  const cpu0 = process.cpuUsage();
  const t0 = performance.now();
  await Promise.all(Array.from({ length: clients }, runOne));
  const secs = (performance.now() - t0) / 1000;
  const cpu = process.cpuUsage(cpu0);
  if (started !== clients) throw new Error(`only ${started} of ${clients} connections started`);
  return { qps: total / secs, usPerQuery: (cpu.user + cpu.system) / total };
}

const servers = (values.only as string).split(',').map((s) => s.trim());
console.log(
  `# Node.js ${process.version} floor: bare socket loop, reads through ${ONREAD ? 'onread' : "'data' events"}, ${TIME} s runs`,
);
console.log(
  [
    'server',
    'clients',
    'floor q/s',
    'floor µs/q',
    ...(values.sysbench ? ['sysbench q/s', 'sysbench µs/q', 'ratio'] : []),
  ].join('\t'),
);
for (const n of CLIENTS) {
  for (const server of servers) {
    const url = server === 'mysql' ? (values.mysql as string) : (values.pg as string);
    const ours: { qps: number; usPerQuery: number }[] = [];
    const peer: { qps: number; usPerQuery: number }[] = [];
    for (let i = 0; i < REPEAT; i++) {
      ours.push(await floor(url, n));
      if (values.sysbench) {
        const r = sysbenchRun('oltp_point_select', url, n, SIZE, TIME);
        peer.push({ qps: r.qps, usPerQuery: (r.cpuS * 1e6) / r.queries });
      }
    }
    const med = (xs: number[]): number => xs.sort((a, b) => a - b)[xs.length >> 1] as number;
    const oq = med(ours.map((x) => x.qps));
    const row = [server, String(n), oq.toFixed(0), med(ours.map((x) => x.usPerQuery)).toFixed(1)];
    if (values.sysbench) {
      const pq = med(peer.map((x) => x.qps));
      row.push(pq.toFixed(0), med(peer.map((x) => x.usPerQuery)).toFixed(1), (oq / pq).toFixed(2));
    }
    console.log(row.join('\t'));
  }
}
