/**
 * The MySQL wire encoders and decoders on buffers alone (no server): bytes in, fields out, with packets
 * split across reads at every position, 16 MiB+ packets joined, and the packets the client writes checked
 * byte by byte.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import {
  columnDefinitionsFollowing,
  cursor,
  decodeAuthSwitchRequest,
  decodeColumnDefinition,
  decodeErrPacket,
  decodeHandshakeV10,
  decodeOkPacket,
  decodePrepareOk,
  decodeTextResponse,
  decodeTextRow,
  endOfRowsStatus,
  isEndOfRows,
  MAX_PAYLOAD,
  MysqlPacketReader,
  readLenenc,
  T_LONGLONG,
  T_VAR_STRING,
} from '../src/driver/mysql-wire-decode.ts';
import {
  CLIENT_CONNECT_WITH_DB,
  CLIENT_MYSQL,
  CLIENT_PLUGIN_AUTH,
  CLIENT_PLUGIN_AUTH_LENENC_CLIENT_DATA,
  CLIENT_PROTOCOL_41,
  commandPacket,
  ExecuteEncoder,
  handshakeResponsePacket,
  lenencSize,
  MARIADB_CACHE_METADATA,
  writeLenenc,
} from '../src/driver/mysql-wire-encode.ts';

/** Collects the packets a reader hands over, fed from chunks copied into its read buffer. */
class Collect extends MysqlPacketReader {
  readonly got: { seq: number; payload: Buffer }[] = [];
  constructor(size = 64 * 1024) {
    super(Buffer.alloc(size));
  }
  protected onPacket(b: Buffer, s: number, e: number, seq: number): void {
    this.got.push({ seq, payload: Buffer.from(b.subarray(s, e)) });
  }
  feed(data: Buffer, cuts: number[]): void {
    let at = 0;
    for (const cut of [...cuts, data.length]) {
      while (at < cut) {
        const n = Math.min(cut - at, this.rb.length);
        data.copy(this.rb, 0, at, at + n);
        this.onRead(n);
        at += n;
      }
    }
  }
}

function packet(seq: number, payload: Buffer): Buffer {
  const h = Buffer.from([payload.length & 0xff, (payload.length >> 8) & 0xff, payload.length >> 16, seq]);
  return Buffer.concat([h, payload]);
}

const lenencStr = (s: string): Buffer => {
  const v = Buffer.from(s, 'utf8');
  const b = Buffer.alloc(lenencSize(v.length));
  writeLenenc(b, 0, v.length);
  return Buffer.concat([b, v]);
};

/** A ColumnDefinition41 payload for column `name` of `type` (table db.t). */
const columnDefinition = (name: string, type: number): Buffer =>
  Buffer.concat([
    lenencStr('def'),
    lenencStr('db'),
    lenencStr('t'),
    lenencStr('t'),
    lenencStr(name),
    lenencStr(name),
    Buffer.from([0x0c, 0x21, 0, 0xff, 0, 0, 0, type, 0, 0, 0, 0, 0]),
  ]);

test('mysql wire: packets split across reads at every position arrive whole and in order', () => {
  const payloads = [
    Buffer.from([0x01]), // column count
    Buffer.alloc(300, 7), // longer than a read of a few bytes
    Buffer.from([]), // empty payload
    Buffer.from([0xfe, 0, 0, 2, 0]), // EOF
  ];
  const stream = Buffer.concat(payloads.map((p, i) => packet(i + 1, p)));
  for (let cut = 0; cut <= stream.length; cut++) {
    for (const second of [cut, Math.min(stream.length, cut + 3)]) {
      const r = new Collect();
      r.feed(stream, cut === second ? [cut] : [cut, second]);
      assert.deepEqual(
        r.got.map((g) => g.seq),
        [1, 2, 3, 4],
        `cuts at ${cut}, ${second}`,
      );
      assert.deepEqual(
        r.got.map((g) => g.payload),
        payloads,
      );
    }
  }
  const bytewise = new Collect(1);
  bytewise.feed(stream, []);
  assert.deepEqual(
    bytewise.got.map((g) => g.payload),
    payloads,
    'one byte per read',
  );
});

