/**
 * PostgreSQL's `pg_prng` (xoroshiro128** 1.0, seeded through splitmix64), so that a pgbench script's random
 * functions draw the same numbers as pgbench does from the same seed. The 64-bit state lives in four
 * 32-bit halves: the hot path (`random(1, 100000 * :scale)` once per transaction) stays in small integers
 * and allocates nothing; BigInt is used only for seeding and for ranges wider than 2^53.
 */

const TWO32 = 4294967296;
const TWO52 = 4503599627370496;
const MASK64 = (1n << 64n) - 1n;

/** Low 64 bits of a bigint as an unsigned value. */
export const u64 = (v: bigint): bigint => v & MASK64;

function splitmix64(state: { s: bigint }): bigint {
  state.s = u64(state.s + 0x9e3779b97f4a7c15n);
  let v = state.s;
  v = u64((v ^ (v >> 30n)) * 0xbf58476d1ce4e5b9n);
  v = u64((v ^ (v >> 27n)) * 0x94d049bb133111ebn);
  return v ^ (v >> 31n);
}

/** Position of the highest set bit of a positive integer below 2^53 (pg_leftmost_one_pos64). */
function leftmostOne(n: number): number {
  return n >= TWO32 ? 63 - Math.clz32(Math.floor(n / TWO32)) : 31 - Math.clz32(n);
}

export class PgPrng {
  private s0h = 0;
  private s0l = 0;
  private s1h = 0;
  private s1l = 0;
  /** The halves of the last 64-bit output. */
  private oh = 0;
  private ol = 0;

  constructor(seed: bigint = 0n) {
    this.seed(seed);
  }

  /** pg_prng_seed: fill the state from a 64-bit seed; never all zeroes. */
  seed(seed: bigint): void {
    const st = { s: u64(seed) };
    const a = splitmix64(st);
    const b = splitmix64(st);
    this.setState(a, b);
    if (a === 0n && b === 0n) this.setState(0x5851f42d4c957f2dn, 0x14057b7ef767814fn);
  }

  private setState(a: bigint, b: bigint): void {
    this.s0h = Number(a >> 32n);
    this.s0l = Number(a & 0xffffffffn);
    this.s1h = Number(b >> 32n);
    this.s1l = Number(b & 0xffffffffn);
  }

  /** A copy of the state (a transaction's start, restored when it is retried). */
  save(): number[] {
    return [this.s0h, this.s0l, this.s1h, this.s1l];
  }

  /** The same into an array of the caller's, without allocating. */
  saveTo(out: number[]): void {
    out[0] = this.s0h;
    out[1] = this.s0l;
    out[2] = this.s1h;
    out[3] = this.s1l;
  }

  /** The state into four slots of `buf` from `at` (a flat ring of saved states: no object per state). */
  saveInto(buf: Float64Array, at: number): void {
    buf[at] = this.s0h;
    buf[at + 1] = this.s0l;
    buf[at + 2] = this.s1h;
    buf[at + 3] = this.s1l;
  }

  restoreFrom(buf: Float64Array, at: number): void {
    this.s0h = buf[at] as number;
    this.s0l = buf[at + 1] as number;
    this.s1h = buf[at + 2] as number;
    this.s1l = buf[at + 3] as number;
  }

  restore(s: readonly number[]): void {
    this.s0h = s[0] as number;
    this.s0l = s[1] as number;
    this.s1h = s[2] as number;
    this.s1l = s[3] as number;
  }

  /** One step of xoroshiro128**; the output is left in `oh`/`ol`. */
  private step(): void {
    const s0h = this.s0h;
    const s0l = this.s0l;
    const sxh = (this.s1h ^ s0h) >>> 0;
    const sxl = (this.s1l ^ s0l) >>> 0;
    // val = rotl(s0 * 5, 7) * 9
    let pl = s0l * 5;
    let ph = (Math.imul(s0h, 5) + Math.floor(pl / TWO32)) >>> 0;
    pl >>>= 0;
    const rh = ((ph << 7) | (pl >>> 25)) >>> 0;
    const rl = ((pl << 7) | (ph >>> 25)) >>> 0;
    pl = rl * 9;
    ph = (Math.imul(rh, 9) + Math.floor(pl / TWO32)) >>> 0;
    this.oh = ph;
    this.ol = pl >>> 0;
    // s0 = rotl(s0, 24) ^ sx ^ (sx << 16)
    const r24h = ((s0h << 24) | (s0l >>> 8)) >>> 0;
    const r24l = ((s0l << 24) | (s0h >>> 8)) >>> 0;
    const shh = ((sxh << 16) | (sxl >>> 16)) >>> 0;
    const shl = (sxl << 16) >>> 0;
    this.s0h = (r24h ^ sxh ^ shh) >>> 0;
    this.s0l = (r24l ^ sxl ^ shl) >>> 0;
    // s1 = rotl(sx, 37) = rotl(swap(sx), 5)
    this.s1h = ((sxl << 5) | (sxh >>> 27)) >>> 0;
    this.s1l = ((sxh << 5) | (sxl >>> 27)) >>> 0;
  }

  /** pg_prng_uint64. */
  uint64(): bigint {
    this.step();
    return (BigInt(this.oh) << 32n) | BigInt(this.ol);
  }

  /** pg_prng_double: uniform in [0, 1) from the top 52 bits. */
  double(): number {
    this.step();
    return (this.oh * 1048576 + (this.ol >>> 12)) / TWO52;
  }

  /** pg_prng_double_normal: Box-Muller, one output per two uniforms. */
  doubleNormal(): number {
    const u1 = 1.0 - this.double();
    const u2 = 1.0 - this.double();
    return Math.sqrt(-2.0 * Math.log(u1)) * Math.sin(2.0 * Math.PI * u2);
  }

  /**
   * pg_prng_uint64_range(0, range) for a range below 2^53, by bitmask rejection: the top bits of each
   * output, redrawn while above the range.
   */
  rangeUpTo(range: number): number {
    if (range <= 0) return 0;
    const rshift = 63 - leftmostOne(range);
    for (;;) {
      this.step();
      const v =
        rshift >= 32 ? this.oh >>> (rshift - 32) : this.oh * 2 ** (32 - rshift) + (this.ol >>> rshift);
      if (v <= range) return v;
    }
  }

  /** The same for any 64-bit range (BigInt). */
  rangeUpToBig(range: bigint): bigint {
    if (range <= 0n) return 0n;
    const rshift = 63n - BigInt(range.toString(2).length - 1);
    for (;;) {
      const v = this.uint64() >> rshift;
      if (v <= range) return v;
    }
  }
}
