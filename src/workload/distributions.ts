/**
 * Random key distributions with sysbench 1.0.20's semantics (`sb_rand.c`), plus the zipfian of sysbench's
 * master branch. Every function draws integers in [a, b], both inclusive, from a per-client `Random`, so
 * runs stay repeatable with `--rand-seed`. Part of the public workload API.
 */
import type { OptionSpec, Random } from './types.ts';

/** The distributions sysbench knows (`--rand-type`). */
export const DISTRIBUTIONS = ['uniform', 'gaussian', 'special', 'pareto', 'zipfian'] as const;
export type DistributionType = (typeof DISTRIBUTIONS)[number];

/** Parameters of a distribution; defaults are sysbench's (`--rand-spec-*`, `--rand-pareto-h`, `--rand-zipfian-exp`). */
export interface DistributionOptions {
  type: DistributionType;
  /** gaussian/special: number of uniform draws summed (Irwin–Hall), `--rand-spec-iter`, default 12. */
  specIter?: number;
  /** special: width of the hot window in percent of the range, `--rand-spec-pct`, default 1. */
  specPct?: number;
  /** special: percent of draws that land in the hot window, `--rand-spec-res`, default 75. */
  specRes?: number;
  /** pareto: `--rand-pareto-h`, default 0.2. */
  paretoH?: number;
  /** zipfian: exponent, `--rand-zipfian-exp`, default 0.8 (must be ≥ 0). */
  zipfianExp?: number;
}

/** Draws an integer in [a, b] (inclusive). */
export type Distribution = (a: number, b: number) => number;

/**
 * Build a distribution over a per-client `Random`:
 *
 * ```ts
 * const pick = distribution(ctx.random, { type: 'zipfian', zipfianExp: 0.9 });
 * const id = pick(1, 10000);
 * ```
 */
export function distribution(random: Random, o: DistributionOptions): Distribution {
  const iter = o.specIter ?? 12;
  switch (o.type) {
    case 'uniform':
      return (a, b) => a + Math.floor(random.next() * (b - a + 1));
    case 'gaussian':
      return (a, b) => {
        const t = b - a + 1;
        let sum = 0;
        for (let i = 0; i < iter; i++) sum += random.next() * t;
        return a + Math.floor(sum / iter);
      };
    case 'special': {
      const pct = o.specPct ?? 1;
      const res = o.specRes ?? 75;
      return (a, b) => {
        const t = b - a;
        const rangeSize = t * Math.floor(100 / (100 - res)); // an integer division in sysbench
        const rnd = random.next();
        if (rnd * rangeSize < t) {
          let sum = 0;
          for (let i = 0; i < iter; i++) sum += random.next();
          return a + Math.floor((sum * t) / iter);
        }
        // sysbench reuses the same draw for the position inside the hot window
        const d = Math.floor((t * pct) / 100);
        const r = rnd * (d + 1) + Math.floor(t / 2) - Math.floor((t * pct) / 200);
        return a + Math.floor(r);
      };
    }
    case 'pareto': {
      const h = o.paretoH ?? 0.2;
      const power = Math.log(h) / Math.log(1 - h);
      return (a, b) => a + Math.floor((b - a + 1) * random.next() ** power);
    }
    case 'zipfian':
      return zipfian(random, o.zipfianExp ?? 0.8);
  }
}

/**
 * Zipfian by rejection-inversion (Hörmann & Derflinger), as sysbench master does: rank 1 (value `a`) is the
 * most frequent, with no scrambling. The per-range constant is cached for the last range used.
 */
function zipfian(random: Random, e: number): Distribution {
  if (!(e >= 0)) throw new RangeError(`zipfian exponent must be >= 0, got ${e}`);
  const helper1 = (x: number): number =>
    Math.abs(x) > 1e-8 ? Math.log1p(x) / x : 1 - x * (0.5 - x * (1 / 3 - 0.25 * x));
  const helper2 = (x: number): number =>
    Math.abs(x) > 1e-8 ? Math.expm1(x) / x : 1 + x * 0.5 * (1 + ((x * 1) / 3) * (1 + 0.25 * x));
  const H = (x: number): number => {
    const lx = Math.log(x);
    return helper2((1 - e) * lx) * lx;
  };
  const h = (x: number): number => Math.exp(-e * Math.log(x));
  const hInv = (x: number): number => {
    let t = x * (1 - e);
    if (t < -1) t = -1;
    return Math.exp(helper1(t) * x);
  };
  const s = 2 - hInv(H(2.5) - h(2));
  const HX1 = H(1.5) - 1;
  let lastN = -1;
  let HN = 0;
  return (a, b) => {
    const n = b - a + 1;
    if (n !== lastN) {
      lastN = n;
      HN = H(n + 0.5);
    }
    for (;;) {
      const u = HN + random.next() * (HX1 - HN);
      const x = hInv(u);
      let k = Math.floor(x + 0.5);
      if (k < 1) k = 1;
      else if (k > n) k = n;
      if (k - x <= s || u >= H(k + 0.5) - h(k)) return a + k - 1;
    }
  };
}

/** randomString's buffer (grown to the longest template seen). */
let stringBytes = Buffer.allocUnsafe(256);