test('mysql wire: a payload of 16 MiB or more comes in pieces and is joined', () => {
  const big = Buffer.alloc(MAX_PAYLOAD + 10);
  for (let i = 0; i < big.length; i += 4099) big[i] = i & 0xff;
  const stream = Buffer.concat([
    packet(1, big.subarray(0, MAX_PAYLOAD)),
    packet(2, big.subarray(MAX_PAYLOAD)),
    packet(3, Buffer.from([0xfe, 0, 0, 0, 0])),
  ]);
  const r = new Collect();
  r.feed(stream, [5, 70_000]);
  assert.equal(r.got.length, 2);
  assert.equal(r.got[0]?.seq, 2, 'the joined packet carries the last piece’s sequence id');
  assert.ok(r.got[0]?.payload.equals(big), 'joined payload');
  assert.equal(isEndOfRows(r.got[0]?.payload as Buffer, 0, big.length), false, 'a huge row is not an EOF');
  // exactly 16 MiB - 1: followed by an empty packet
  const exact = Buffer.alloc(MAX_PAYLOAD, 1);
  const r2 = new Collect();
  r2.feed(Buffer.concat([packet(0, exact), packet(1, Buffer.alloc(0))]), []);
  assert.equal(r2.got.length, 1);
  assert.equal(r2.got[0]?.payload.length, MAX_PAYLOAD);
  const sent = commandPacket(exact);
  assert.equal(sent.length, MAX_PAYLOAD + 8, 'the client splits the same way');
  assert.deepEqual([...sent.subarray(MAX_PAYLOAD + 4)], [0, 0, 0, 1]);
});

test('mysql wire: length-encoded integers of each width round-trip', () => {
  for (const n of [0, 250, 251, 0xffff, 0x10000, 0xffffff, 0x1000000, 2 ** 40 + 5]) {
    const b = Buffer.alloc(12, 0xaa);
    const end = writeLenenc(b, 1, n);
    assert.equal(end - 1, lenencSize(n), `size of ${n}`);
    assert.equal(readLenenc(b, 1), n);
    assert.equal(cursor.at, end);
  }
});

test('mysql wire: ERR, OK, EOF and prepare OK packets decode to their fields', () => {
  const err = Buffer.concat([Buffer.from([0xff, 0x26, 0x04]), Buffer.from('#23000Duplicate entry ‘1’')]);
  assert.deepEqual(decodeErrPacket(err, 0, err.length), {
    errno: 1062,
    sqlState: '23000',
    message: 'Duplicate entry ‘1’',
  });
  const old = Buffer.concat([Buffer.from([0xff, 0x15, 0x04]), Buffer.from('Access denied')]);
  assert.deepEqual(decodeErrPacket(old, 0, old.length), {
    errno: 1045,
    sqlState: undefined,
    message: 'Access denied',
  });
  const ok = Buffer.from([0x00, 0xfd, 0x70, 0x11, 0x01, 0xfc, 0x2c, 0x01, 0x0a, 0x00, 0, 0]);
  assert.deepEqual({ ...decodeOkPacket(ok, 0) }, { affectedRows: 70_000, lastInsertId: 300, status: 10 });
  const eof = Buffer.from([0xfe, 0, 0, 0x08, 0x00]);
  assert.ok(isEndOfRows(eof, 0, eof.length));
  assert.equal(endOfRowsStatus(eof, 0, false), 8, 'EOF status: more results');
  const okEnd = Buffer.from([0xfe, 0, 0, 0x02, 0x00, 0, 0]);
  assert.equal(endOfRowsStatus(okEnd, 0, true), 2, 'OK with 0xFE header under DEPRECATE_EOF');
  const prep = Buffer.from([0x00, 7, 0, 0, 0, 2, 0, 3, 0, 0, 0, 0]);
  assert.deepEqual(decodePrepareOk(prep, 0), { statementId: 7, columns: 2, params: 3 });
});

