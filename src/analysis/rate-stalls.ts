/**
 * Stalls of an open-loop run (`--rate`), measured rather than fatal: the schedule is kept through them, so
 * the events due meanwhile start late and their latency (from the schedule) shows the stall. Found with the
 * same rule as a sweep's stalls (`findStalls`: intervals whose throughput falls below a tenth of the
 * median), then told apart:
 * - a stalled server: statements were in flight far longer than their usual time (the longest statement
 *   that ended in or right after the stall is ten times the run's usual p95, and covers half the stall);
 *   its length is then that statement's time when longer than the stalled intervals (an interval only
 *   shows a stall that covers most of it);
 * - a client that could not keep up: statements took their usual time while events started late (the
 *   connections idle, dbsmack itself held up: CPU, garbage collection, a blocked thread).
 */
import type { IntervalPoint, RateStall, RunResult } from '../metrics/run-result.ts';
import { findStalls } from './stability.ts';
import { median, round3 } from './stats.ts';

/** Milliseconds in words: whole above 100, three significant digits below. */
const ms = (v: number): string => (v >= 100 ? v.toFixed(0) : String(Number(v.toPrecision(3))));

/** A statement this many times its usual p95 is "far longer than its usual time". */
export const STALL_STATEMENT_FACTOR = 10;

export function rateStalls(r: RunResult): RateStall[] {
  if (r.rate === undefined) return [];
  const ivs = r.intervals;
  const spans = findStalls(ivs);
  if (spans.length === 0) return [];
  const lateBase = median(ivs.map((p) => p.rate_late ?? 0));
  const inSpan = (p: IntervalPoint, a: number, b: number): boolean =>
    p.t - p.dur >= a - 1e-6 && p.t <= b + 1e-6;
  const out: RateStall[] = [];
  const affected = new Set<IntervalPoint>();
  const windows = spans.map(([a, b]) => {
    // the stall's intervals, then those after it until lateness falls back to the run's usual
    const first = ivs.findIndex((p) => inSpan(p, a, b));
    let last = first;
    while (last + 1 < ivs.length && inSpan(ivs[last + 1] as IntervalPoint, a, b)) last++;
    let end = last;
    while (end + 1 < ivs.length && ((ivs[end + 1] as IntervalPoint).rate_late ?? 0) > lateBase) end++;
    // the statements caught in the stall end in the first interval after it
    if (end === last && end + 1 < ivs.length) end++;
    const win = ivs.slice(first, end + 1);
    for (const p of win) affected.add(p);
    return { a, b, win, stalled: ivs.slice(first, last + 1) };
  });
  const usual = median(ivs.filter((p) => !affected.has(p) && p.queries > 0).map((p) => p.p95_ms));
  for (const { a, b, win, stalled } of windows) {
    const spanS = round3(b - a);
    const delayed = win.reduce((n, p) => n + (p.rate_late ?? 0), 0);
    const maxEvent = Math.max(0, ...win.map((p) => p.event_latency_ms?.max ?? 0));
    const maxStmt = Math.max(0, ...win.map((p) => p.max_ms ?? 0));
    const inFlight = Math.max(0, ...stalled.map((p) => p.rate_concurrency ?? 0));
    const server = maxStmt >= STALL_STATEMENT_FACTOR * usual && maxStmt >= 500 * spanS;
    // intervals see a stall only where it covers most of one; a statement caught in it saw all of it
    const lengthS = server ? Math.max(spanS, round3(maxStmt / 1000)) : spanS;
    const at = `${round3(a)}–${round3(b)} s`;
    const reason = server
      ? `the server stalled (intervals ${at}): statements were in flight up to ${ms(maxStmt)} ms (usually ${ms(usual)} ms at p95); the schedule was kept, ${delayed} events started late, up to ${ms(maxEvent)} ms from their schedule`
      : `the clients fell behind (intervals ${at}): statements took their usual time (up to ${ms(maxStmt)} ms, usually ${ms(usual)} ms at p95) while events started late (${delayed}; ${inFlight} of ${r.clients} connections busy): dbsmack itself was held up (CPU, garbage collection), not the server`;
    out.push({
      start_s: round3(a),
      length_s: lengthS,
      delayed,
      max_event_ms: round3(maxEvent),
      max_statement_ms: round3(maxStmt),
      usual_statement_ms: round3(usual),
      cause: server ? 'server' : 'client',
      reason,
    });
  }
  return out;
}

/** Put the stalls into the result's `rate` block (open-loop runs only). */
export function annotateRateStalls(r: RunResult): void {
  if (r.rate === undefined) return;
  const stalls = rateStalls(r);
  if (stalls.length > 0) r.rate.stalls = stalls;
}