/**
 * A sysbench-style random string (`sysbench.rand.string`): every `#` becomes a random digit, every `@` a
 * random lower-case letter, anything else is copied. `'###########-###########'` gives `52973511997-35955633476`.
 */
export function randomString(random: Random, template: string): string {
  // The characters go into a byte buffer, then become one string: half the time of adding them one by one
  // (a string of as many pieces, flattened again when the query is encoded; oltp_insert draws 178 a query).
  const n = template.length;
  if (n > stringBytes.length) stringBytes = Buffer.allocUnsafe(n);
  const bytes = stringBytes;
  for (let i = 0; i < n; i++) {
    const ch = template.charCodeAt(i);
    if (ch === 35) bytes[i] = 48 + Math.floor(random.next() * 10);
    else if (ch === 64) bytes[i] = 97 + Math.floor(random.next() * 26);
    else if (ch < 256) bytes[i] = ch;
    else return bytes.toString('latin1', 0, i) + randomTail(random, template, i);
  }
  return bytes.toString('latin1', 0, n);
}

/** randomString from `from` on, one character at a time (a template with characters beyond Latin-1). */
function randomTail(random: Random, template: string, from: number): string {
  let out = '';
  for (let i = from; i < template.length; i++) {
    const ch = template.charCodeAt(i);
    if (ch === 35) out += String.fromCharCode(48 + Math.floor(random.next() * 10));
    else if (ch === 64) out += String.fromCharCode(97 + Math.floor(random.next() * 26));
    else out += template[i];
  }
  return out;
}

/** The template of sysbench's `c` column: 10 groups of 11 digits joined by `-` (119 characters). */
export const C_TEMPLATE = Array.from({ length: 10 }, () => '###########').join('-');
/** The template of sysbench's `pad` column: 5 groups of 11 digits (59 characters). */
export const PAD_TEMPLATE = Array.from({ length: 5 }, () => '###########').join('-');

const PRIME = 4294967291n;

function permute(x: bigint): bigint {
  if (x >= PRIME) return x;
  const r = (x * x) % PRIME;
  return x <= PRIME / 2n ? r : PRIME - r;
}

/**
 * Unique 32-bit numbers (sysbench's `rand.unique()`: a quadratic-residue permutation). Each client gets
 * its own stride of the index space (`clientId + k × clients`), so values never repeat across clients
 * without shared state between threads.
 */
export function uniqueSequence(clientId: number, clients: number, seed: number): () => number {
  // index and offset are common to all clients (derived from the run's seed) so that strides never meet
  const base = BigInt(seed >>> 0);
  const start = permute((permute(base) + 0x682f0161n) % 2n ** 32n);
  const offset = permute((permute(base ^ 0x5a5a5a5an) + 0x46790905n) % 2n ** 32n);
  let k = 0n;
  const stride = BigInt(clients);
  const id = BigInt(clientId);
  return () => {
    const index = (start + id + k * stride) % 2n ** 32n;
    k++;
    const v = permute((((permute(index) + offset) % 2n ** 32n) ^ 0x5bf03635n) % 2n ** 32n);
    return Number(v);
  };
}

/**
 * sysbench's `--rand-*` options, ready to spread into a workload's `options` so that
 * `distributionFromOptions(ctx.random, ctx.options)` picks what the user asked for.
 */
export const randOptions = {
  rand_type: {
    type: 'string',
    default: 'special',
    choices: DISTRIBUTIONS,
    description: 'random numbers distribution: uniform, gaussian, special, pareto, zipfian',
  },
  rand_spec_iter: {
    type: 'int',
    default: 12,
    min: 1,
    description: 'number of iterations for the special and gaussian distributions',
  },
  rand_spec_pct: {
    type: 'number',
    default: 1,
    min: 0,
    max: 100,
    description: "percentage of the values to be treated as 'special' (special distribution)",
  },
  rand_spec_res: {
    type: 'number',
    default: 75,
    min: 0,
    max: 99,
    description: "percentage of 'special' values to use (special distribution)",
  },
  rand_pareto_h: {
    type: 'number',
    default: 0.2,
    min: 0.000001,
    max: 0.999999,
    description: 'parameter h of the pareto distribution',
  },
  rand_zipfian_exp: {
    type: 'number',
    default: 0.8,
    min: 0,
    description: 'shape parameter (exponent, theta) of the zipfian distribution',
  },
} as const satisfies Record<string, OptionSpec>;

/** The distribution the `--rand-*` options (see `randOptions`) describe. */
export function distributionFromOptions(
  random: Random,
  options: Readonly<Record<string, unknown>>,
): Distribution {
  return distribution(random, {
    type: (options.rand_type as DistributionType | undefined) ?? 'special',
    specIter: (options.rand_spec_iter as number | undefined) ?? 12,
    specPct: (options.rand_spec_pct as number | undefined) ?? 1,
    specRes: (options.rand_spec_res as number | undefined) ?? 75,
    paretoH: (options.rand_pareto_h as number | undefined) ?? 0.2,
    zipfianExp: (options.rand_zipfian_exp as number | undefined) ?? 0.8,
  });
}
