/**
 * A smack file's client groups in a result (`RunResult.groups`): which clients belong to which
 * `client` block, and each group's figures. The report layer lays them out (report/barrel.ts).
 */
import type { RunGroup, RunResult, TypeResult } from '../../metrics/run-result.ts';
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
