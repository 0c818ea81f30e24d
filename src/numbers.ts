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
