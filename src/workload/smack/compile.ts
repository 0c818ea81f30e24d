/**
 * From the syntax tree to the model: checks every name against what it refers to (queries in barrels,
 * dictionaries in queries, clients in tables and main, `$N` against the arguments given) and works out
 * `main`. The original executed `main` line by line while parsing and forked one process tree per client
 * type; here the lines of each client type after its `init()` are sorted into what its report process does
 * before the threads start, what each thread does, and what the report process does after collecting them.
 */
import type { Block, Expr, MainStatement, Pos, Property, SmackProgram } from './ast.ts';
import type { DictionaryDef } from './dictionary.ts';
import { SmackError } from './errors.ts';
import type {
  Action,
  BarrelAction,
  ClientDef,
  Group,
  PrintLine,
  QueryDef,
  Segment,
  SmackModel,
  StatLookup,
  TableDef,
  Value,
} from './model.ts';
import { smackPositionals } from './positionals.ts';
import { compileTemplate } from './template.ts';

export const CLIENT_STATS = ['max_connect_time', 'min_connect_time', 'avg_connect_time'] as const;
export const TYPE_STATS = ['num_queries', 'max_time', 'min_time', 'q_per_s'] as const;
const METHODS = [
  'init',
  'set_num_rounds',
  'create_threads',
  'connect',
  'unload_query_barrel',
  'collect_threads',
  'disconnect',
  'query',
  'print',
  'sleep',
  'run_save_result',
  'run_check_result',
];

/** More clients than this is a typo, not a benchmark (each is a connection). */
const MAX_THREADS = 100_000;

const yes = (v: string | undefined): boolean => v !== undefined && /^y/i.test(v);

function props(b: Block): Map<string, Property> {
  // Repeated properties: the last one wins, as in the original.
  const m = new Map<string, Property>();
  for (const p of b.props) m.set(p.name, p);
  return m;
}

/** `$0` is the file, `$1 $2 …` the arguments after it. */
export interface CompileOptions {
  /**
   * When fewer arguments are given than `main` reads, leave `main` out (no client groups) instead of
   * failing: `prepare`, `cleanup` and the workload's help need only the tables and the definitions.
   */
  argsOptional?: boolean;
}

