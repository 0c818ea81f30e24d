/**
 * The Query Barrel Report of a smack file's run, in super-smack's layout so that scripts that parse its
 * output keep working (tab-separated, types sorted by name, whole milliseconds), followed unless `--classic`
 * by a table with dbsmack's percentiles; drawn from the result's client groups (`RunResult.groups`). Fixed
 * from the original: min_time and max_time are the true extremes (the original kept the last query's time),
 * and the connect line's min, max and average cover the same clients.
 */
import type { RunResult } from '../metrics/run-result.ts';
import { fmtMs, fmtRate, latencyCells, table } from './format.ts';

const ms = (v: number): string => String(Math.trunc(v));

export function renderBarrelReport(r: RunResult, classic: boolean): string {
  const groups = r.groups ?? [];
  const out: string[] = [];
  for (const g of groups) {
    for (const l of g.output?.before ?? []) out.push(l);
    const c = g.connect_ms;
    out.push(`Query Barrel Report for client ${g.name}`);
    out.push(`connect: max=${ms(c.max)}ms  min=${ms(c.min)}ms avg= ${ms(c.mean)}ms from ${c.count} clients `);
    out.push('Query_type\tnum_queries\tmax_time\tmin_time\tq_per_s');
    for (const [name, t] of Object.entries(g.types)) {
      const qps = g.elapsed_s > 0 ? fmtRate(t.count / g.elapsed_s) : 'n/a';
      out.push(`${name}\t${t.count}\t${ms(t.latency_ms.max)}\t${ms(t.latency_ms.min)}\t${qps}`);
    }
    if (!classic) {
      out.push('');
      const rows = Object.entries(g.types).map(([name, t]) => [
        name,
        String(t.count),
        String(t.errors),
        ...latencyCells(t.latency_ms),
      ]);
      out.push(table(['type', 'queries', 'errors', 'min', 'mean', 'p50', 'p95', 'p99', 'max ms'], rows));
      out.push(
        `${g.clients} clients, ${g.elapsed_s.toFixed(3)} s; connect min ${fmtMs(c.min)} / mean ${fmtMs(c.mean)} / max ${fmtMs(c.max)} ms`,
      );
    }
    for (const l of g.output?.after ?? []) out.push(l);
  }
  if (r.status !== 'complete') {
    out.push(`${r.status.toUpperCase()}: ${r.status_reason ?? 'the run did not complete'}`);
    for (const e of r.errors) out.push(`  ${e.count} x ${e.code}: ${e.message}`);
  }
  return `${out.join('\n')}\n`;
}
