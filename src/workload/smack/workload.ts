/**
 * A `.smack` file as a dbsmack `Workload`. One event is one round of a client's query barrel; the client
 * types that `main` starts run side by side, client ids assigned to them by ranges in the order of their
 * `init()`. The main thread and every worker compile the same file with the same arguments.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { loadDriver } from '../../driver/index.ts';
import type { Connection, Target } from '../../driver/types.ts';
import { InputError } from '../../errors.ts';
import { onlyReads } from '../../metrics/kinds.ts';
import { parseWorkloadOptions } from '../options.ts';
import type {
  AdminContext,
  ClientContext,
  ClientHandler,
  OptionSpec,
  SingleStatement,
  Workload,
  WorkloadRef,
} from '../types.ts';
import { type CompileOptions, compileSmack } from './compile.ts';
import { type DictionaryInstance, dataPath, instantiate, loadWords } from './dictionary.ts';
import { escapeWord } from './escape.ts';
import type { Action, BarrelAction, QueryDef, SmackModel } from './model.ts';
import { parseSmack } from './parser.ts';
import { type SmackPositional, smackPositionals } from './positionals.ts';
import { buildGroups, groupIndexOf } from './report.ts';
import { prepareTable } from './tables.ts';
import { clientTarget, DB_TYPES, defaultDataDir, ensureDir } from './target.ts';

export const SMACK_OPTIONS: Record<string, OptionSpec> = {
  db_type: {
    type: 'string',
    default: 'sqlite',
    choices: ['sqlite', 'mysql', 'pg'],
    description: 'back-end for the client blocks when --db is not given (-d)',
  },
  datadir: {
    type: 'string',
    default: '',
    description: 'directory of data and dictionary files (-D)',
    defaultText: 'dbsmack in the user cache directory (~/.cache/dbsmack)',
  },
  allow_shell: {
    type: 'bool',
    default: false,
    description: 'let gen_data_file run shell commands other than gen-data',
  },
};

/**
 * A round of the barrel drawn ahead, for the engine's statement batches on the native I/O core: `single`
 * when a round is one query, `sequence` when it is several (text queries, `SingleStatement.sql`, the words
 * drawn as `event()` draws them, in the same order; a round longer than a batch holds runs through
 * `event()`). Undefined where a round sleeps or has no query; the caller offers it only for a barrel
 * unloaded once (one segment), whose rounds have no main-program actions between them.
 */
function barrelDraws(
  ctx: ClientContext,
  barrel: readonly BarrelAction[],
  typeOf: (q: QueryDef) => string,
  sqlOf: (q: QueryDef) => string,
): Pick<ClientHandler, 'single' | 'sequence' | 'sequenceLength'> | undefined {
  const steps: { query: QueryDef; count: number; as: SingleStatement['statement'] }[] = [];
  let length = 0;
  for (const a of barrel) {
    if (a.kind === 'sleep') return undefined;
    if (a.count <= 0) continue;
    // declared for its type and kind only: the round's queries go as text, as ctx.query sends them
    steps.push({
      query: a.query,
      count: a.count,
      as: ctx.statement(typeOf(a.query), a.query.sql, { prepare: false }),
    });
    length += a.count;
  }
  if (length === 0) return undefined;
  const first = steps[0] as (typeof steps)[number];
  if (length === 1) return { single: () => ({ statement: first.as, sql: sqlOf(first.query) }) };
  return {
    sequenceLength: length,
    sequence: () => {
      const out: SingleStatement[] = [];
      for (const st of steps)
        for (let k = 0; k < st.count; k++) out.push({ statement: st.as, sql: sqlOf(st.query) });
      return out;
    },
  };
}

/** Statement type of `query()` and `run_save_result()` calls in main. */
const MAIN_TYPE = 'main';

