/**
 * HdrHistogram's V2 compressed encoding (the base64 form every snapshot, stored run and history entry
 * carries) for the main thread's JavaScript histograms, byte for byte what hdr-histogram-js's
 * `encodeIntoCompressedBase64` writes and what its `decodeFromCompressedBase64` reads
 * (test/recording-histogram.test.ts compares them). Why not the package's own: its encoding module
 * loads pako, a JavaScript zlib it uses only where there is no node:zlib, about 12 ms of CPU in every run.
 *
 * The format: a compressed envelope (cookie 0x1c849314, length, then the zlib deflate of the plain form);
 * the plain form is a 40-byte big-endian header (cookie 0x1c849313, payload length, normalizing offset 1,
 * significant digits, lowest discernible value, highest trackable value, conversion ratio 1 as an
 * integer) and then the counts from index 0 to the highest recorded, each a ZigZag LEB128 number of up to
 * 9 bytes of seven bits, a run of two or more empty buckets written as minus its length.
 */
import { deflateSync, inflateSync } from 'node:zlib';
import type { Histogram } from 'hdr-histogram-js';
import { constructorFromBucketSize } from 'hdr-histogram-js/dist/JsHistogramFactory.js';

const PLAIN_COOKIE_BASE = 0x1c849303;
const COMPRESSED_COOKIE_BASE = 0x1c849304;
/** The low bit of the word-size nibble says the counts are ZigZag LEB128 with runs of zeros. */
const PLAIN_COOKIE = PLAIN_COOKIE_BASE | 0x10;
const COMPRESSED_COOKIE = COMPRESSED_COOKIE_BASE | 0x10;
const HEADER = 40;
const TWO_32 = 2 ** 32;

/** The internals of a JS histogram the codec reads and writes (those its own encoder uses). */
interface Counts {
  numberOfSignificantValueDigits: number;
  lowestDiscernibleValue: number;
  highestTrackableValue: number;
  maxValue: number;
  getCountAtIndex(i: number): number;
  setCountAtIndex(i: number, c: number): void;
  countsArrayIndex(v: number): number;
  establishInternalTackingValues(length?: number): void;
}

/** Why a snapshot cannot be read: thrown as the package does (a plain Error, the message says which). */
function bad(what: string): never {
  throw new Error(`histogram encoding: ${what}`);
}

/**
 * A snapshot's counts as read from its encoding, without a histogram: the header's layout, then the buckets
 * that hold values, as parallel lists of counts-array index and count (`n` of them, lowest index first), and
 * `end`, the index after the last one the encoding covers. The lists are this module's own, reused by the
 * next call: read them before decoding again.
 */
interface DecodedCounts {
  lowest: number;
  highest: number;
  digits: number;
  n: number;
  index: Int32Array;
  count: Float64Array;
  end: number;
}

const decoded: DecodedCounts = {
  lowest: 1,
  highest: 2,
  digits: 3,
  n: 0,
  index: new Int32Array(1024),
  count: new Float64Array(1024),
  end: 0,
};

/** Read the compressed base64 encoding's header and counts (see `DecodedCounts`: the lists are reused). */
function decodeCounts(b64: string): DecodedCounts {
  const outer = Buffer.from(b64.trim(), 'base64');
  if (outer.length < 8 || (outer.readUInt32BE(0) & ~0xf0) !== COMPRESSED_COOKIE_BASE) {
    bad('not the V2 compressed encoding');
  }
  const plain = inflateSync(outer.subarray(8, 8 + outer.readUInt32BE(4)));
  if (plain.length < HEADER || (plain.readUInt32BE(0) & ~0xf0) !== PLAIN_COOKIE_BASE) {
    bad('no V2 encoding cookie');
  }
  const d = decoded;
  const payload = plain.readUInt32BE(4);
  d.digits = plain.readUInt32BE(12);
  d.lowest = readInt64(plain, 16);
  d.highest = Math.max(readInt64(plain, 24), 0);
  const end = Math.min(plain.length, HEADER + payload);
  let at = HEADER;
  let index = 0;
  let n = 0;
  while (at < end) {
    // ZigZag LEB128, up to 9 bytes of seven bits (the package reads seven of the ninth too)
    let v = 0;
    let scale = 1;
    let b = 0;
    let k = 0;
    do {
      b = plain[at++] ?? 0;
      v += (b & 0x7f) * scale;
      scale *= 128;
      k++;
    } while ((b & 0x80) !== 0 && k < 9);
    const count = v % 2 === 0 ? v / 2 : -(v + 1) / 2;
    if (count < 0) index -= count;
    else {
      if (count > 0) {
        if (n === d.index.length) grow(d);
        d.index[n] = index;
        d.count[n] = count;
        n++;
      }
      index++;
    }
  }
  d.n = n;
  d.end = index;
  return d;
}