export function compileSmack(
  prog: SmackProgram,
  args: readonly string[],
  o: CompileOptions = {},
): SmackModel {
  const file = prog.file;
  const err = (pos: Pos, msg: string, hint?: string): never => {
    throw new SmackError(file, pos, msg, hint);
  };
  const queries = new Map<string, QueryDef>();
  const dictionaries = new Map<string, DictionaryDef>();
  const clients = new Map<string, ClientDef>();
  const tables: TableDef[] = [];
  const barrelsToResolve: { client: ClientDef; prop: Property }[] = [];
  const tablesToResolve: { block: Block; p: Map<string, Property> }[] = [];

  for (const b of prog.blocks) {
    const p = props(b);
    const val = (n: string): string | undefined => p.get(n)?.value;
    if (b.kind === 'query') {
      const q = p.get('query');
      if (q === undefined) err(b.pos, `query "${b.name}" has no query property`, 'add query "SQL";');
      const sql = (q as Property).value;
      const parsed = yes(val('parsed'));
      queries.set(b.name, {
        name: b.name,
        pos: b.pos,
        sql,
        type: val('type') || b.name,
        hasResultSet: yes(val('has_result_set')),
        parsed,
        parts: parsed ? compileTemplate(sql) : undefined,
      });
    } else if (b.kind === 'dictionary') {
      const type = val('type') ?? '';
      if (type !== 'rand' && type !== 'seq' && type !== 'unique') {
        err(
          p.get('type')?.valuePos ?? b.pos,
          `unknown dictionary type '${type}'`,
          'type is rand, seq or unique',
        );
      }
      const st = val('source_type');
      if (st !== undefined && st !== 'file' && st !== 'list' && st !== 'template') {
        err(
          p.get('source_type')?.valuePos ?? b.pos,
          `unknown dictionary source type '${st}'`,
          'source_type is file, list or template',
        );
      }
      if (st === 'template' && type !== 'unique') {
        err(
          p.get('source_type')?.valuePos ?? b.pos,
          `a template source needs type "unique" (dictionary "${b.name}" is ${type})`,
        );
      }
      if (type !== 'unique' && (st === undefined || val('source') === undefined)) {
        err(
          b.pos,
          `dictionary "${b.name}" needs source_type and source`,
          'e.g. source_type "list"; source "a,b,c";',
        );
      }
      const fse = val('file_size_equiv') ?? '';
      if (fse !== '' && !/^\d+$/.test(fse.trim())) {
        err(
          p.get('file_size_equiv')?.valuePos ?? b.pos,
          `file_size_equiv must be a number of bytes, got "${fse}"`,
        );
      }
      dictionaries.set(b.name, {
        name: b.name,
        pos: b.pos,
        type: type as DictionaryDef['type'],
        sourceType: st as DictionaryDef['sourceType'],
        source: val('source') ?? '',
        delim: val('delim') ?? '',
        fileSizeEquiv: fse === '' ? 0 : Number(fse),
        sourcePos: p.get('source')?.valuePos ?? b.pos,
      });
    } else if (b.kind === 'client') {
      const c: ClientDef = {
        name: b.name,
        pos: b.pos,
        user: val('user') ?? 'test',
        pass: val('pass') ?? '',
        host: val('host') ?? 'localhost',
        db: val('db') ?? 'test',
        port: val('port') ?? '',
        socket: val('socket') ?? '',
        barrel: [],
      };
      if (c.port !== '' && !/^\d+$/.test(c.port.trim())) {
        err(p.get('port')?.valuePos ?? b.pos, `port must be a number, got "${c.port}"`);
      }
      const qb = p.get('query_barrel');
      if (qb) barrelsToResolve.push({ client: c, prop: qb });
      clients.set(b.name, c);
    } else {
      tablesToResolve.push({ block: b, p });
    }
  }

  // The original needed queries defined before the client naming them and clients before tables; here
  // order does not matter.
  for (const { client, prop } of barrelsToResolve) client.barrel = parseBarrel(prop, queries, file);
  for (const { block: b, p } of tablesToResolve) {
    const cp = p.get('client');
    if (cp === undefined)
      err(b.pos, `table "${b.name}" has no client`, 'add client "NAME"; naming a client block');
    const c = clients.get((cp as Property).value);
    if (c === undefined) {
      err(
        (cp as Property).valuePos,
        `client "${(cp as Property).value}" of table "${b.name}" is not defined`,
      );
    }
    const mr = p.get('min_rows')?.value ?? '';
    if (mr !== '' && !/^\d+$/.test(mr.trim())) {
      err(p.get('min_rows')?.valuePos ?? b.pos, `min_rows must be a number, got "${mr}"`);
    }
    if (!/^[A-Za-z_][A-Za-z0-9_$.]*$/.test(b.name)) {
      err(b.pos, `table name "${b.name}" is not a plain SQL name`, 'letters, digits and _');
    }
    tables.push({
      name: b.name,
      pos: b.pos,
      client: c as ClientDef,
      create: p.get('create')?.value,
      minRows: mr === '' ? 0 : Number(mr),
      dataFile: p.get('data_file')?.value,
      dataFilePos: p.get('data_file')?.valuePos,
      genDataFile: p.get('gen_data_file')?.value,
      genDataFilePos: p.get('gen_data_file')?.valuePos,
    });
  }

  const usedDictionaries = new Set<string>();
  for (const q of queries.values()) {
    for (const part of q.parts ?? []) {
      if ('dict' in part) {
        if (!dictionaries.has(part.dict)) {
          err(
            q.pos,
            `query "${q.name}" uses $${part.dict}, but no dictionary "${part.dict}" is defined`,
            dictionaries.size > 0
              ? `dictionaries: ${[...dictionaries.keys()].join(', ')}; write \\$ for a literal $`
              : 'define it with dictionary "NAME" { … }; write \\$ for a literal $',
          );
        }
      }
    }
  }

  const needed = Math.max(0, ...smackPositionals(prog).map((p) => p.index));
  const groups =
    o.argsOptional && args.length < needed
      ? []
      : runMain(prog.main, clients, queries, file, args, prog.mainPos);
  for (const g of groups) {
    for (const a of g.client.barrel) {
      if (a.kind === 'query')
        for (const part of a.query.parts ?? []) if ('dict' in part) usedDictionaries.add(part.dict);
    }
  }
  return { file, queries, dictionaries, clients, tables, groups, usedDictionaries };
}

