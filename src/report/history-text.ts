/** `dbsmack history` as a table, and the header `show` puts above a stored run. */
import type { HistoryEntry } from '../store/history.ts';
import { table } from './format.ts';

export function renderHistoryList(entries: readonly HistoryEntry[]): string {
  if (entries.length === 0) return 'no runs recorded (with these filters)\n';
  return `${table(
    ['id', 'kind', 'label', 'workload', 'driver', 'clients', 'rep', 'status', 'q/s', 'started', 'host'],
    entries.map((e) => [
      e.sweep_id !== null ? `${e.id} (in ${e.sweep_id})` : String(e.id),
      e.kind,
      e.label ?? '',
      e.workload,
      e.driver,
      e.clients,
      e.repeat !== null ? String(e.repeat) : '',
      e.status,
      e.qps !== null ? (e.qps >= 1000 ? e.qps.toFixed(0) : e.qps.toFixed(1)) : '',
      e.started_at.slice(0, 19).replace('T', ' '),
      e.host,
    ]),
  )}\n`;
}

export function renderSettings(
  version: string | undefined,
  settings: Record<string, string> | undefined,
): string {
  const out: string[] = [];
  const entries = Object.entries(settings ?? {});
  if (version) out.push(`server: ${version}${entries.length > 0 ? ', settings:' : ''}`);
  else if (entries.length > 0) out.push('server settings:');
  if (entries.length > 0) {
    const w = Math.max(...entries.map(([k]) => k.length));
    for (const [k, v] of entries) out.push(`  ${k.padEnd(w)}  ${v}`);
  }
  return out.length > 0 ? `${out.join('\n')}\n` : '';
}
