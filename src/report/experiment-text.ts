/**
 * The table of the first story: per client count the baseline's figure, and for every other arm its ratio
 * to the baseline with the significance mark, the 95% interval and the stability of each arm's repeats.
 * The cells are compare's (`CompareResult`), the verdicts the sweep's; this only lays them out.
 */
import type { ExperimentDocument } from '../analysis/experiment.ts';
import type { CompareResult } from '../analysis/types.ts';
import { interval, mark, pval, ratio } from './compare-text.ts';
import { table } from './format.ts';

const rate = (v: number): string => (v >= 1000 ? v.toFixed(0) : v.toFixed(1));

export function renderExperimentText(doc: ExperimentDocument, cmp: CompareResult | undefined): string {
  const out: string[] = [];
  const runs = doc.arms.reduce((n, a) => n + a.runs.filter((r) => !r.interrupted).length, 0);
  out.push(
    `dbsmack experiment ${doc.name}: ${doc.plan.workload} on ${doc.plan.target}, ${doc.arms.length} arms, ` +
      `${doc.plan.repeat} repeat${doc.plan.repeat === 1 ? '' : 's'} interleaved, ${runs} runs, status ${doc.status}`,
  );
  if (doc.status !== 'complete' && doc.status_reason) out.push(`PARTIAL: ${doc.status_reason}`);
  out.push('');
  const base = doc.arms.find((a) => a.baseline);
  const others = doc.arms.filter((a) => !a.baseline);
  const stab = (label: string, clients: number): string =>
    doc.arms.find((a) => a.label === label)?.points?.find((p) => p.clients === clients)?.stability ?? '—';
  const header = [
    'Thrd',
    `${base?.label ?? 'baseline'} q/s`,
    'stability',
    ...others.flatMap((a) => [`${a.label}/base`, '95% CI', 'p', 'stability']),
  ];
  const rows = doc.plan.clients.map((c) => {
    const row = cmp?.rows.find((r) => r.clients === c);
    const bp = base?.points?.find((p) => p.clients === c);
    return [
      String(c),
      bp ? rate(bp.qps_median) : '—',
      stab(base?.label ?? '', c),
      ...others.flatMap((a) => {
        const cell = row?.candidates[a.label];
        if (!cell) return ['—', '', '', stab(a.label, c)];
        return [`${ratio(cell.ratio)} ${mark(cell)}`, interval(cell), pval(cell.p_value), stab(a.label, c)];
      }),
    ];
  });
  out.push(table(header, rows));
  out.push('');
  out.push(
    `ratio = median q/s of the arm / median of ${base?.label ?? 'the baseline'} (above 1 is faster); + better, - worse ` +
      `(p < ${cmp?.alpha ?? 0.05} and the 95% bootstrap interval excludes 1), ~ no difference shown, ? too few runs to tell`,
  );
  const warnings = [...doc.warnings, ...(cmp?.warnings ?? [])];
  if (warnings.length > 0) {
    out.push('');
    for (const w of warnings) out.push(`warning: ${w}`);
  }
  const diffs = Object.entries(cmp?.differences ?? {}).filter(
    ([k]) => !k.startsWith('env.') && k !== 'target.url',
  );
  if (cmp && diffs.length > 0) {
    const names = [cmp.base, ...cmp.candidates];
    out.push('', 'settings that differ between the arms:');
    out.push(
      table(
        ['setting', ...names],
        diffs.map(([k, v]) => [k, ...names.map((n) => v[n] || '—')]),
      ),
    );
  } else if (cmp) out.push('', 'settings: no difference recorded between the arms');
  return `${out.join('\n')}\n`;
}