/**
 * `"2 select_by_username 1 update_by_username"`: count and query name pairs; `-1.5` where a count is
 * expected sleeps 1.5 s. Any whitespace separates (the original accepted only spaces).
 */
function parseBarrel(prop: Property, queries: Map<string, QueryDef>, file: string): BarrelAction[] {
  const toks = prop.value.split(/\s+/).filter(Boolean);
  const out: BarrelAction[] = [];
  const where = prop.valuePos;
  for (let i = 0; i < toks.length; i++) {
    const t = toks[i] as string;
    if (/^-\d*\.?\d+$/.test(t)) {
      out.push({ kind: 'sleep', ms: Number(t.slice(1)) * 1000 });
      continue;
    }
    if (!/^\d+$/.test(t)) {
      throw new SmackError(
        file,
        where,
        `query_barrel: expected a count before '${t}'`,
        'a barrel is "COUNT QUERY COUNT QUERY …", e.g. "2 select_by_username 1 update_by_username"',
      );
    }
    const name = toks[i + 1];
    if (name === undefined) {
      throw new SmackError(file, where, `query_barrel: count ${t} at the end has no query name`);
    }
    i++;
    const q = queries.get(name);
    if (q === undefined) {
      throw new SmackError(
        file,
        where,
        `query_barrel names query "${name}", which is not defined`,
        queries.size > 0 ? `queries: ${[...queries.keys()].join(', ')}` : 'define it with query "NAME" { … }',
      );
    }
    out.push({ kind: 'query', query: q, count: Number(t) });
  }
  return out;
}

interface ClientState {
  group: Group;
  phase: 'init' | 'threads' | 'collected';
  numRounds: number;
  connected: boolean;
  threadsSet: boolean;
  /** Actions gathered since the last unload (they run before the next one, or at the thread's end). */
  pending: Action[];
}

type Call = Extract<MainStatement, { kind: 'call' }>;
type Fail = (pos: Pos, msg: string, hint?: string) => never;

/**
 * `main` worked out in its order, the way super-smack executed it line by line: assignments and the values
 * they compute (`MainValues`), then each client's calls, one method per phase of a client's life: `init`
 * makes its group; set-up (`set_num_rounds`, `create_threads`, `connect`, `disconnect`); the query barrel
 * (`unload_query_barrel`, `collect_threads`); the actions placed before, between or after the rounds
 * (`query`, `sleep`, `run_save_result`); and the report's lines (`print`). `finish` closes the groups and
 * lays out their client ids.
 */
function runMain(
  main: MainStatement[],
  clients: Map<string, ClientDef>,
  queries: Map<string, QueryDef>,
  file: string,
  args: readonly string[],
  mainPos: Pos,
): Group[] {
  const m = new MainCompiler(clients, queries, file, args);
  for (const st of main) m.statement(st);
  return m.finish(mainPos);
}

/** The values `main` computes: literals, `$0 $1 …`, its variables, and client statistics for after the run. */
class MainValues {
  private readonly vars = new Map<string, Value>();

  constructor(
    private readonly clients: Map<string, ClientDef>,
    private readonly file: string,
    private readonly args: readonly string[],
    private readonly fail: Fail,
  ) {}

  assign(name: string, e: Expr): void {
    this.vars.set(name, this.value(e));
  }

