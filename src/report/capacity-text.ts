/** `dbsmack capacity`'s text report: the steps (the curve of rate against latency), the rate found, where it broke. */
import type { CapacityResult } from '../analysis/capacity.ts';
import { fmtMs, table } from './format.ts';

export function renderCapacityText(c: CapacityResult): string {
  const out: string[] = [];
  const slo = c.slo.join(' and ');
  out.push(
    `dbsmack capacity of ${c.workload.name} on ${c.target.url} (${c.target.server_version || c.target.driver}), ${c.clients} client${c.clients === 1 ? '' : 's'}`,
  );
  out.push(
    `SLO ${slo}; rates ${c.rate_min} to ${c.rate_max}/s, ${c.repeat} run${c.repeat === 1 ? '' : 's'} of ${c.step_time_s ?? '?'} s per step, precision ${Math.round(c.precision * 100)}%`,
  );
  if (c.status !== 'complete') out.push(`PARTIAL: ${c.status_reason ?? ''}`);
  out.push('');
  out.push(
    table(
      ['step', 'phase', 'rate/s', 'events/s', 'p50', 'p90', 'p95', 'p99', 'max ms', 'stability', 'verdict'],
      c.steps.map((s) => [
        String(s.step),
        s.phase,
        String(s.rate),
        s.eps_median.toFixed(1),
        fmtMs(s.latency_ms.p50),
        fmtMs(s.latency_ms.p90),
        fmtMs(s.latency_ms.p95),
        fmtMs(s.latency_ms.p99),
        fmtMs(s.latency_ms.max),
        s.stability,
        s.holds ? 'holds' : `broke: ${s.why.join(', ')}`,
      ]),
    ),
  );
  out.push('(latencies: medians over the runs of each step, from the schedule)');
  out.push('');
  if (c.rate === null) {
    out.push(`no rate holds ${slo}: even ${c.rate_min}/s broke: ${c.broke?.reason ?? ''}`);
  } else {
    const at = c.steps.find((s) => s.rate === c.rate && s.holds);
    out.push(`highest rate holding ${slo}: ${c.rate}/s${at ? ` (step ${at.step})` : ''}`);
    if (c.broke) out.push(`it broke at ${c.broke.rate}/s (step ${c.broke.step}): ${c.broke.reason}`);
    else out.push(`it held up to --rate-max ${c.rate_max}/s: raise --rate-max to search higher`);
  }
  return `${out.join('\n')}\n`;
}
