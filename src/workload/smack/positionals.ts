/**
 * The command-line arguments a smack file's `main` uses (`$1`, `$2` …) and where, read from the syntax
 * tree without running `main`: for the workload's help, and so that `prepare` and `cleanup` (which need
 * only the tables) do not ask for arguments that only `main` reads.
 */
import type { Expr, MainStatement, SmackProgram } from './ast.ts';

export interface SmackPositional {
  /** 1-based: `$1` is 1. */
  index: number;
  /** Where `main` reads it, as written: `reader.create_threads($1)`, `$rounds = $2`. */
  uses: string[];
}

function argsIn(e: Expr, out: number[]): void {
  if (e.kind === 'arg' && e.index > 0) out.push(e.index);
  else if (e.kind === 'concat') for (const p of e.parts) argsIn(p, out);
}

function show(e: Expr): string {
  switch (e.kind) {
    case 'number':
      return e.text;
    case 'string':
      return JSON.stringify(e.value);
    case 'arg':
      return `$${e.index}`;
    case 'var':
      return `$${e.name}`;
    case 'stat':
      return `${e.client}::${e.type !== undefined ? `${e.type}::` : ''}${e.stat}`;
    case 'concat':
      return e.parts.map(show).join(' . ');
  }
}

function describe(st: MainStatement): string {
  return st.kind === 'call'
    ? `${st.client}.${st.method}(${st.args.map(show).join(', ')})`
    : `$${st.name} = ${show(st.value)}`;
}

/** The `$N` that `main` reads, in order of N, each with the statements that read it. */
export function smackPositionals(prog: SmackProgram): SmackPositional[] {
  const byIndex = new Map<number, string[]>();
  for (const st of prog.main) {
    const found: number[] = [];
    if (st.kind === 'call') for (const a of st.args) argsIn(a, found);
    else argsIn(st.value, found);
    for (const i of new Set(found)) {
      const uses = byIndex.get(i) ?? [];
      uses.push(describe(st));
      byIndex.set(i, uses);
    }
  }
  return [...byIndex.entries()].sort(([a], [b]) => a - b).map(([index, uses]) => ({ index, uses }));
}