  value(e: Expr): Value {
    switch (e.kind) {
      case 'number':
        return e.text;
      case 'string':
        return e.value;
      case 'arg':
        return this.arg(e);
      case 'var': {
        const v = this.vars.get(e.name);
        if (v === undefined)
          this.fail(e.pos, `$${e.name} is used before it is assigned`, `assign it first: $${e.name} = …;`);
        return v as Value;
      }
      case 'stat':
        return this.stat(e);
      case 'concat': {
        const parts = e.parts.map((p) => this.value(p));
        if (parts.every((p) => typeof p === 'string')) return parts.join('');
        return (s: StatLookup) => parts.map((p) => (typeof p === 'string' ? p : p(s))).join('');
      }
    }
  }

  /** A value known before the run (not a statistic). */
  now(e: Expr, what: string): string {
    const v = this.value(e);
    if (typeof v !== 'string') {
      this.fail(
        e.pos,
        `${what} needs a value known before the run; client::… statistics exist only after it`,
      );
    }
    return v as string;
  }

  int(e: Expr, what: string, min: number, max = Number.MAX_SAFE_INTEGER): number {
    const s = this.now(e, what).trim();
    if (!/^\d+$/.test(s) || Number(s) < min || Number(s) > max) {
      this.fail(e.pos, `${what} expects a whole number from ${min} to ${max}, got '${s}'`);
    }
    return Number(s);
  }

  private arg(e: Extract<Expr, { kind: 'arg' }>): string {
    if (e.index === 0) return this.file;
    const v = this.args[e.index - 1];
    if (v === undefined) {
      const n = this.args.length;
      this.fail(
        e.pos,
        `$${e.index} refers to command-line argument ${e.index}, but ${n} argument${n === 1 ? ' was' : 's were'} given`,
        `run it as dbsmack run ${this.file} ${Array.from({ length: e.index }, (_, k) => `ARG${k + 1}`).join(' ')}`,
      );
    }
    return v as string;
  }

  /** `client::stat` or `client::type.stat`: checked now, read from the run's figures when printed. */
  private stat(e: Extract<Expr, { kind: 'stat' }>): Value {
    const c = this.clients.get(e.client);
    if (c === undefined) this.fail(e.pos, `${e.client}::… names client "${e.client}", which is not defined`);
    if (e.type === undefined) {
      if (!(CLIENT_STATS as readonly string[]).includes(e.stat)) {
        this.fail(
          e.pos,
          `unknown client statistic '${e.stat}'`,
          `${e.client}::${CLIENT_STATS.join(`, ${e.client}::`)}`,
        );
      }
    } else {
      if (!(TYPE_STATS as readonly string[]).includes(e.stat)) {
        this.fail(e.pos, `unknown query statistic '${e.stat}'`, `use ${TYPE_STATS.join(', ')}`);
      }
      const types = new Set(
        (c as ClientDef).barrel.flatMap((a) => (a.kind === 'query' ? [a.query.type] : [])),
      );
      if (!types.has(e.type)) {
        this.fail(
          e.pos,
          `client "${e.client}" runs no query of type '${e.type}'`,
          types.size > 0 ? `its types: ${[...types].join(', ')}` : 'it has no query_barrel',
        );
      }
    }
    const { client, type, stat } = e;
    return (s: StatLookup) => s(client, type, stat).toFixed(6);
  }
}

class MainCompiler {
  private readonly states = new Map<string, ClientState>();
  private readonly groups: Group[] = [];
  private readonly values: MainValues;
  private readonly fail: Fail;

  constructor(
    private readonly clients: Map<string, ClientDef>,
    private readonly queries: Map<string, QueryDef>,
    file: string,
    args: readonly string[],
  ) {
    this.fail = (pos, msg, hint) => {
      throw new SmackError(file, pos, msg, hint);
    };
    this.values = new MainValues(clients, file, args, this.fail);
  }

