/**
 * The one seeded generator of dbsmack, on the ground floor (it imports nothing) so that every layer draws
 * from the same algorithm: xoshiro128** with its state spread from the seed by splitmix32. The engine gives
 * one to each client (`ctx.random`, repeatable per client under `--rand-seed`, and clients do not share or
 * contend on one generator), `gen-data` and the sysbench tables draw their rows from one, and the bootstrap
 * of `analysis/bootstrap.ts` its resamples. It has the shape of the workload API's `Random`.
 */
export class SeededRandom {
  private a: number;
  private b: number;
  private c: number;
  private d: number;

  constructor(seed: number) {
    // splitmix32 to spread the seed over the state
    let s = seed >>> 0;
    const next = (): number => {
      s = (s + 0x9e3779b9) >>> 0;
      let z = s;
      z = Math.imul(z ^ (z >>> 16), 0x85ebca6b) >>> 0;
      z = Math.imul(z ^ (z >>> 13), 0xc2b2ae35) >>> 0;
      return (z ^ (z >>> 16)) >>> 0;
    };
    this.a = next();
    this.b = next();
    this.c = next();
    this.d = next() | 1;
  }

  private u32(): number {
    const r = Math.imul(rotl(Math.imul(this.b, 5), 7), 9) >>> 0;
    const t = this.b << 9;
    this.c ^= this.a;
    this.d ^= this.b;
    this.b ^= this.c;
    this.a ^= this.d;
    this.c ^= t;
    this.d = rotl(this.d, 11);
    return r;
  }

  /** Uniform float in [0, 1). */
  next(): number {
    return this.u32() / 4294967296;
  }

  /** Uniform integer in [min, max], both inclusive. */
  int(min: number, max: number): number {
    return min + Math.floor(this.next() * (max - min + 1));
  }
}

function rotl(x: number, k: number): number {
  return ((x << k) | (x >>> (32 - k))) >>> 0;
}

/**
 * A seeded generator for code outside a client (data generation in `prepare`, a bootstrap): the public API's
 * `seededRandom`, the algorithm of every client's `ctx.random`.
 */
export function seededRandom(seed: number): SeededRandom {
  return new SeededRandom(seed);
}