export function compileSmackFile(
  file: string,
  args: readonly string[],
  display = file,
  o: CompileOptions = {},
): SmackModel & { positionals: SmackPositional[] } {
  let src: string;
  try {
    src = readFileSync(file, 'utf8');
  } catch (e) {
    throw new InputError(
      `${display}: cannot read the smack file: ${(e as NodeJS.ErrnoException).code ?? (e as Error).message}`,
    );
  }
  const prog = parseSmack(src, display);
  return { ...compileSmack(prog, args, o), positionals: smackPositionals(prog) };
}

function tsv(rows: Record<string, unknown>[]): string {
  if (rows.length === 0) return '';
  const cols = Object.keys(rows[0] as object);
  let s = `${cols.map((c) => `${c}\t`).join('')}\n`;
  for (const r of rows)
    s += `${cols.map((c) => `${r[c] === null || r[c] === undefined ? 'NULL' : String(r[c])}\t`).join('')}\n`;
  return s;
}

export function smackWorkload(ref: WorkloadRef): Workload {
  const file = ref.ref;
  const rel = path.relative(process.cwd(), file) || file;
  // A file read from stdin was saved to a temporary file (see registry.ts); errors name it <stdin>.
  const display = /dbsmack-stdin-[^/\\]+[/\\]stdin\.smack$/.test(file)
    ? '<stdin>'
    : rel.startsWith('..')
      ? file
      : rel;
  const model = compileSmackFile(file, ref.args, display, { argsOptional: ref.argsOptional === true });
  const opts = parseWorkloadOptions(path.basename(file), SMACK_OPTIONS, ref.rawOptions);
  const driver = DB_TYPES[opts.db_type as string] ?? 'sqlite';
  const datadir = path.resolve((opts.datadir as string) || defaultDataDir());
  const allowShell = opts.allow_shell === true;
  let words: Map<string, string[]> | undefined;
  const wordsOf = (): Map<string, string[]> => {
    if (words === undefined) {
      words = new Map();
      for (const name of model.usedDictionaries) {
        const def = model.dictionaries.get(name);
        if (def) words.set(name, loadWords(def, model.file, datadir));
      }
    }
    return words;
  };
  const groupOf = (id: number) => model.groups[groupIndexOf(model, id)] ?? model.groups[0]!;

  const w: Workload = {
    name: path.basename(file),
    description: `super-smack file ${display}`,
    options: SMACK_OPTIONS,
    positionals: model.positionals.map((p) => ({
      name: `$${p.index}`,
      description: `read by ${p.uses.join(', ')}`,
    })),
    defaults: {
      clients: model.groups.reduce((s, g) => s + g.threads, 0),
      rounds: Math.max(0, ...model.groups.map((g) => g.rounds)),
    },
    prepareOnRun: true,
    // every client type's barrel only reads (a select-key file); the tables' set-up is not a round's
    readOnly: () =>
      model.groups.length > 0 &&
      model.groups.every((g) =>
        onlyReads(g.client.barrel.flatMap((a) => (a.kind === 'query' ? [a.query.sql] : []))),
      ),
    defaultTarget(): Target {
      // Without main (prepare, cleanup and help need no $1 $2 …), the first table's client.
      const client =
        model.groups[0]?.client ?? model.tables[0]?.client ?? model.clients.values().next().value;
      if (client === undefined)
        throw new InputError(
          `${display}: no client block to connect with`,
          'add client "NAME" { … }, or give --db URL',
        );
      return clientTarget(client, driver, datadir);
    },
    targetFor(clientId: number, base: Target): Target {
      return clientTarget(groupOf(clientId).client, base.driver, datadir);
    },
    async prepare(ctx: AdminContext): Promise<void> {
      ensureDir(datadir);
      const opened: Connection[] = [];
      try {
        const drv = await loadDriver(ctx.target.driver);
        for (const t of model.tables) {
          const target = ctx.targetOverridden
            ? ctx.target
            : clientTarget(t.client, ctx.target.driver, datadir);
          const open = async (): Promise<Connection> => {
            const c = await drv.connect(target, { connectTimeoutMs: 10_000 });
            opened.push(c);
            return c;
          };
          const same =
            target.redactedUrl === ctx.target.redactedUrl && target.password === ctx.target.password;
          const conn = same ? ctx.conn : await open();
          await prepareTable(conn, t, { file: model.file, datadir, allowShell, log: ctx.log, open });
        }
      } finally {
        await Promise.all(opened.map((c) => c.close().catch(() => {})));
      }
      // Check every dictionary now, so that a missing file or an empty list stops the run before it starts.
      const rnd = { next: () => 0, int: (a: number) => a };
      for (const [name, list] of wordsOf()) {
        const def = model.dictionaries.get(name);
        if (def) instantiate(def, list, model.file, rnd, 0, 1).next();
      }
    },
    async cleanup(ctx: AdminContext): Promise<void> {
      // Each table on its own client's connection, as prepare made it.
      const opened: Connection[] = [];
      try {
        const drv = await loadDriver(ctx.target.driver);
        for (const t of model.tables) {
          const target = ctx.targetOverridden
            ? ctx.target
            : clientTarget(t.client, ctx.target.driver, datadir);
          const same =
            target.redactedUrl === ctx.target.redactedUrl && target.password === ctx.target.password;
          let conn = ctx.conn;
          if (!same) {
            conn = await drv.connect(target, { connectTimeoutMs: 10_000 });
            opened.push(conn);
          }
          await conn.query(`drop table if exists ${t.name}`);
          ctx.log(`dropped table ${t.name}`);
        }
      } finally {
        await Promise.all(opened.map((c) => c.close().catch(() => {})));
      }
    },
    textLayout: 'barrel',
    groupsOf: (result) => buildGroups(model, result),
    async client(ctx: ClientContext) {
      const g = groupOf(ctx.clientId);
      const isReport = ctx.clientId === g.start;
      const dicts = new Map<string, DictionaryInstance>();
      for (const [name, list] of wordsOf()) {
        const def = model.dictionaries.get(name);
        if (def) dicts.set(name, instantiate(def, list, model.file, ctx.random, ctx.clientId, ctx.clients));
      }
      const sqlOf = (q: QueryDef): string => {
        if (q.parts === undefined) return q.sql;
        let s = '';
        for (const p of q.parts) {
          if ('text' in p) s += p.text;
          else s += escapeWord((dicts.get(p.dict) as DictionaryInstance).next(), p.quote, ctx.driver);
        }
        return s;
      };
      const typeOf = (q: QueryDef): string => g.typeNames.get(q.type) ?? q.type;
      const runActions = async (actions: Action[]): Promise<void> => {
        for (const a of actions) {
          if (a.kind === 'sleep') await ctx.sleep(a.ms);
          else if (a.kind === 'query') await ctx.query(MAIN_TYPE, a.sql);
          else {
            const rows = await ctx.all(MAIN_TYPE, sqlOf(a.query));
            const text = a.query.hasResultSet ? tsv(rows) : '';
            if (a.file === '-') process.stdout.write(text);
            else writeFileSync(dataPath(datadir, a.file), text);
          }
        }
      };
      if (isReport) await runActions(g.before);
      await runActions(g.threadSetup);
      const segs = g.segments;
      let cur = 0;
      let inSeg = 0;
      const advance = async (): Promise<void> => {
        while (cur < segs.length && inSeg >= (segs[cur]?.rounds ?? 0)) {
          cur++;
          inSeg = 0;
          if (cur < segs.length) await runActions(segs[cur]!.before);
        }
      };
      const barrel = g.client.barrel;
      const batched = segs.length === 1 ? barrelDraws(ctx, barrel, typeOf, sqlOf) : undefined;
      return {
        ...batched,
        rounds: g.rounds,
        async event() {
          await advance();
          inSeg++;
          for (const a of barrel) {
            if (a.kind === 'sleep') await ctx.sleep(a.ms);
            else for (let k = 0; k < a.count; k++) await ctx.query(typeOf(a.query), sqlOf(a.query));
          }
        },
        async close() {
          await advance();
          await runActions(g.threadEnd);
          if (isReport) await runActions(g.after);
        },
      };
    },
  };
  return w;
}