  statement(st: MainStatement): void {
    if (st.kind === 'assign') {
      this.values.assign(st.name, st.value);
      return;
    }
    const client = this.callee(st);
    if (st.method === 'init') {
      this.init(st, client);
      return;
    }
    const s = this.states.get(st.client);
    if (s === undefined) {
      this.fail(
        st.pos,
        `${st.client}.${st.method}() before ${st.client}.init()`,
        `super-smack ignored such lines silently; call ${st.client}.init() first`,
      );
    }
    this.call(st, client, s as ClientState);
  }

  /** The groups closed (a client left in its threads phase is collected) and given their client ids. */
  finish(mainPos: Pos): Group[] {
    for (const s of this.states.values()) if (s.phase === 'threads') finishThreads(s.group, s);
    const groups = this.groups;
    if (groups.length === 0) {
      this.fail(
        mainPos,
        'main starts no client',
        'start one with NAME.init(); NAME.set_num_rounds(R); NAME.create_threads(N); …',
      );
    }
    let start = 0;
    for (const g of groups) {
      g.start = start;
      start += g.threads;
      for (const a of g.client.barrel) {
        if (a.kind !== 'query') continue;
        const t = a.query.type;
        g.typeNames.set(t, groups.length > 1 ? `${g.client.name}::${t}` : t);
      }
    }
    return groups;
  }

  /** The client a call names, and a method super-smack knows. */
  private callee(st: Call): ClientDef {
    const c = this.clients.get(st.client);
    if (c === undefined) {
      this.fail(
        st.pos,
        `client "${st.client}" is not defined`,
        this.clients.size > 0
          ? `clients: ${[...this.clients.keys()].join(', ')}`
          : 'define it with client "NAME" { … }',
      );
    }
    if (!METHODS.includes(st.method)) {
      this.fail(
        st.methodPos,
        `unknown method '${st.method}' called for client '${st.client}'`,
        `methods: ${METHODS.join(', ')}`,
      );
    }
    return c as ClientDef;
  }

  private init(st: Call, client: ClientDef): void {
    this.arity(st, 0);
    if (this.states.has(st.client)) this.fail(st.methodPos, `${st.client}.init() is called a second time`);
    const g: Group = {
      client,
      threads: 1,
      start: 0,
      before: [],
      threadSetup: [],
      segments: [],
      threadEnd: [],
      after: [],
      rounds: 0,
      prints: [],
      typeNames: new Map(),
    };
    this.groups.push(g);
    this.states.set(st.client, {
      group: g,
      phase: 'init',
      numRounds: 0,
      connected: false,
      threadsSet: false,
      pending: [],
    });
  }

  private call(st: Call, client: ClientDef, s: ClientState): void {
    switch (st.method) {
      case 'set_num_rounds':
      case 'create_threads':
      case 'connect':
      case 'disconnect':
        this.setup(st, client, s);
        break;
      case 'unload_query_barrel':
      case 'collect_threads':
        this.barrel(st, s);
        break;
      case 'query':
      case 'sleep':
      case 'run_save_result':
        this.action(st, s);
        break;
      case 'print':
        this.print(st, s);
        break;
      case 'run_check_result':
        break;
    }
  }

  /** A client's set-up: its rounds, its threads, whether they are connected. */
  private setup(st: Call, client: ClientDef, s: ClientState): void {
    switch (st.method) {
      case 'set_num_rounds':
        this.arity(st, 1);
        s.numRounds = this.values.int(st.args[0] as Expr, 'set_num_rounds', 0);
        break;
      case 'create_threads':
        this.arity(st, 1);
        if (s.phase !== 'init')
          this.fail(st.methodPos, `${st.client}.create_threads() is called a second time`);
        if (client.barrel.length === 0) {
          this.fail(
            st.methodPos,
            `client "${st.client}" has no query_barrel to run`,
            'add query_barrel "1 QUERY"; to it',
          );
        }
        s.group.threads = this.values.int(st.args[0] as Expr, 'create_threads', 1, MAX_THREADS);
        s.threadsSet = true;
        s.phase = 'threads';
        s.connected = false;
        break;
      case 'connect':
        this.arity(st, 0);
        s.connected = true;
        break;
      case 'disconnect':
        this.arity(st, 0);
        s.connected = false;
        break;
    }
  }

