/** The human-readable summary of a sweep: one line per client count, then the verdicts in words. */
import type { SweepResult } from '../analysis/types.ts';
import { fmtMs, table } from './format.ts';

const rate = (v: number): string => (v >= 1000 ? v.toFixed(0) : v.toFixed(1));

export function renderSweepText(s: SweepResult, id?: number): string {
  const out: string[] = [];
  out.push(
    `dbsmack sweep ${s.label}${id !== undefined ? ` (history ${id})` : ''}: ${s.workload.name} on ${s.target.url} ` +
      `(${s.target.server_version || s.target.driver}), ${s.repeat} repeat${s.repeat === 1 ? '' : 's'}, status ${s.status}`,
  );
  if (s.status !== 'complete' && s.status_reason) out.push(`${s.status.toUpperCase()}: ${s.status_reason}`);
  out.push('');
  out.push(
    table(
      ['clients', 'runs', 'median q/s', 'min', 'max', 'CV', 'p95 ms', 'p99 ms', 'stability'],
      s.points.map((p) => [
        String(p.clients),
        p.left_out ? `${p.runs.length - p.left_out.length}+${p.left_out.length}` : String(p.runs.length),
        rate(p.qps.median),
        rate(p.qps.min),
        rate(p.qps.max),
        `${(p.qps.cv * 100).toFixed(1)}%`,
        fmtMs(p.p95_ms_median),
        fmtMs(p.p99_ms_median),
        p.stability,
      ]),
    ),
  );
  if (s.points.some((p) => p.left_out))
    out.push(
      'runs N+M: N complete runs make the figures, M that did not complete are left out (as compare leaves them out)',
    );
  out.push('');
  for (const p of s.points) {
    out.push(`${String(p.clients).padStart(4)} clients: ${p.stability}: ${p.stability_reason}`);
    const runs = p.runs.map(
      (r) =>
        `${rate(r.qps)}${r.outlier ? '!' : ''}${r.status !== 'complete' ? `(${r.status}${p.left_out ? ', left out' : ''})` : ''}`,
    );
    out.push(`              runs (q/s, in order; ! = outlier): ${runs.join(', ')}`);
  }
  return `${out.join('\n')}\n`;
}
