/**
 * pgbench's built-in random distributions, hashes and permutation, drawing from `PgPrng` as pgbench
 * does (`getrand`, `getExponentialRand`, `getGaussianRand`, `getZipfianRand`, `getHashFnv1a`,
 * `getHashMurmur2`, `permute`), so that the same seed gives the same values and the same shapes.
 */
import { PgPrng, u64 } from './prng.ts';
import { big, type Int, normInt } from './value.ts';

export const MIN_GAUSSIAN_PARAM = 2.0;
export const MIN_ZIPFIAN_PARAM = 1.001;
export const MAX_ZIPFIAN_PARAM = 1000.0;

const SAFE = 9007199254740991;

/** Uniform integer in [min, max]; the range was checked to fit in int64. */
export function uniformRand(rng: PgPrng, min: Int, max: Int): Int {
  if (typeof min === 'number' && typeof max === 'number' && max - min <= SAFE) {
    return min + rng.rangeUpTo(max - min);
  }
  const lo = big(min);
  return normInt(lo + rng.rangeUpToBig(big(max) - lo));
}

/** min + (int64)(width * r), `width` = max - min + 1, with r in [0, 1). */
function scaled(min: Int, max: Int, r: number): Int {
  if (typeof min === 'number' && typeof max === 'number' && max - min + 1 <= SAFE) {
    return min + Math.trunc((max - min + 1) * r);
  }
  const width = Number(big(max) - big(min) + 1n);
  return normInt(big(min) + BigInt(Math.trunc(width * r)));
}

/** Exponential over [min, max]: the density at max is exp(-parameter) of the one at min. */
export function exponentialRand(rng: PgPrng, min: Int, max: Int, parameter: number): Int {
  const cut = Math.exp(-parameter);
  const uniform = 1.0 - rng.double();
  const r = -Math.log(cut + (1.0 - cut) * uniform) / parameter;
  return scaled(min, max, r);
}

/** Gaussian over [min, max], cut at ±parameter standard deviations. */
export function gaussianRand(rng: PgPrng, min: Int, max: Int, parameter: number): Int {
  let stdev: number;
  do {
    stdev = rng.doubleNormal();
  } while (stdev < -parameter || stdev >= parameter);
  return scaled(min, max, (stdev + parameter) / (parameter * 2.0));
}

/** Zipfian over [min, max] with exponent s, by Devroye's rejection method; min is the most frequent. */
export function zipfianRand(rng: PgPrng, min: Int, max: Int, s: number): Int {
  const n = Number(big(max) - big(min) + 1n);
  let x = 1;
  if (n > 1) {
    const b = 2.0 ** (s - 1.0);
    for (;;) {
      const u = rng.double();
      const v = rng.double();
      x = Math.floor(u ** (-1.0 / (s - 1.0)));
      const t = (1.0 + 1.0 / x) ** (s - 1.0);
      if ((v * x * (t - 1.0)) / (b - 1.0) <= t / b && x <= n) break;
    }
  }
  if (typeof min === 'number' && Math.abs(min) + x <= SAFE) return min - 1 + x;
  return normInt(big(min) - 1n + BigInt(x));
}

const FNV_PRIME = 0x100000001b3n;
const FNV_OFFSET_BASIS = 0xcbf29ce484222325n;
const MM2_MUL = 0xc6a4a7935bd1e995n;
const MM2_MUL_TIMES_8 = 0x35253c9ade8f4ca8n;

export function hashFnv1a(value: Int, seed: Int): Int {
  let val = big(value);
  let result = BigInt.asIntN(64, FNV_OFFSET_BASIS ^ u64(big(seed)));
  for (let i = 0; i < 8; i++) {
    const octet = val & 0xffn;
    val >>= 8n;
    result = BigInt.asIntN(64, result ^ octet);
    result = BigInt.asIntN(64, result * FNV_PRIME);
  }
  return normInt(result);
}

export function hashMurmur2(value: Int, seed: Int): Int {
  let result = u64(big(seed)) ^ MM2_MUL_TIMES_8;
  let k = u64(big(value));
  k = u64(k * MM2_MUL);
  k ^= k >> 47n;
  k = u64(k * MM2_MUL);
  result ^= k;
  result = u64(result * MM2_MUL);
  result ^= result >> 47n;
  result = u64(result * MM2_MUL);
  result ^= result >> 47n;
  return normInt(BigInt.asIntN(64, result));
}

/** A pseudorandom bijection of [0, size) chosen by `seed`: pgbench's permute(). */
export function permute(value: Int, isize: Int, seed: Int): Int {
  const sizeB = big(isize);
  if (sizeB < 2n) return 0;
  const rng = new PgPrng(u64(big(seed)));
  const size = sizeB;
  let v = u64(big(value)) % size;
  const masklen = BigInt(size.toString(2).length - 1);
  const mask = (1n << masklen) - 1n;
  for (let i = 0; i < 6; i++) {
    let m = (rng.uint64() & mask) | 1n;
    let r = rng.uint64() & mask;
    if (v <= mask) {
      v = ((v * m) ^ r) & mask;
      v = ((v << 1n) & mask) | (v >> (masklen - 1n));
    }
    m = (rng.uint64() & mask) | 1n;
    r = rng.uint64() & mask;
    let t = size - 1n - v;
    if (t <= mask) {
      t = ((t * m) ^ r) & mask;
      t = ((t << 1n) & mask) | (t >> (masklen - 1n));
      v = size - 1n - t;
    }
    r = rng.rangeUpToBig(size - 1n);
    v = (v + r) % size;
  }
  return normInt(v);
}
