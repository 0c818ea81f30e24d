/**
 * A pgbench script compiled for running: its commands checked the way pgbench checks them when it reads a
 * script (argument counts, `\sleep` units, `\gset` placement, `\if` nesting, expressions parsed), SQL
 * split into text and `:variable` references once, and `\if` chains turned into jumps.
 */
import type { DriverName } from '../../driver/types.ts';
import { errorAt, lineCol, makeSource, type Source } from './errors.ts';
import { type Compiled, compileExpr } from './evaluate.ts';
import { exprUses, parseExpr } from './expr.ts';
import { type ScannedCommand, scanScript, type Word } from './scan.ts';

export type QueryMode = 'simple' | 'extended' | 'prepared';

/** SQL text with the places of its `:variables` (pgbench substitutes any `:name` outside nothing, even in quotes). */
export interface SqlTemplate {
  /** Literal pieces; `vars[i]` goes between `parts[i]` and `parts[i + 1]`. */
  parts: string[];
  vars: string[];
}

export interface SqlCommand {
  kind: 'sql';
  /** 0-based position in the script's command list (pgbench's command number). */
  index: number;
  line: number;
  col: number;
  /** The command's first line, as pgbench shows it in -r reports. */
  firstLine: string;
  /** The statement type it is recorded under: `file.sql:LINE`. */
  type: string;
  template: SqlTemplate;
  /** \gset or \aset after it, with the variable prefix. */
  store: 'gset' | 'aset' | undefined;
  prefix: string;
  /** `\;` made it several queries in one. */
  compound: boolean;
  /** What it does to the transaction: BEGIN opens one, COMMIT/END/ROLLBACK/ABORT close it. */
  tx: 'begin' | 'end' | undefined;
}

export type MetaName =
  | 'set'
  | 'sleep'
  | 'setshell'
  | 'shell'
  | 'if'
  | 'elif'
  | 'else'
  | 'endif'
  | 'startpipeline'
  | 'syncpipeline'
  | 'endpipeline';

export interface MetaCommand {
  kind: 'meta';
  name: MetaName;
  index: number;
  line: number;
  col: number;
  firstLine: string;
  type: string;
  /** \set: the variable. */
  variable?: string;
  /** \set, \if, \elif. */
  expr?: Compiled;
  /** \set: the variables its expression reads, and whether it calls debug() (see exprUses). */
  uses?: { reads: ReadonlySet<string>; prints: boolean };
  /** \sleep: a number or a :variable, and the unit's factor to microseconds. */
  sleep?: { value: number | string; factor: number };
  /** \setshell and \shell: the command's words. */
  shell?: string[];
  /** \if, \elif: the command to go to when the condition is false (the next \elif, \else or \endif). */
  onFalse?: number;
  /** \elif, \else: the \endif to go to when an earlier branch ran. */
  toEnd?: number;
}

export type Command = SqlCommand | MetaCommand;

export interface Script {
  /** pgbench's description: the file name, or `<builtin: TPC-B (sort of)>`. */
  desc: string;
  /** The short name statement types start with (`select.sql`, `tpcb-like`). */
  base: string;
  weight: number;
  commands: Command[];
  /** Whether a command uses the connection's pipeline (\startpipeline). */
  pipelined: boolean;
}

export interface CompileOptions {
  mode: QueryMode;
  allowShell: boolean;
}

const META: Record<string, MetaName> = {
  set: 'set',
  sleep: 'sleep',
  setshell: 'setshell',
  shell: 'shell',
  if: 'if',
  elif: 'elif',
  else: 'else',
  endif: 'endif',
  startpipeline: 'startpipeline',
  syncpipeline: 'syncpipeline',
  endpipeline: 'endpipeline',
};

/** pgbench's parseVariable: a colon, then a letter, underscore or non-ASCII character, then those and digits. */
const VAR_START = /[A-Za-z_\u0080-\uffff]/;
const VAR_CHAR = /[A-Za-z0-9_\u0080-\uffff]/;

export function sqlTemplate(sql: string): SqlTemplate {
  const parts: string[] = [];
  const vars: string[] = [];
  let last = 0;
  let i = sql.indexOf(':');
  for (; i >= 0; i = sql.indexOf(':', i)) {
    if (!VAR_START.test(sql[i + 1] ?? '')) {
      while (sql[i] === ':') i++;
      continue;
    }
    let j = i + 2;
    while (j < sql.length && VAR_CHAR.test(sql[j] as string)) j++;
    parts.push(sql.slice(last, i));
    vars.push(sql.slice(i + 1, j));
    last = j;
    i = j;
  }
  parts.push(sql.slice(last));
  return { parts, vars };
}

