/**
 * pgbench scripts as a dbsmack `Workload`: `dbsmack run script.sql`, `dbsmack run pgbench --builtin …`, and
 * what `dbsmack pgbench` runs. One event is one transaction, i.e. one run of a script chosen by weight; the
 * SQL commands are statement types named after the script and line (`select.sql:3`). The main thread and
 * every worker compile the same scripts from the same options.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import type { Connection, DriverName } from '../../driver/types.ts';
import { InputError, UsageError } from '../../errors.ts';
import { onlyReads } from '../../metrics/kinds.ts';
import { BUILTIN_DESCRIPTIONS } from '../catalog.ts';
import { parseWorkloadOptions } from '../options.ts';
import type { AdminContext, ClientContext, Workload, WorkloadRef } from '../types.ts';
import { BUILTIN_SCRIPTS, findBuiltin } from './builtins.ts';
import { cleanupTables, initialize, initOptionsFrom } from './init.ts';
import { listOption, PGBENCH_OPTIONS, parseDefines, parseRandomSeed, parseWeighted } from './options.ts';
import { PgPrng } from './prng.ts';
import { pgbenchFigures } from './result.ts';
import { scriptRunner } from './run-script.ts';
import { compileScript, type QueryMode, type Script } from './script.ts';
import { int, normInt } from './value.ts';
import { Variables } from './variables.ts';

export interface ScriptSpec {
  kind: 'file' | 'builtin';
  /** Absolute path of a file, or a built-in script's name. */
  name: string;
  weight: number;
  /** How a file is shown (as the user gave it). */
  display?: string;
}

function displayName(file: string): string {
  if (/dbsmack-stdin-[^/\\]+[/\\]stdin\.sql$/.test(file)) return '<stdin>';
  const rel = path.relative(process.cwd(), file) || file;
  return rel.startsWith('..') ? file : rel;
}

/** The scripts a workload runs: the `.sql` file it was named by, then `--file`, then `--builtin`. */
export function scriptSpecs(ref: WorkloadRef, opts: Record<string, unknown>): ScriptSpec[] {
  const specs: ScriptSpec[] = [];
  if (ref.ref !== 'pgbench')
    specs.push({ kind: 'file', name: ref.ref, weight: 1, display: displayName(ref.ref) });
  for (const f of listOption(opts.file as string)) {
    const { name, weight } = parseWeighted(f, '--file');
    const abs = path.resolve(name);
    specs.push({ kind: 'file', name: abs, weight, display: name });
  }
  for (const b of listOption(opts.builtin as string)) {
    const { name, weight } = parseWeighted(b, '--builtin');
    const found = findBuiltin(name);
    if ('error' in found) throw new UsageError(found.error);
    specs.push({ kind: 'builtin', name: found.name, weight });
  }
  if (specs.length === 0) specs.push({ kind: 'builtin', name: 'tpcb-like', weight: 1 });
  if (specs.length > 128) throw new UsageError('at most 128 SQL scripts are allowed');
  if (specs.reduce((a, s) => a + s.weight, 0) === 0)
    throw new UsageError('total script weight must not be zero');
  return specs;
}

export function loadScripts(
  specs: readonly ScriptSpec[],
  driver: DriverName,
  mode: QueryMode,
  allowShell: boolean,
): Script[] {
  const bases = new Map<string, number>();
  return specs.map((s) => {
    let text: string;
    let desc: string;
    let base: string;
    if (s.kind === 'builtin') {
      const b = BUILTIN_SCRIPTS.find((x) => x.name === s.name);
      if (b === undefined) throw new UsageError(`no builtin script found for name "${s.name}"`);
      text = b.script(driver);
      desc = b.desc;
      base = b.name;
    } else {
      desc = s.display ?? s.name;
      try {
        text = readFileSync(s.name, 'utf8');
      } catch (e) {
        throw new InputError(
          `could not open file "${desc}": ${(e as NodeJS.ErrnoException).code ?? (e as Error).message}`,
        );
      }
      base = path.basename(s.name);
    }
    const seen = bases.get(base) ?? 0;
    bases.set(base, seen + 1);
    if (seen > 0) base = `${base}#${seen + 1}`;
    return compileScript(desc, base, text, s.weight, { mode, allowShell });
  });
}