test('mysql wire: handshake, auth switch, column definitions and text rows', () => {
  /** A handshake with the low capability byte `low0` (bit 0: CLIENT_MYSQL) and MariaDB's `extended`. */
  const handshake = (low0: number, extended: number): Buffer => {
    const reserved = Buffer.alloc(10);
    reserved.writeUInt32LE(extended, 6);
    return Buffer.concat([
      Buffer.from([10]),
      Buffer.from('5.5.5-10.11.19-MariaDB\0', 'latin1'),
      Buffer.from([0x2a, 0, 0, 0]), // connection id 42
      Buffer.from('abcdefgh\0', 'latin1'),
      Buffer.from([low0, 0xf7]), // capabilities, low
      Buffer.from([0x2d, 0x02, 0x00]), // charset, status
      Buffer.from([0xff, 0x81]), // capabilities, high (PLUGIN_AUTH 0x80000 set)
      Buffer.from([21]), // auth data length
      reserved, // 6 reserved, then MariaDB's extended capabilities
      Buffer.from('ijklmnopqrst\0', 'latin1'),
      Buffer.from('mysql_native_password\0', 'latin1'),
    ]);
  };
  const hs = handshake(0xff, 0x1d);
  const h = decodeHandshakeV10(hs, 0, hs.length);
  assert.equal(h.serverVersion, '5.5.5-10.11.19-MariaDB');
  assert.equal(h.connectionId, 42);
  assert.equal(h.plugin, 'mysql_native_password');
  assert.equal(h.authData.toString('latin1'), 'abcdefghijklmnopqrst\0');
  assert.equal(h.capabilities, 0x81fff7ff);
  assert.equal(h.mariadbCapabilities, 0, 'CLIENT_MYSQL set: the reserved bytes mean nothing');
  const mariadb = handshake(0xfe, 0x1d);
  const m = decodeHandshakeV10(mariadb, 0, mariadb.length);
  assert.equal(m.capabilities, 0x81fff7fe);
  assert.equal(m.mariadbCapabilities, 0x1d, 'MariaDB: extended capabilities (CACHE_METADATA is 0x10)');
  assert.equal(m.plugin, 'mysql_native_password', 'the fields after them are where they were');

  const sw = Buffer.concat([
    Buffer.from([0xfe]),
    Buffer.from('caching_sha2_password\0', 'latin1'),
    Buffer.from('12345'),
  ]);
  const d = decodeAuthSwitchRequest(sw, 0, sw.length);
  assert.equal(d.plugin, 'caching_sha2_password');
  assert.equal(d.data.toString(), '12345');

  const c1 = decodeColumnDefinition(columnDefinition('id', T_LONGLONG), 0);
  const c2 = decodeColumnDefinition(columnDefinition('näme', T_VAR_STRING), 0);
  assert.deepEqual(
    [c1, c2],
    [
      { name: 'id', type: T_LONGLONG },
      { name: 'näme', type: T_VAR_STRING },
    ],
  );
  const row = Buffer.concat([lenencStr('9007199254740993'), Buffer.from([0xfb])]);
  assert.deepEqual(decodeTextRow(row, 0, [c1, c2]), { id: '9007199254740993', näme: null });
  const row2 = Buffer.concat([lenencStr('-12'), lenencStr('x'.repeat(300))]);
  assert.deepEqual(decodeTextRow(row2, 0, [c1, c2]), { id: -12, näme: 'x'.repeat(300) });
});

test('mysql wire: COM_STMT_EXECUTE sends parameter types once, again only when they change', () => {
  const enc = new ExecuteEncoder(5, 3);
  const first = enc.encode([1, 'ab', null]);
  assert.deepEqual(
    [...first],
    [
      ...[29, 0, 0, 0], // payload length 29, sequence 0
      0x17, // COM_STMT_EXECUTE
      5,
      0,
      0,
      0, // statement id
      0, // no cursor
      1,
      0,
      0,
      0, // iteration count
      0b100, // null bitmap: the third parameter
      1, // new params bound
      0x08,
      0,
      0xfd,
      0,
      0x06,
      0, // LONGLONG, VAR_STRING, NULL
      1,
      0,
      0,
      0,
      0,
      0,
      0,
      0, // 1
      2,
      0x61,
      0x62, // 'ab'
    ],
  );
  const second = enc.encode([2 ** 40, 'c', null]);
  assert.equal(second[15], 0, 'same types: not bound again');
  assert.deepEqual([...second.subarray(16)], [0, 0, 0, 0, 0, 1, 0, 0, 1, 0x63]);
  const third = enc.encode([1.5, 'c', null]);
  assert.equal(third[15], 1, 'a double where an integer was: types sent again');
  assert.equal(third[16], 0x05);
  assert.equal(third.readDoubleLE(22), 1.5);
  const bare = new ExecuteEncoder(9, 0).encode(undefined);
  assert.deepEqual([...bare], [10, 0, 0, 0, 0x17, 9, 0, 0, 0, 0, 1, 0, 0, 0]);
});

test('mysql wire: COM_STMT_EXECUTE writes all four bytes of the statement id and a clean null bitmap', () => {
  // the packet's buffer is not zeroed (Buffer.allocUnsafe): hand the encoder a dirty one, so that a byte it
  // leaves unwritten shows
  const allocUnsafe = Buffer.allocUnsafe;
  Buffer.allocUnsafe = (n: number) => Buffer.alloc(n, 0xff);
  let p: Buffer;
  try {
    p = new ExecuteEncoder(0x84030201, 10).encode([1, 2, 3, 4, 5, 6, 7, 8, null, 10]);
  } finally {
    Buffer.allocUnsafe = allocUnsafe;
  }
  assert.deepEqual([...p.subarray(5, 9)], [0x01, 0x02, 0x03, 0x84], 'statement id, little-endian');
  assert.deepEqual([...p.subarray(14, 16)], [0, 0b1], 'null bitmap: only the ninth parameter');
  assert.equal(p[16], 1, 'new params bound');
  assert.deepEqual([...p.subarray(17, 19)], [0x08, 0], 'the first type: LONGLONG');
  assert.deepEqual([...p.subarray(33, 37)], [0x06, 0, 0x08, 0], 'the ninth NULL, the tenth LONGLONG');
});

