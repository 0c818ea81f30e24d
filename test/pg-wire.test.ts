/**
 * The PostgreSQL wire encoders and decoders on buffers alone (no server): messages split across reads at
 * every position, the decoders' fields, and the Bind the client writes checked byte by byte.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import {
  decodeBackendKeyData,
  decodeDataRow,
  decodeErrorResponse,
  decodeParameterStatus,
  decodeRowDescription,
  PgMessageReader,
  tagCount,
} from '../src/driver/pg-wire-decode.ts';
import {
  bindHead,
  bindMessage,
  EXEC_SYNC,
  frame,
  int16,
  int32,
  paramText,
  parseMessage,
  startupMessage,
  writeInteger,
} from '../src/driver/pg-wire-encode.ts';

class Collect extends PgMessageReader {
  readonly got: { type: string; body: Buffer }[] = [];
  readonly rb: Buffer;
  constructor(size = 64 * 1024) {
    const rb = Buffer.alloc(size);
    super(rb);
    this.rb = rb;
  }
  protected onMessage(type: number, b: Buffer, s: number, e: number): void {
    this.got.push({ type: String.fromCharCode(type), body: Buffer.from(b.subarray(s, e)) });
  }
  feed(data: Buffer, cuts: number[]): void {
    let at = 0;
    for (const cut of [...cuts, data.length]) {
      while (at < cut) {
        const n = Math.min(cut - at, this.rb.length);
        data.copy(this.rb, 0, at, at + n);
        this.onRead(n, this.rb);
        at += n;
      }
    }
  }
}

const dataRow = (...values: (string | null)[]): Buffer =>
  frame(
    'D',
    int16(values.length),
    ...values.map((v) =>
      v === null ? int32(-1) : Buffer.concat([int32(Buffer.byteLength(v)), Buffer.from(v)]),
    ),
  );

test('pg wire: messages split across reads at every position arrive whole and in order', () => {
  const msgs = [
    frame('2'),
    dataRow('1', null, 'x'.repeat(200)),
    frame('C', 'SELECT 1'),
    frame('Z', Buffer.from('I')),
  ];
  const stream = Buffer.concat(msgs);
  const want = msgs.map((m) => ({ type: String.fromCharCode(m[0] as number), body: m.subarray(5) }));
  for (let cut = 0; cut <= stream.length; cut++) {
    for (const second of [cut, Math.min(stream.length, cut + 2)]) {
      const r = new Collect();
      r.feed(stream, cut === second ? [cut] : [cut, second]);
      assert.deepEqual(r.got, want, `cuts at ${cut}, ${second}`);
    }
  }
  const bytewise = new Collect(1);
  bytewise.feed(stream, []);
  assert.deepEqual(bytewise.got, want, 'one byte per read');
  // a message larger than the read buffer and than the carry's first size
  const big = dataRow('y'.repeat(2_000_000));
  const r = new Collect();
  r.feed(Buffer.concat([big, frame('Z', Buffer.from('I'))]), [3]);
  assert.equal(r.got.length, 2);
  assert.ok(r.got[0]?.body.equals(big.subarray(5)));
});

test('pg wire: CommandComplete tags count DataRows for SELECT, the tag’s number otherwise', () => {
  const count = (tag: string, rows: number): number => {
    const b = Buffer.from(`${tag}\0`);
    return tagCount(b, 0, b.length - 1, rows);
  };
  assert.equal(count('SELECT 5', 5), 5);
  assert.equal(count('SELECT 5', 3), 3, 'rows counted, not the tag');
  assert.equal(count('FETCH 2', 2), 2);
  assert.equal(count('INSERT 0 3', 0), 3);
  assert.equal(count('UPDATE 12', 0), 12);
  assert.equal(count('DELETE 0', 0), 0);
  assert.equal(count('BEGIN', 0), 0);
  assert.equal(count('SET', 0), 0);
});

test('pg wire: RowDescription, DataRow, ErrorResponse, ParameterStatus, BackendKeyData', () => {
  const field = (name: string): Buffer => Buffer.concat([Buffer.from(`${name}\0`), Buffer.alloc(18)]);
  const rd = frame('T', int16(2), field('id'), field('näme'));
  const names = decodeRowDescription(rd, 5);
  assert.deepEqual(names, ['id', 'näme']);
  const dr = dataRow('7', null);
  assert.deepEqual(decodeDataRow(dr, 5, names), { id: '7', näme: null });
  assert.deepEqual(decodeDataRow(dataRow('a', 'b', 'c'), 5, names), { id: 'a', näme: 'b', '?column?2': 'c' });
  const er = frame('E', 'SFEHLER', 'VFATAL', 'C57P01', 'Mterminating connection', 'Rproc', Buffer.from([0]));
  assert.deepEqual(decodeErrorResponse(er, 5, er.length), {
    severity: 'FATAL',
    code: '57P01',
    message: 'terminating connection',
  });
  const ps = frame('S', 'server_version', '15.18');
  assert.deepEqual(decodeParameterStatus(ps, 5, ps.length), { name: 'server_version', value: '15.18' });
  assert.deepEqual(decodeBackendKeyData(frame('K', int32(4242), int32(-5)), 5), {
    processId: 4242,
    secretKey: -5,
  });
});

test('pg wire: Bind writes text parameters, NULLs as -1, then Execute and Sync', () => {
  const b = Buffer.from(bindMessage(null, bindHead('s1'), [42, 'é', null, true, -7, 1.5, 10n], EXEC_SYNC));
  const want = frame(
    'B',
    Buffer.from('\0s1\0\0\0', 'latin1'),
    int16(7),
    ...[['42'], ['é'], [null], ['t'], ['-7'], ['1.5'], ['10']].map(([v]) =>
      v === null
        ? int32(-1)
        : Buffer.concat([int32(Buffer.byteLength(v as string)), Buffer.from(v as string)]),
    ),
    int16(0),
  );
  assert.ok(b.equals(Buffer.concat([want, EXEC_SYNC])), b.toString('hex'));
  const w = Buffer.alloc(24);
  for (const v of [0, 9, -123, 2 ** 53 - 1]) {
    const end = writeInteger(w, 1, v);
    assert.equal(w.toString('latin1', 1, end), String(v));
  }
  assert.equal(paramText([1, null, 'a "b"', [2]]), '{"1",NULL,"a \\"b\\"",{"2"}}');
  assert.equal(paramText(new Uint8Array([1, 255])), '\\x01ff');
  const st = startupMessage([['user', 'u']]);
  assert.equal(st.readInt32BE(0), st.length);
  assert.equal(st.readInt32BE(4), 196608);
  assert.equal(st.toString('latin1', 8), 'user\0u\0\0');
});

test("pg wire: Parse declares its parameters' types as OIDs, as libpq's PQprepare does, or none", () => {
  // the bytes sysbench's pgsql driver sends for its non-index update (strace): varchar 1043, int8 20
  const typed = parseMessage('s2', 'UPDATE t SET c=$1 WHERE id=$2', ['varchar', 'int8']);
  assert.equal(
    typed.toString('hex'),
    Buffer.concat([
      Buffer.from('P', 'latin1'),
      int32(4 + 3 + 30 + 2 + 8),
      Buffer.from('s2\0UPDATE t SET c=$1 WHERE id=$2\0', 'latin1'),
      int16(2),
      int32(1043),
      int32(20),
    ]).toString('hex'),
  );
  assert.ok(parseMessage('', 'SELECT 1').equals(frame('P', '', 'SELECT 1', int16(0))));
  assert.throws(() => parseMessage('', 'SELECT $1', ['int9']), /unknown parameter type int9/);
});
