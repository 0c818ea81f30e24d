/**
 * `--count-calls F1,F2,…`: how often named functions of the server ran during the window. Each function gets
 * a uprobe per symbol it has (overloads, constructor variants) with `perf probe --no-demangle -x BINARY`, in
 * the group `dbsmack_PID` of this process, and `perf stat` counts their hits in the server's processes while
 * the window is open. The probes are removed afterwards (`remove`), at exit (perf-tool's exit duty), and,
 * when a killed dbsmack left some, at the next start (`cleanLeftovers`).
 */
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import type { ProfileNote } from '../metrics/profile-types.ts';
import { type ElfSymbols, matchFunction } from './elf-symbols.ts';
import { PerfSession } from './perf-record.ts';
import { onExitCleanup, probeGroup, runPerf } from './perf-tool.ts';

const WHAT = 'calls';

/** A function name as a command line gives it: C identifiers joined by `::` (a destructor's `~` allowed). */
export const FUNCTION_NAME = /^~?[A-Za-z_][A-Za-z0-9_]*(::~?[A-Za-z_][A-Za-z0-9_]*)*$/;

/** A perf event name for a function: letters, digits and underscores, unique within the group. */
function eventName(fn: string, i: number, taken: Set<string>): string {
  let base = fn
    .replace(/::/g, '__')
    .replace(/~/g, 'dtor_')
    .replace(/[^A-Za-z0-9_]/g, '_')
    .slice(0, 48);
  if (/^[0-9]/.test(base)) base = `f${base}`;
  let name = i === 0 ? base : `${base}_${i + 1}`;
  for (let k = 2; taken.has(name); k++) name = `${base}_${i + 1}_${k}`;
  taken.add(name);
  return name;
}

export class CallCounter {
  readonly group = probeGroup();
  /** perf event (without the group) → the function name it counts for. */
  private readonly events = new Map<string, string>();
  private placedAny = false;
  private session: PerfSession | undefined;
  private out = '';
  readonly notes: ProfileNote[] = [];

  constructor(
    readonly binary: string,
    private readonly symbols: ElfSymbols,
  ) {}

  /** Uprobes per function placed (0 for a name not found). */
  get probes(): Record<string, number> {
    const n: Record<string, number> = {};
    for (const fn of this.events.values()) n[fn] = (n[fn] ?? 0) + 1;
    return n;
  }

  /** Place a uprobe on every symbol of every function; names not found become notes. */
  async place(functions: readonly string[]): Promise<void> {
    const taken = new Set<string>();
    const defs: Array<{ event: string; symbol: string; fn: string }> = [];
    for (const fn of functions) {
      const syms = matchFunction(this.symbols.functions, fn);
      if (syms.length === 0) {
        this.notes.push({
          what: WHAT,
          why: `no function ${fn} in the symbols of ${this.binary}`,
          hint: 'a static or inlined function has no symbol in a stripped binary; name one the binary exports (C++ as Class::method), or install its debug symbols',
        });
        continue;
      }
      syms.forEach((symbol, i) => {
        defs.push({ event: eventName(fn, i, taken), symbol, fn });
      });
    }
    if (defs.length === 0) return;
    onExitCleanup.probes(true);
    this.placedAny = true;
    const add = (d: (typeof defs)[number]): string[] => ['--add', `${this.group}:${d.event}=${d.symbol}`];
    const all = await runPerf(['probe', '-q', '--no-demangle', '-x', this.binary, ...defs.flatMap(add)]);
    if (all.code === 0) {
      for (const d of defs) this.events.set(d.event, d.fn);
      return;
    }
    // one failed: place them one by one to keep the others and name the one
    await runPerf(['probe', '-q', '-d', `${this.group}:*`]);
    for (const d of defs) {
      const r = await runPerf(['probe', '-q', '--no-demangle', '-x', this.binary, ...add(d)]);
      if (r.code === 0) this.events.set(d.event, d.fn);
      else
        this.notes.push({
          what: WHAT,
          why: `perf probe could not place a uprobe on ${d.fn} (${d.symbol}) in ${path.basename(this.binary)}: ${firstLine(r.stderr)}`,
        });
    }
  }

  /** Start `perf stat` on the probes in `pids`, disabled until `enable`; an error text when it cannot. */
  async start(pids: readonly number[], lifeS: number, dir: string): Promise<string | undefined> {
    if (this.events.size === 0) return 'no uprobe could be placed';
    this.out = path.join(dir, 'calls.csv');
    const events = [...this.events.keys()].map((e) => `${this.group}:${e}`).join(',');
    this.session = new PerfSession('perf stat', [
      'stat',
      '-x',
      ',',
      '--no-big-num',
      '-o',
      this.out,
      '-D',
      '-1',
      '--control',
      'fd:3,4',
      '-e',
      events,
      '-p',
      pids.join(','),
      '--',
      'sleep',
      String(Math.max(1, Math.ceil(lifeS))),
    ]);
    return this.session.ready();
  }

  enable(): Promise<boolean> {
    return this.session?.enable() ?? Promise.resolve(false);
  }

  disable(): Promise<boolean> {
    return this.session?.disable() ?? Promise.resolve(false);
  }

  /** Stop counting and read the counts per function (overloads summed). */
  async stop(): Promise<Record<string, number> | undefined> {
    if (this.session === undefined) return undefined;
    await this.session.stop();
    this.session = undefined;
    let text: string;
    try {
      text = await readFile(this.out, 'utf8');
    } catch {
      this.notes.push({ what: WHAT, why: 'perf stat wrote no counts' });
      return undefined;
    }
    return parseStatCsv(text, this.group, this.events);
  }

  /** Remove this process's uprobes (after perf stat has exited: it holds them while it runs). */
  async remove(): Promise<void> {
    if (!this.placedAny) return;
    let r = await runPerf(['probe', '-q', '-d', `${this.group}:*`]);
    for (let i = 0; i < 10 && r.code !== 0 && /busy/i.test(r.stderr); i++) {
      await new Promise((res) => setTimeout(res, 100));
      r = await runPerf(['probe', '-q', '-d', `${this.group}:*`]);
    }
    if (r.code !== 0 && !/not found|no event/i.test(r.stderr)) {
      this.notes.push({
        what: WHAT,
        why: `could not remove the uprobes ${this.group}:*: ${firstLine(r.stderr)}`,
        hint: `perf probe -d '${this.group}:*' as root (the next dbsmack run also removes them)`,
      });
      return;
    }
    this.placedAny = false;
    onExitCleanup.probes(false);
  }
}

function firstLine(s: string): string {
  return (
    s
      .split('\n')
      .map((l) => l.trim())
      .find((l) => l !== '') ?? 'failed'
  );
}

/**
 * Counts per function from `perf stat -x,` output: `COUNT,UNIT,GROUP:EVENT,…` lines. An event perf could not
 * count (`<not counted>`) counts 0.
 */
export function parseStatCsv(
  text: string,
  group: string,
  events: ReadonlyMap<string, string>,
): Record<string, number> {
  const out: Record<string, number> = {};
  for (const fn of events.values()) out[fn] = 0;
  for (const line of text.split('\n')) {
    const cols = line.split(',');
    if (cols.length < 3) continue;
    const ev = cols[2] ?? '';
    if (!ev.startsWith(`${group}:`)) continue;
    const fn = events.get(ev.slice(group.length + 1));
    if (fn === undefined) continue;
    const n = Number(cols[0]);
    if (Number.isFinite(n)) out[fn] = (out[fn] ?? 0) + n;
  }
  return out;
}