  /** The query barrel: each unload is a segment of rounds in the threads; collecting ends the threads. */
  private barrel(st: Call, s: ClientState): void {
    const g = s.group;
    this.arity(st, 0);
    if (st.method === 'collect_threads') {
      if (s.phase !== 'threads')
        this.fail(st.methodPos, `${st.client}.collect_threads() without create_threads()`);
      finishThreads(g, s);
      s.phase = 'collected';
      return;
    }
    if (s.phase !== 'threads') {
      this.fail(
        st.methodPos,
        s.phase === 'init'
          ? `${st.client}.unload_query_barrel() before create_threads()`
          : `${st.client}.unload_query_barrel() after collect_threads()`,
        'the barrel runs in the threads: init, set_num_rounds, create_threads, connect, unload_query_barrel, collect_threads',
      );
    }
    if (!s.connected)
      this.fail(st.methodPos, `${st.client}.unload_query_barrel() before ${st.client}.connect()`);
    const seg: Segment = { rounds: s.numRounds, before: s.pending };
    s.pending = [];
    g.segments.push(seg);
    g.rounds += s.numRounds;
  }

  /**
   * A query, sleep or saved result, placed by the client's phase: before the threads start (report process),
   * in the threads (before the next unload, or at their end), or after they are collected.
   */
  private action(st: Call, s: ClientState): void {
    const values = this.values;
    let a: Action;
    switch (st.method) {
      case 'query':
        this.arity(st, 1);
        a = { kind: 'query', sql: values.now(st.args[0] as Expr, 'query'), pos: (st.args[0] as Expr).pos };
        break;
      case 'sleep': {
        // Fixed: the second value is milliseconds (the original used ms/1000 as microseconds).
        this.arity(st, [1, 2]);
        const sec = values.int(st.args[0] as Expr, 'sleep', 0);
        const ms = st.args[1] ? values.int(st.args[1], 'sleep', 0) : 0;
        a = { kind: 'sleep', ms: sec * 1000 + ms };
        break;
      }
      default: {
        // run_save_result
        this.arity(st, 2);
        const qn = values.now(st.args[0] as Expr, 'run_save_result');
        const q = this.queries.get(qn);
        if (q === undefined)
          this.fail((st.args[0] as Expr).pos, `run_save_result names query "${qn}", which is not defined`);
        a = {
          kind: 'save',
          query: q as QueryDef,
          file: values.now(st.args[1] as Expr, 'run_save_result'),
          pos: st.pos,
        };
      }
    }
    if (s.phase === 'init') s.group.before.push(a);
    else if (s.phase === 'threads') s.pending.push(a);
    else s.group.after.push(a);
  }

  /** A line of the report: printed once per thread in the threads phase, after the run once collected. */
  private print(st: Call, s: ClientState): void {
    this.arity(st, 1);
    const line: PrintLine = {
      value: this.values.value(st.args[0] as Expr),
      times: s.phase === 'threads' ? s.group.threads : 1,
      where: s.phase === 'collected' ? 'after' : 'before',
    };
    s.group.prints.push(line);
  }

  private arity(st: Call, n: number | [number, number]): void {
    const [lo, hi] = typeof n === 'number' ? [n, n] : n;
    if (st.args.length < lo || st.args.length > hi) {
      this.fail(
        st.methodPos,
        `${st.method} takes ${lo === hi ? lo : `${lo} or ${hi}`} parameter${hi === 1 ? '' : 's'}, got ${st.args.length}`,
      );
    }
  }
}

/** The thread part is over: the first segment's actions become set-up, the last pending ones the end. */
function finishThreads(g: Group, s: ClientState): void {
  const first = g.segments[0];
  if (first) {
    g.threadSetup = first.before;
    first.before = [];
  } else g.threadSetup = s.pending.splice(0);
  g.threadEnd = s.pending;
  s.pending = [];
}