function grow(d: DecodedCounts): void {
  const index = new Int32Array(d.index.length * 2);
  const count = new Float64Array(d.count.length * 2);
  index.set(d.index);
  count.set(d.count);
  d.index = index;
  d.count = count;
}

/** Decode the compressed base64 encoding into a JS histogram of 64-bit counts. */
export function decodeCompressed(b64: string): Histogram {
  const d = decodeCounts(b64);
  const Ctor = constructorFromBucketSize(64);
  const h = new Ctor(d.lowest, d.highest, d.digits) as unknown as Counts;
  for (let i = 0; i < d.n; i++) h.setCountAtIndex(d.index[i] as number, d.count[i] as number);
  h.establishInternalTackingValues(d.end);
  return h as unknown as Histogram;
}

/** Encode a JS histogram in the compressed base64 encoding. */
export function encodeCompressed(histogram: Histogram): string {
  const h = histogram as unknown as Counts;
  const limit = h.countsArrayIndex(h.maxValue) + 1;
  const out = new Bytes(HEADER + 64);
  out.u32(PLAIN_COOKIE);
  out.u32(0); // the payload's length, written below
  out.u32(1);
  out.u32(h.numberOfSignificantValueDigits);
  out.i64(h.lowestDiscernibleValue);
  out.i64(h.highestTrackableValue);
  out.i64(1);
  let i = 0;
  while (i < limit) {
    const count = h.getCountAtIndex(i++);
    if (count < 0) bad(`negative count ${count} at index ${i}`);
    let zeros = 0;
    if (count === 0) {
      zeros = 1;
      while (i < limit && h.getCountAtIndex(i) === 0) {
        zeros++;
        i++;
      }
    }
    out.zigzag(zeros > 1 ? -zeros : count);
  }
  const plain = out.done();
  plain.writeUInt32BE(plain.length - HEADER, 4);
  return compressedBase64(plain);
}

/**
 * The compressed envelope around a plain encoding, in base64: the cookie, the length, and node:zlib's
 * deflate (the package's own choice under Node).
 */
function compressedBase64(plain: Uint8Array): string {
  const compressed = deflateSync(plain);
  const out = Buffer.allocUnsafe(8 + compressed.byteLength);
  out.writeInt32BE(COMPRESSED_COOKIE, 0);
  out.writeInt32BE(compressed.byteLength, 4);
  compressed.copy(out, 8);
  return out.toString('base64');
}

/** A 64-bit integer as the package reads it: high and low 32-bit halves, unsigned. */
function readInt64(b: Buffer, at: number): number {
  return b.readUInt32BE(at) * TWO_32 + b.readUInt32BE(at + 4);
}

/** A growing big-endian byte buffer. */
class Bytes {
  private buf: Buffer;
  private at = 0;
  constructor(size: number) {
    this.buf = Buffer.allocUnsafe(size);
  }
  private room(n: number): void {
    if (this.at + n <= this.buf.length) return;
    const bigger = Buffer.allocUnsafe(Math.max(this.buf.length * 2, this.at + n));
    this.buf.copy(bigger, 0, 0, this.at);
    this.buf = bigger;
  }
  u32(v: number): void {
    this.room(4);
    this.buf.writeUInt32BE(v >>> 0, this.at);
    this.at += 4;
  }
  i64(v: number): void {
    this.u32(Math.floor(v / TWO_32));
    this.u32(v % TWO_32);
  }
  /** ZigZag LEB128-64b9B, as the package writes it (seven bits a byte, a ninth byte of eight). */
  zigzag(value: number): void {
    let v = value >= 0 ? value * 2 : -value * 2 - 1;
    this.room(9);
    for (let n = 0; n < 8; n++) {
      if (v < 128) {
        this.buf[this.at++] = v;
        return;
      }
      this.buf[this.at++] = (v % 128) | 0x80;
      v = Math.floor(v / 128);
    }
    this.buf[this.at++] = v;
  }
  done(): Buffer {
    return this.buf.subarray(0, this.at);
  }
}