test('mysql wire: an execution for a batch always carries the types, and so does the one after it', () => {
  // a batch may end before an execution in it is sent (its first error): the server must never run one
  // with types it did not get (MariaDB: 1210 "Incorrect arguments to mysqld_stmt_execute")
  const enc = new ExecuteEncoder(5, 1);
  assert.equal(enc.encode([1])[15], 1, 'the first: types');
  assert.equal(enc.encode([2])[15], 0, 'the same types again: none');
  assert.equal(enc.encode([3], true)[15], 1, 'batched: types');
  assert.equal(enc.encode([4], true)[15], 1, 'batched again: types again');
  assert.equal(enc.encode([5])[15], 1, 'after a batched one: types');
  assert.equal(enc.encode([6])[15], 0, 'then none again');
});

test('mysql wire: the handshake response carries user, answer, database and plugin', () => {
  const caps =
    CLIENT_PROTOCOL_41 | CLIENT_PLUGIN_AUTH | CLIENT_PLUGIN_AUTH_LENENC_CLIENT_DATA | CLIENT_CONNECT_WITH_DB;
  /** Bob's response to db1, with these capabilities and MariaDB's extended ones. */
  const response = (capabilities: number, mariadbCapabilities?: number): Buffer =>
    handshakeResponsePacket({
      capabilities,
      mariadbCapabilities,
      user: 'bob',
      authResponse: Buffer.from([1, 2, 3]),
      database: 'db1',
      plugin: 'mysql_native_password',
      seq: 1,
    });
  const b = response(caps);
  assert.equal(b[3], 1, 'sequence id');
  assert.equal(b.readUInt32LE(4), caps);
  assert.equal(b[12], 224, 'utf8mb4');
  const rest = b.subarray(4 + 32);
  assert.equal(rest.toString('latin1'), 'bob\0\x03\x01\x02\x03db1\0mysql_native_password\0');
  assert.deepEqual([...b.subarray(4 + 9, 4 + 32)], new Array(23).fill(0), 'nothing extended asked for');
  const asking = response(caps, MARIADB_CACHE_METADATA);
  assert.equal(asking.readUInt32LE(4 + 28), 0x10, "MariaDB's extended capabilities in the last 4 of 23");
  assert.deepEqual(asking.subarray(4 + 32), rest);
  const toMysql = response(caps | CLIENT_MYSQL, MARIADB_CACHE_METADATA);
  assert.equal(toMysql.readUInt32LE(4 + 28), 0, 'with CLIENT_MYSQL the filler stays zero');
});

test('mysql wire: a text response with and without column definitions (MariaDB cache metadata)', () => {
  const column = commandPacket(columnDefinition('n', T_LONGLONG), 2);
  const okEnd = Buffer.from([0xfe, 0, 0, 0x02, 0x00, 0, 0]);
  const rows = [commandPacket(lenencStr('5'), 3), commandPacket(lenencStr('6'), 4), commandPacket(okEnd, 5)];
  // Column count 1, then (under cache metadata) the byte saying the definitions follow.
  const plain = Buffer.concat([commandPacket(Buffer.from([1]), 1), column, ...rows]);
  assert.deepEqual(decodeTextResponse(plain, true, false), [{ n: 5 }, { n: 6 }]);
  const flagged = Buffer.concat([commandPacket(Buffer.from([1, 1]), 1), column, ...rows]);
  assert.deepEqual(decodeTextResponse(flagged, true, true), [{ n: 5 }, { n: 6 }]);
  const skipped = Buffer.concat([commandPacket(Buffer.from([1, 0]), 1), ...rows]);
  assert.equal(decodeTextResponse(skipped, true, true).length, 2, 'rows follow the count at once');
  assert.equal(columnDefinitionsFollowing(Buffer.from([3, 1]), 0, true), 3);
  assert.equal(columnDefinitionsFollowing(Buffer.from([3, 0]), 0, true), 0);
  assert.equal(columnDefinitionsFollowing(Buffer.from([3]), 0, false), 3);
});