/** Read the scale (and partitioning) the way pgbench does for its built-in scripts. */
async function tableInfo(
  conn: Connection,
): Promise<{ scale: number; partition?: { method: string; partitions: number } }> {
  let rows: Record<string, unknown>[];
  try {
    rows = await conn.all('select count(*) as n from pgbench_branches');
  } catch (e) {
    throw new UsageError(
      `could not count number of branches: ${(e as Error).message}`,
      'the pgbench tables are not there: make them with `dbsmack pgbench -i` (or `dbsmack prepare pgbench`, or pgbench -i)',
    );
  }
  const scale = Number(rows[0]?.n ?? 0);
  if (conn.driver !== 'postgres') return { scale };
  try {
    const p = await conn.all(
      "select p.partstrat as s, count(i.inhparent) as n from pg_catalog.pg_class c left join pg_catalog.pg_partitioned_table p on p.partrelid = c.oid left join pg_catalog.pg_inherits i on c.oid = i.inhparent where c.relname = 'pgbench_accounts' and pg_catalog.pg_table_is_visible(c.oid) group by 1",
    );
    const s = p[0]?.s;
    if (s === 'r' || s === 'h')
      return { scale, partition: { method: s === 'r' ? 'range' : 'hash', partitions: Number(p[0]?.n ?? 0) } };
  } catch {
    // an old server without partitioning
  }
  return { scale };
}

/** pgbench's vacuum before a run (unless -n); errors are reported and ignored, as pgbench does. */
async function vacuumBeforeRun(ctx: AdminContext, all: boolean): Promise<void> {
  const d = ctx.driver;
  const stmts: string[] =
    d === 'postgres'
      ? ['vacuum pgbench_branches', 'vacuum pgbench_tellers', 'truncate pgbench_history']
      : d === 'mysql'
        ? ['truncate table pgbench_history']
        : ['delete from pgbench_history'];
  if (all && d === 'postgres') stmts.push('vacuum analyze pgbench_accounts');
  else if (all) stmts.push(d === 'mysql' ? 'analyze table pgbench_accounts' : 'analyze pgbench_accounts');
  for (const s of stmts) {
    try {
      await ctx.conn.query(s);
    } catch (e) {
      ctx.log(`dbsmack: ${(e as Error).message} (ignoring this error and continuing anyway)`);
    }
  }
}

