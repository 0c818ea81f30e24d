/**
 * Flame graphs of a run's stacks (`profile.stacks`) as self-contained SVG for the HTML report: one box per
 * function per stack depth, as wide as the switches (or off-CPU milliseconds) under it, callers below their
 * callees, siblings in alphabetical order as FlameGraph draws them. No script, no external font or image:
 * every box carries a `<title>` with its name and figures, which browsers show on hover. Laid out here, not
 * by a library: a flame graph is a prefix tree drawn as rectangles.
 */
import type { ProfileData } from '../metrics/profile-types.ts';
import type { CodeProfileFields } from '../metrics/stacks-types.ts';
import { grouped } from '../numbers.ts';

export interface FlameInput {
  /** Frames root first, joined by `;` (the folded format). */
  stack: string;
  value: number;
}

export interface FlameOptions {
  title: string;
  /** What a box's width counts: `switches`, `ms`. */
  unit: string;
  width?: number;
  /** Deepest level drawn (deeper frames are cut, said in the caption). */
  maxDepth?: number;
}

interface Node {
  name: string;
  value: number;
  children: Map<string, Node>;
}

const ROW = 17;
const FONT_PX = 11;
/** Average advance of DejaVu Sans at 11 px, to cut labels that would overflow their box. */
const CHAR_PX = 6.6;
const TOP = 30;
const PAD = 10;

