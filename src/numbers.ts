/**
 * The ground floor's rounding, beside `errors.ts` and importing nothing: every figure a document stores
 * rounded is rounded here, `Math.round(v * 10^d) / 10^d` (half up, as `Math.round`; 10^d is exact for the
 * digits used, so `round(v, 3)` and `round3(v)` give the same bits).
 */

/** `v` rounded to `digits` decimals. */
export function round(v: number, digits: number): number {
  const f = 10 ** digits;
  return Math.round(v * f) / f;
}

/** Rounded to two decimals (rates: queries and events per second, percentages). */
export const round2 = (v: number): number => Math.round(v * 100) / 100;

/** Rounded to three decimals (milliseconds of a second, microseconds of a millisecond), as documents store times. */
export const round3 = (v: number): number => Math.round(v * 1000) / 1000;

/**
 * An integer with its thousands grouped as `toLocaleString('en-US')` writes it (12,345, -1,234), without
 * Intl: ICU's number format costs about 20 ms of CPU the first time a process uses it, and every run's
 * report printed its counts this way. Integers of 1e21 and more (exponent notation) still go through it.
 */
export function grouped(v: number): string {
  if (Object.is(v, -0)) return '-0';
  const digits = String(Math.abs(v));
  if (!/^\d+$/.test(digits)) return v.toLocaleString('en-US');
  let out = '';
  for (let end = digits.length; end > 0; end -= 3) {
    const part = digits.slice(Math.max(0, end - 3), end);
    out = out === '' ? part : `${part},${out}`;
  }
  return v < 0 ? `-${out}` : out;
}
