/**
 * The Query Barrel Report, in super-smack's layout so that scripts that parse its output keep working
 * (tab-separated, types sorted by name, whole milliseconds), followed unless `--classic` by a table with
 * dbsmack's percentiles. Fixed from the original: min_time and max_time are the true extremes (the
 * original kept the last query's time), and the connect line's min, max and average cover the same clients.
 */
import type { RunGroup, RunResult, TypeResult } from '../../metrics/run-result.ts';
import { fmtMs, fmtRate, latencyCells, table } from '../../report/format.ts';
import type { Group, SmackModel, StatLookup } from './model.ts';

/** Which group a client id belongs to: by ranges of `create_threads`, wrapping when --clients asks for more. */
export function groupIndexOf(model: SmackModel, clientId: number): number {
  const total = model.groups.reduce((s, g) => s + g.threads, 0);
  const id = clientId % total;
  for (let i = model.groups.length - 1; i >= 0; i--) if (id >= (model.groups[i] as Group).start) return i;
  return 0;
}

function emptyType(): TypeResult {
  const z = { min: 0, mean: 0, p50: 0, p90: 0, p95: 0, p99: 0, p999: 0, max: 0, stddev: 0 };
  return { kind: 'read', count: 0, errors: 0, qps: 0, latency_ms: z, histogram: '' };
}

function statLookup(model: SmackModel, groups: RunGroup[]): StatLookup {
  return (client, type, stat) => {
    const gi = model.groups.findIndex((g) => g.client.name === client);
    const g = groups[gi];
    if (g === undefined) return 0;
    if (type === undefined) {
      const c = g.connect_ms;
      return stat === 'max_connect_time' ? c.max : stat === 'min_connect_time' ? c.min : c.mean;
    }
    const t = g.types[type];
    if (t === undefined) return 0;
    if (stat === 'num_queries') return t.count;
    if (stat === 'max_time') return t.latency_ms.max;
    if (stat === 'min_time') return t.latency_ms.min;
    return t.qps;
  };
}

export function buildGroups(model: SmackModel, r: RunResult): RunGroup[] {
  const groups: RunGroup[] = model.groups.map((g) => {
    const stats = r.client_stats.filter((c) => groupIndexOf(model, c.id) === model.groups.indexOf(g));
    const busy = Math.max(0, ...stats.map((c) => c.busy_s));
    const elapsed = busy > 0 ? Math.min(busy, r.elapsed_s || busy) : r.elapsed_s;
    const types: Record<string, TypeResult> = {};
    for (const [plain, full] of [...g.typeNames].sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0))) {
      const t = r.types[full];
      types[plain] = t
        ? { ...t, qps: elapsed > 0 ? Math.round((t.count / elapsed) * 100) / 100 : 0 }
        : emptyType();
    }
    const ms = stats.map((c) => c.connect_ms);
    const round3 = (v: number): number => Math.round(v * 1000) / 1000;
    return {
      name: g.client.name,
      clients: stats.length,
      client_ids: stats.map((c) => c.id),
      elapsed_s: round3(elapsed),
      types,
      connect_ms: {
        min: ms.length ? round3(Math.min(...ms)) : 0,
        mean: ms.length ? round3(ms.reduce((a, b) => a + b, 0) / ms.length) : 0,
        max: ms.length ? round3(Math.max(...ms)) : 0,
        count: ms.length,
      },
    };
  });
  const lookup = statLookup(model, groups);
  model.groups.forEach((g, i) => {
    if (g.prints.length === 0) return;
    const out = { before: [] as string[], after: [] as string[] };
    for (const p of g.prints) {
      const text = typeof p.value === 'string' ? p.value : p.value(lookup);
      for (let k = 0; k < p.times; k++) out[p.where].push(text);
    }
    (groups[i] as RunGroup).output = out;
  });
  return groups;
}

const ms = (v: number): string => String(Math.trunc(v));

export function renderBarrelReport(model: SmackModel, r: RunResult, classic: boolean): string {
  const groups = r.groups ?? buildGroups(model, r);
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