function xml(s: string): string {
  return s.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

/** A stable colour per name: warm for the server's code, orange for the kernel, blue for the switch kind. */
function colour(name: string): string {
  let h = 0;
  for (let i = 0; i < name.length; i++) h = (h * 31 + name.charCodeAt(i)) >>> 0;
  const r = (h % 1000) / 1000;
  if (name === 'preempted' || name === 'blocked') return name === 'preempted' ? '#6f9fd8' : '#8c7bd0';
  if (name.endsWith('_[k]')) return `hsl(${28 + Math.round(r * 12)}, 85%, ${60 + Math.round(r * 8)}%)`;
  if (/^\[.*\]$/.test(name)) return `hsl(0, 0%, ${72 + Math.round(r * 10)}%)`;
  return `hsl(${Math.round(r * 50)}, ${75 + Math.round(r * 15)}%, ${55 + Math.round(r * 10)}%)`;
}

function build(stacks: readonly FlameInput[]): Node {
  const root: Node = { name: 'all', value: 0, children: new Map() };
  for (const s of stacks) {
    if (!(s.value > 0)) continue;
    root.value += s.value;
    let node = root;
    for (const frame of s.stack.split(';')) {
      if (frame === '') continue;
      let child = node.children.get(frame);
      if (child === undefined) {
        child = { name: frame, value: 0, children: new Map() };
        node.children.set(frame, child);
      }
      child.value += s.value;
      node = child;
    }
  }
  return root;
}

function depthOf(n: Node): number {
  let d = 0;
  for (const c of n.children.values()) d = Math.max(d, 1 + depthOf(c));
  return d;
}

const fmt = (v: number, unit: string): string =>
  `${unit === 'ms' ? v.toFixed(v >= 100 ? 0 : 2) : grouped(Math.round(v))} ${unit}`;

/** The flame graph as an `<svg>` element; a short note instead when there is nothing to draw. */
export function flameGraphSvg(stacks: readonly FlameInput[], o: FlameOptions): string {
  const width = o.width ?? 1060;
  const maxDepth = o.maxDepth ?? 60;
  const root = build(stacks);
  const depth = Math.min(depthOf(root), maxDepth);
  const inner = width - 2 * PAD;
  const height = TOP + (depth + 1) * ROW + PAD + 14;
  const total = root.value;
  const boxes: string[] = [];
  const baseY = height - PAD - 14 - ROW;
  let cut = false;
  const draw = (n: Node, x: number, d: number): void => {
    const w = total > 0 ? (n.value / total) * inner : 0;
    if (w < 0.4) return;
    if (d > maxDepth) {
      cut = true;
      return;
    }
    const y = baseY - d * ROW;
    const pct = total > 0 ? ((n.value / total) * 100).toFixed(2) : '0';
    const label = n.name === 'all' ? `all (${fmt(total, o.unit)})` : n.name;
    const chars = Math.floor((w - 6) / CHAR_PX);
    const text =
      chars >= 3
        ? label.length <= chars
          ? label
          : `${label.slice(0, Math.max(1, chars - 2))}..`
        : undefined;
    boxes.push(
      `<g><title>${xml(n.name)}: ${xml(fmt(n.value, o.unit))}, ${pct}%</title>` +
        `<rect x="${(PAD + x).toFixed(2)}" y="${y}" width="${Math.max(0.4, w - 0.5).toFixed(2)}" height="${ROW - 1}" rx="2" fill="${n.name === 'all' ? '#d9d9d9' : colour(n.name)}"/>` +
        (text
          ? `<text x="${(PAD + x + 3).toFixed(2)}" y="${y + ROW - 5}" font-size="${FONT_PX}" fill="#111">${xml(text)}</text>`
          : '') +
        '</g>',
    );
    let cx = x;
    for (const c of [...n.children.values()].sort((a, b) =>
      a.name < b.name ? -1 : a.name > b.name ? 1 : 0,
    )) {
      draw(c, cx, d + 1);
      cx += total > 0 ? (c.value / total) * inner : 0;
    }
  };
  if (total > 0) draw(root, 0, 0);
  const note =
    total === 0
      ? 'nothing to draw'
      : `${cut ? `cut at depth ${maxDepth}; ` : ''}hover a box for its name and figures`;
  return (
    `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}" viewBox="0 0 ${width} ${height}" font-family="DejaVu Sans, Verdana, sans-serif" role="img" aria-label="${xml(o.title)}">` +
    `<rect x="0" y="0" width="${width}" height="${height}" fill="#fdfdf8"/>` +
    `<text x="${width / 2}" y="19" font-size="14" text-anchor="middle" fill="#111">${xml(o.title)}</text>` +
    boxes.join('') +
    `<text x="${PAD}" y="${height - 6}" font-size="10" fill="#555">${xml(note)}</text>` +
    '</svg>'
  );
}

type CodeProfiled = { profile?: ProfileData & CodeProfileFields };

/** The flame graphs of a run: its preempted stacks (by switches) and its off-CPU time by stack (ms). */
export function runFlameGraphs(
  label: string,
  result: unknown,
): Array<{ id: string; title: string; svg: string; caption: string }> {
  const s = (result as CodeProfiled).profile?.stacks;
  if (s === undefined) return [];
  const id = label.replace(/[^A-Za-z0-9_-]/g, '-');
  const out: Array<{ id: string; title: string; svg: string; caption: string }> = [];
  const pre = s.preempted_stacks.map((x) => ({ stack: x.stack, value: x.count }));
  if (pre.length > 0) {
    const title = `${label}: where threads were preempted (${grouped(s.involuntary)} involuntary switches in ${s.window_s.toFixed(2)} s)`;
    out.push({
      id: `flame-preempted-${id}`,
      title,
      svg: flameGraphSvg(pre, { title, unit: 'switches' }),
      caption: `Each box is a function on the stacks of ${s.recorded} when the kernel took their CPU away; its width is the share of those switches with it on the stack (callers below callees).${s.other_preempted_stacks > 0 ? ` ${s.other_preempted_stacks} switches on rarer stacks are not drawn.` : ''}${s.ranked.preempted ? '' : ' Too few switches to rank functions.'}`,
    });
  }
  const off = s.off_cpu;
  if (off && off.stacks.length > 0) {
    const title = `${label}: off-CPU time by stack (${off.total_ms.toFixed(0)} ms: ${off.preempted_ms.toFixed(0)} preempted, ${off.blocked_ms.toFixed(0)} blocked)`;
    out.push({
      id: `flame-offcpu-${id}`,
      title,
      svg: flameGraphSvg(
        off.stacks.map((x) => ({ stack: x.stack, value: x.ms ?? 0 })),
        { title, unit: 'ms' },
      ),
      caption: `Time from each switch-out to the same thread's next switch-in, by the stack it left the CPU with: "preempted" is waiting for a CPU, "blocked" is sleeping (on the network, I/O, a lock or a condition).${off.other_stacks > 0 ? ` ${off.other_stacks} rarer stacks (${off.other_ms.toFixed(0)} ms) are not drawn.` : ''}`,
    });
  }
  return out;
}
