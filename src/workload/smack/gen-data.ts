/**
 * dbsmack's own `gen-data`: writes N comma-separated rows from a format such as
 * `%12-12s%n,%25-25s,%n,%d`, the language of super-smack's gen-data. Two of its bugs are fixed: `%12s` is
 * exactly 12 letters (the original picked a random width 0..11, and 0 meant 256), widths `%5-10s` include
 * both ends, and every letter a–z can appear (the original never wrote `z`). Output is repeatable for a seed.
 */
import { createWriteStream } from 'node:fs';
import { SeededRandom } from '../../seeded-random.ts';

type Field =
  | { kind: 'lit'; text: string }
  | { kind: 's' | 'd' | 'n'; min: number; max: number; ranged: boolean };

/** A format error: the message names the offending character and its 1-based position. */
export class GenDataFormatError extends Error {}

export function parseGenDataFormat(fmt: string): Field[] {
  const out: Field[] = [];
  let lit = '';
  for (let i = 0; i < fmt.length; i++) {
    const c = fmt[i] as string;
    if (c !== '%') {
      lit += c;
      continue;
    }
    let a = '';
    let b: string | undefined;
    let j = i + 1;
    for (; j < fmt.length; j++) {
      const d = fmt[j] as string;
      if (d >= '0' && d <= '9') {
        if (b === undefined) a += d;
        else b += d;
      } else if (d === '-' && b === undefined) {
        b = '';
      } else break;
    }
    const conv = fmt[j];
    if (conv === '%' && a === '' && b === undefined) {
      lit += '%';
      i = j;
      continue;
    }
    if (conv !== 's' && conv !== 'd' && conv !== 'n') {
      throw new GenDataFormatError(
        `'${conv ?? 'end of format'}' at position ${j + 1} is not a gen-data field (use %s, %d, %n or %%)`,
      );
    }
    if (lit) out.push({ kind: 'lit', text: lit });
    lit = '';
    const min = a === '' ? 0 : Number(a);
    const ranged = b !== undefined && b !== '';
    const max = ranged ? Number(b) : min;
    if (max < min) {
      throw new GenDataFormatError(
        `%${a}-${b}${conv} at position ${i + 1}: the maximum is below the minimum`,
      );
    }
    out.push({ kind: conv, min, max, ranged });
    i = j;
  }
  if (lit) out.push({ kind: 'lit', text: lit });
  return out;
}

/** Default width of `%s` without one, as in the original. */
const DEFAULT_S = 256;
const LETTERS = 'abcdefghijklmnopqrstuvwxyz';

/** A row generator for a parsed format; `row(n)` gives line n (1-based) without the newline. */
export function rowGenerator(fmt: string, seed = 1): (rowNum: number) => string {
  const fields = parseGenDataFormat(fmt);
  const rnd = new SeededRandom(seed);
  return (rowNum: number): string => {
    let s = '';
    for (const f of fields) {
      if (f.kind === 'lit') {
        s += f.text;
        continue;
      }
      const w = f.ranged ? rnd.int(f.min, f.max) : f.min;
      if (f.kind === 's') {
        const len = w === 0 ? DEFAULT_S : w;
        for (let k = 0; k < len; k++) s += LETTERS[rnd.int(0, 25)];
      } else {
        const v = String(f.kind === 'n' ? rowNum : rnd.int(0, 0x7fffffff));
        s += v.padStart(w, ' ');
      }
    }
    return s;
  };
}

/** Write `rows` lines to a file (or a stream) and resolve when it is flushed. */
export async function writeGenData(
  rows: number,
  fmt: string,
  out: string | NodeJS.WritableStream,
  seed = 1,
): Promise<void> {
  const row = rowGenerator(fmt, seed);
  const stream: NodeJS.WritableStream = typeof out === 'string' ? createWriteStream(out) : out;
  const CHUNK = 2000;
  // A failed write (a full disk) emits 'error' and never 'drain': stop at once with that error.
  let failure: unknown;
  const onError = (e: unknown): void => {
    failure ??= e;
  };
  stream.on('error', onError);
  const drained = (): Promise<void> =>
    new Promise<void>((res, rej) => {
      const done = (): void => {
        stream.off('drain', done);
        stream.off('error', done);
        if (failure !== undefined) rej(failure);
        else res();
      };
      stream.once('drain', done);
      stream.once('error', done);
    });
  for (let r = 1; r <= rows; ) {
    if (failure !== undefined) throw failure;
    let buf = '';
    for (let k = 0; k < CHUNK && r <= rows; k++, r++) buf += `${row(r)}\n`;
    if (!stream.write(buf)) await drained();
  }
  if (failure !== undefined) throw failure;
  if (typeof out === 'string') {
    await new Promise<void>((res, rej) => {
      stream.on('error', rej);
      stream.end(() => res());
    });
  }
}
