/**
 * The functions that took the most time in `.cpuprofile` files (from `node --cpu-prof`), by self time:
 *
 *   node --cpu-prof --cpu-prof-dir=/tmp/prof bin/dbsmack.js run oltp_point_select --db … -c 8 -t 10
 *   node --import tsx bench/profile-top.ts [--top 25] /tmp/prof/*.cpuprofile
 *
 * One table per file (the load worker is usually the larger one). `(idle)` is the thread waiting in its
 * event loop; a native call such as `writeBuffer` also counts the time the thread was preempted inside it.
 */
import { readFileSync } from 'node:fs';
import { benchArgs, positiveOf } from './args.ts';

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
}
interface Profile {
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
}

const { values, positionals } = benchArgs(import.meta.url, {
  options: { top: { type: 'string', default: '25' } },
  allowPositionals: true,
});
const TOP = positiveOf(import.meta.url, 'top', values.top as string);
if (positionals.length === 0) {
  console.error('usage: node --import tsx bench/profile-top.ts [--top N] FILE.cpuprofile…');
  process.exit(2);
}

for (const file of positionals) {
  const p = JSON.parse(readFileSync(file, 'utf8')) as Profile;
  const timeOf = new Map<number, number>();
  for (const [i, id] of p.samples.entries()) timeOf.set(id, (timeOf.get(id) ?? 0) + (p.timeDeltas[i] ?? 0));
  const self = new Map<string, number>();
  let total = 0;
  for (const n of p.nodes) {
    const t = timeOf.get(n.id) ?? 0;
    total += t;
    const { functionName, url, lineNumber } = n.callFrame;
    const where = url === '' ? '' : ` ${url.split('/').slice(-2).join('/')}:${lineNumber + 1}`;
    const key = `${functionName || '(anonymous)'}${where}`;
    self.set(key, (self.get(key) ?? 0) + t);
  }
  console.log(`== ${file}: ${(total / 1000).toFixed(0)} ms sampled`);
  const rows = [...self.entries()].sort((a, b) => b[1] - a[1]).slice(0, TOP);
  for (const [key, t] of rows) console.log(`${((100 * t) / total).toFixed(1).padStart(5)}%  ${key}`);
}