/** The SQL with `$1, $2 …` (PostgreSQL) or `?` in place of each variable reference, as pgbench's -M extended. */
export function placeholderSql(t: SqlTemplate, driver: DriverName): string {
  let s = t.parts[0] as string;
  for (let i = 0; i < t.vars.length; i++) s += (driver === 'postgres' ? `$${i + 1}` : '?') + t.parts[i + 1];
  return s;
}

function txEffect(sql: string): 'begin' | 'end' | undefined {
  let effect: 'begin' | 'end' | undefined;
  for (const part of sql.split(';')) {
    const m = /^\s*(?:\/\*[\s\S]*?\*\/\s*)*([A-Za-z]+)(?:\s+([A-Za-z]+))?/.exec(part);
    if (m === null) continue;
    const w = (m[1] as string).toLowerCase();
    const w2 = (m[2] ?? '').toLowerCase();
    if (w === 'begin' || (w === 'start' && w2 === 'transaction')) effect = 'begin';
    else if ((w === 'commit' || w === 'end' || w === 'abort') && w2 !== 'prepared') effect = 'end';
    else if (w === 'rollback' && w2 !== 'to' && w2 !== 'prepared') effect = 'end';
    else if (w === 'prepare' && w2 === 'transaction') effect = 'end';
  }
  return effect;
}

function firstLineOf(s: string): string {
  const t = s.slice(0, 127);
  const nl = t.search(/[\r\n]/);
  return nl < 0 ? t : t.slice(0, nl);
}

/** The command's source line from its backslash, continuation lines joined as written (for -r reports). */
function metaLine(src: Source, at: number, end: number): string {
  return src.text.slice(at, end).replace(/\r?\n$/, '');
}

export function compileScript(
  name: string,
  base: string,
  text: string,
  weight: number,
  opts: CompileOptions,
): Script {
  const src = makeSource(name, text);
  const scanned = scanScript(text);
  const commands: Command[] = [];
  const typeNames = new Set<string>();
  const typeOf = (at: number): string => {
    const { line, col } = lineCol(src, at);
    let t = `${base}:${line}`;
    if (typeNames.has(t)) t = `${base}:${line}:${col}`;
    typeNames.add(t);
    return t;
  };
  for (const sc of scanned) {
    if (sc.kind === 'sql') {
      const { line, col } = lineCol(src, sc.at);
      commands.push({
        kind: 'sql',
        index: commands.length,
        line,
        col,
        firstLine: firstLineOf(sc.text),
        type: typeOf(sc.at),
        template: sqlTemplate(sc.text),
        store: undefined,
        prefix: '',
        compound: sc.compound,
        tx: txEffect(sc.text),
      });
      continue;
    }
    const cmd = compileMeta(src, sc, commands, opts, typeOf);
    if (cmd !== undefined) commands.push(cmd);
  }
  if (commands.length === 0) throw errorAt(src, 0, `empty command list for script "${name}"`);
  linkConditionals(src, commands);
  return {
    desc: name,
    base,
    weight,
    commands,
    pipelined: commands.some((c) => c.kind === 'meta' && c.name === 'startpipeline'),
  };
}