export function pgbenchWorkload(ref: WorkloadRef): Workload {
  const opts = parseWorkloadOptions(
    ref.ref === 'pgbench' ? 'pgbench' : path.basename(ref.ref),
    PGBENCH_OPTIONS,
    ref.rawOptions,
  );
  const mode = opts.protocol as QueryMode;
  const allowShell = opts.allow_shell === true;
  const specs = scriptSpecs(ref, opts);
  const usesBuiltin = specs.some((s) => s.kind === 'builtin');
  const defines = parseDefines(opts.define as string);
  const baseVars = new Variables();
  for (const [k, v] of defines) {
    try {
      baseVars.setText('option', k, v);
    } catch (e) {
      throw new UsageError((e as Error).message);
    }
  }
  const compiled = new Map<DriverName, Script[]>();
  const scriptsFor = (driver: DriverName): Script[] => {
    let s = compiled.get(driver);
    if (s === undefined) {
      s = loadScripts(specs, driver, mode, allowShell);
      compiled.set(driver, s);
    }
    return s;
  };
  // compile now, so that a malformed script stops before anything connects
  scriptsFor('postgres');
  /** What check() learnt in the main thread, for the report. */
  let tables: Awaited<ReturnType<typeof tableInfo>> | undefined;
  let lastDriver: DriverName = 'postgres';
  const name = ref.ref === 'pgbench' ? 'pgbench' : path.basename(ref.ref);

  const w: Workload = {
    name,
    description:
      ref.ref === 'pgbench' ? BUILTIN_DESCRIPTIONS.pgbench : `pgbench script ${displayName(ref.ref)}`,
    options: PGBENCH_OPTIONS,
    async prepare(ctx: AdminContext): Promise<void> {
      await initialize(ctx, initOptionsFrom(ctx.options));
    },
    async cleanup(ctx: AdminContext): Promise<void> {
      await cleanupTables(ctx);
    },
    // counts, a partitioning method's letter, vacuum: nothing typed
    textCheck: true,
    // every script's SQL reads alone (select-only, a file of SELECTs); a compound command (\;) counts as a write
    readOnly: () =>
      scriptsFor('postgres').every((s) =>
        s.commands.every((c) => c.kind !== 'sql' || (!c.compound && onlyReads([c.template.parts.join(' ')]))),
      ),
    async check(ctx: AdminContext): Promise<void> {
      lastDriver = ctx.driver;
      scriptsFor(ctx.driver);
      if (usesBuiltin) tables = await tableInfo(ctx.conn);
      if (ctx.options.vacuum !== 'off') {
        await vacuumBeforeRun(ctx, ctx.options.vacuum === 'all');
        ctx.log(
          ctx.options.vacuum === 'all'
            ? 'starting vacuum...end.\nstarting vacuum pgbench_accounts...end.'
            : 'starting vacuum...end.',
        );
      }
    },
    extendResult(result) {
      const o = result.workload.options;
      const scale = (o.scale as number) > 0 ? (o.scale as number) : (tables?.scale ?? 1);
      result.pgbench = pgbenchFigures(result, {
        scripts: scriptsFor(result.target.driver ?? lastDriver),
        scale,
        ...(tables?.partition !== undefined ? { partition: tables.partition } : {}),
        mode,
        threads: o.jobs as number,
        perCommand: o.per_command === true,
        failuresDetailed: o.failures_detailed === true,
        connect: o.connect === true,
        detailed: (o.progress as number) > 0 || result.rate !== undefined || (o.latency_limit as number) > 0,
        latencyLimitMs: o.latency_limit as number,
      });
    },
    async client(ctx: ClientContext) {
      const scripts = scriptsFor(ctx.driver);
      const seed = parseRandomSeed(ctx.options.random_seed as string, ctx.seed);
      const { rngSeed, defaultSeed, chooseSeed } = seedsOf(seed, ctx.clients, ctx.clientId);
      const vars = baseVars.clone();
      let scale = ctx.options.scale as number;
      if (scale === 0 && usesBuiltin && !vars.has('scale')) {
        const rows = await ctx.all('pgbench setup', 'select count(*) as n from pgbench_branches');
        scale = Number(rows[0]?.n ?? 1);
      }
      if (scale === 0) scale = 1;
      if (!vars.has('scale')) vars.set('startup', 'scale', int(scale));
      if (!vars.has('client_id')) vars.set('startup', 'client_id', int(ctx.clientId));
      if (!vars.has('default_seed'))
        vars.set('startup', 'default_seed', int(normInt(BigInt.asIntN(64, defaultSeed))));
      if (!vars.has('random_seed')) vars.set('startup', 'random_seed', int(normInt(BigInt.asIntN(64, seed))));
      return scriptRunner(ctx, {
        scripts,
        mode,
        vars,
        rng: new PgPrng(rngSeed),
        chooseRng: new PgPrng(chooseSeed),
        perCommand: ctx.options.per_command === true,
        connect: ctx.options.connect === true,
        exitOnAbort: ctx.options.exit_on_abort === true,
        latencyLimitUs: (ctx.options.latency_limit as number) * 1000,
      });
    },
  };
  return w;
}

/**
 * pgbench's seeds, from one sequence of the run's seed: each client's generator (outputs 1 to clients),
 * then :default_seed, then for each client the choice of script and two more (pgbench's thread seeds).
 * The sequence is drawn once per thread and run, not once per client: drawn per client it cost
 * O(clients²) 64-bit steps at the start (226 ms for 1,024 clients, 15 ms for 96).
 */
export function seedsOf(
  seed: bigint,
  clients: number,
  clientId: number,
): { rngSeed: bigint; defaultSeed: bigint; chooseSeed: bigint } {
  if (seeds === undefined || seeds.seed !== seed || seeds.clients !== clients) {
    const base = new PgPrng(seed);
    const out = new Array<bigint>(4 * clients + 1);
    for (let i = 0; i < out.length; i++) out[i] = base.uint64();
    seeds = { seed, clients, out };
  }
  const out = seeds.out;
  return {
    rngSeed: out[clientId] as bigint,
    defaultSeed: out[clients] as bigint,
    chooseSeed: out[clients + 1 + 3 * clientId] as bigint,
  };
}

/** The sequence `seedsOf` drew last (one run at a time per thread; another seed or count draws anew). */
let seeds: { seed: bigint; clients: number; out: bigint[] } | undefined;