function compileMeta(
  src: Source,
  sc: Extract<ScannedCommand, { kind: 'meta' }>,
  commands: Command[],
  opts: CompileOptions,
  typeOf: (at: number) => string,
): MetaCommand | undefined {
  const words = sc.words;
  const nameWord = words[0] as Word;
  const cmdName = nameWord.text;
  const fail = (message: string, at: number = sc.at, hint?: string): never => {
    throw errorAt(src, at, `${message} in command "${cmdName}"`, hint);
  };
  const lower = cmdName.toLowerCase();
  if (lower === 'gset' || lower === 'aset') {
    if (words.length > 2) fail('too many arguments', (words[2] as Word).at);
    const prev = commands[commands.length - 1];
    if (prev === undefined || prev.kind !== 'sql' || prev.store !== undefined) {
      throw errorAt(
        src,
        sc.at,
        '\\gset must follow an SQL command',
        prev?.kind === 'sql' && prev.store !== undefined ? `it follows "${prev.firstLine}"` : undefined,
      );
    }
    prev.store = lower;
    prev.prefix = words[1]?.text ?? '';
    return undefined;
  }
  const name = META[lower];
  const { line, col } = lineCol(src, sc.at);
  const base = {
    kind: 'meta' as const,
    index: commands.length,
    line,
    col,
    firstLine: metaLine(src, sc.at, sc.end),
  };
  if (name === undefined) {
    return fail(
      'invalid command',
      nameWord.at,
      'meta-commands: \\set \\sleep \\setshell \\shell \\if \\elif \\else \\endif \\gset \\aset \\startpipeline \\syncpipeline \\endpipeline',
    );
  }
  switch (name) {
    case 'set': {
      const v = words[1];
      if (v === undefined) return fail('missing argument', sc.end);
      const expr = parseExpr(src.text, sc.exprStart, sc.end, { src, command: cmdName });
      const uses = { reads: new Set<string>(), prints: false };
      exprUses(expr, uses);
      return { ...base, name, type: typeOf(sc.at), variable: v.text, expr: compileExpr(expr), uses };
    }
    case 'if':
    case 'elif': {
      const expr = parseExpr(src.text, sc.exprStart, sc.end, { src, command: cmdName });
      return { ...base, name, type: typeOf(sc.at), expr: compileExpr(expr) };
    }
    case 'sleep': {
      if (words.length < 2) return fail('missing argument', sc.end);
      if (words.length > 3) return fail('too many arguments', (words[3] as Word).at);
      const arg = words[1] as Word;
      let value: number | string;
      let unit = words[2]?.text;
      let unitAt = words[2]?.at ?? arg.at;
      if (arg.text.startsWith(':')) value = arg.text.slice(1);
      else {
        const m = /^([+-]?)(\d*)(.*)$/.exec(arg.text) as RegExpExecArray;
        const digits = m[2] as string;
        const rest = m[3] as string;
        if (rest !== '') {
          if (words.length === 2 && digits !== '') {
            unit = rest;
            unitAt = arg.at + (m[1] as string).length + digits.length;
          } else {
            return fail(`invalid sleep time, must be an integer (${arg.text})`, arg.at);
          }
        }
        value = atoi(arg.text);
      }
      let factor = 1_000_000;
      if (unit !== undefined) {
        const u = unit.toLowerCase();
        if (u === 'us') factor = 1;
        else if (u === 'ms') factor = 1000;
        else if (u === 's') factor = 1_000_000;
        else return fail(`unrecognized time unit, must be us, ms or s (${unit})`, unitAt);
      }
      return { ...base, name, type: typeOf(sc.at), sleep: { value, factor } };
    }
    case 'setshell':
    case 'shell': {
      if (name === 'setshell' && words.length < 3) return fail('missing argument', sc.end);
      if (name === 'shell' && words.length < 2) return fail('missing command', sc.end);
      if (!opts.allowShell) {
        return fail(
          `\\${name} runs a shell command, which dbsmack does only with --allow-shell`,
          nameWord.at,
          'give --allow-shell to let the script run shell commands',
        );
      }
      const shell = words.slice(name === 'setshell' ? 2 : 1).map((w) => w.text);
      return {
        ...base,
        name,
        type: typeOf(sc.at),
        shell,
        ...(name === 'setshell' ? { variable: (words[1] as Word).text } : {}),
      };
    }
    default: {
      if (words.length !== 1) return fail('unexpected argument', (words[1] as Word).at);
      return { ...base, name, type: typeOf(sc.at) };
    }
  }
}

/** C's atoi: leading blanks, a sign, digits; anything after is ignored. */
export function atoi(s: string): number {
  const m = /^\s*([+-]?\d+)/.exec(s);
  if (m === null) return 0;
  const v = Number(m[1]);
  // a 32-bit int, as in C
  return v | 0;
}

/** Check the nesting of \if … \endif and resolve where each branch jumps. */
function linkConditionals(src: Source, commands: Command[]): void {
  interface Open {
    /** The \if, then each \elif/\else in order. */
    branches: MetaCommand[];
    sawElse: boolean;
  }
  const stack: Open[] = [];
  const cond = (c: MetaCommand, message: string): never => {
    throw errorAt(src, (src.lines[c.line - 1] as number) + c.col - 1, message);
  };
  for (const c of commands) {
    if (c.kind !== 'meta') continue;
    if (c.name === 'if') stack.push({ branches: [c], sawElse: false });
    else if (c.name === 'elif' || c.name === 'else') {
      const top = stack[stack.length - 1];
      if (top === undefined) cond(c, `\\${c.name} without matching \\if`);
      else {
        if (top.sawElse) cond(c, `\\${c.name} after \\else`);
        const prev = top.branches[top.branches.length - 1] as MetaCommand;
        if (prev.name !== 'else') prev.onFalse = c.index;
        top.branches.push(c);
        if (c.name === 'else') top.sawElse = true;
      }
    } else if (c.name === 'endif') {
      const top = stack.pop();
      if (top === undefined) cond(c, '\\endif without matching \\if');
      else {
        const last = top.branches[top.branches.length - 1] as MetaCommand;
        if (last.name !== 'else') last.onFalse = c.index;
        for (const b of top.branches) if (b.name !== 'if') b.toEnd = c.index;
      }
    }
  }
  const open = stack.pop();
  if (open !== undefined) cond(open.branches[0] as MetaCommand, '\\if without matching \\endif');
}
