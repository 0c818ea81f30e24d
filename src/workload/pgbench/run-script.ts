/**
 * One client running pgbench scripts: picks a script by weight, runs its commands with the client's
 * variables and random state, and keeps pgbench's books (retries restart with the same random numbers,
 * failures are counted per script and command, any other error aborts this client only).
 */
import { execFile } from 'node:child_process';
import { DbError } from '../../driver/errors.ts';
import { BATCH_MAX } from '../../driver/statement-batch.ts';
import type { DriverName } from '../../driver/types.ts';
import { nowUs } from '../../metrics/clock.ts';
import type { AdhocQuery, ClientContext, ClientHandler, SingleStatement, Statement } from '../types.ts';
import type { EvalEnv } from './evaluate.ts';
import type { PgPrng } from './prng.ts';
import {
  atoi,
  type Command,
  type MetaCommand,
  placeholderSql,
  type QueryMode,
  type Script,
  type SqlCommand,
} from './script.ts';
import { EvalFailure, type Int, int, normInt, truth } from './value.ts';
import type { Variables } from './variables.ts';

/** Counter and step names in the RunResult (`counters`, `steps`). */
export const K = {
  script: (s: number): string => `pgbench.script.${s}`,
  failed: (s: number, kind: FailureKind): string => `pgbench.failed.${s}.${kind}`,
  retried: (s: number): string => `pgbench.retried.${s}`,
  retries: (s: number): string => `pgbench.retries.${s}`,
  late: 'pgbench.late',
  cmdRetries: (type: string): string => `pgbench.command_retries.${type}`,
  cmdFailures: (type: string): string => `pgbench.command_failures.${type}`,
};

export type FailureKind = 'serialization' | 'deadlock';

/** pgbench retries serialization failures and deadlocks; dbsmack's other retryable errors count as these too. */
export function failureKind(e: DbError): FailureKind {
  return e.code === '40P01' || e.code === '1213' || e.sqlState === '40P01' ? 'deadlock' : 'serialization';
}

export interface RunnerConfig {
  scripts: Script[];
  mode: QueryMode;
  /** Per-client starting variables (-D and the automatic ones). */
  vars: Variables;
  rng: PgPrng;
  chooseRng: PgPrng;
  perCommand: boolean;
  connect: boolean;
  /** An abort stops the run instead of only this client. */
  exitOnAbort: boolean;
  /** -L in µs (0: none). */
  latencyLimitUs: number;
}

const execShell = (cmd: string): Promise<{ code: number; stdout: string }> =>
  new Promise((resolve) => {
    execFile('/bin/sh', ['-c', cmd], { maxBuffer: 1 << 20 }, (err, stdout, stderr) => {
      if (stderr) process.stderr.write(stderr);
      const code = err === null ? 0 : typeof err.code === 'number' ? err.code : 127;
      resolve({ code, stdout: String(stdout) });
    });
  });

/**
 * What pgbench prints of a lost connection: the FATAL message the server sent before closing it (a session
 * terminated or the server shutting down: 57P01, 57P02, 57P03), else libpq's words for a connection closed
 * without one; on another server, the driver's message.
 */
export function lostConnection(e: DbError, driver: DriverName): string {
  if (driver !== 'postgres') return e.message;
  if (e.sqlState !== undefined && e.sqlState !== '') return `FATAL:  ${e.message}`;
  return (
    'server closed the connection unexpectedly\n\tThis probably means the server terminated abnormally\n' +
    '\tbefore or while processing the request.'
  );
}

/** An error that aborts this client, with pgbench's wording. */
function abort(message: string, sqlState?: string): DbError {
  process.stderr.write(`dbsmack: ${message}\n`);
  return new DbError('fatal', 'PGBENCH_ABORT', message, sqlState);
}

export function scriptRunner(ctx: ClientContext, cfg: RunnerConfig): ClientHandler {
  const { scripts, mode, vars, rng } = cfg;
  const id = ctx.clientId;
  const totalWeight = scripts.reduce((a, s) => a + s.weight, 0);
  const statements = new Map<string, Statement>();
  const sqlText = new Map<SqlCommand, string>();
  if (mode === 'prepared') {
    for (const s of scripts)
      for (const c of s.commands)
        if (c.kind === 'sql' && c.store === undefined) {
          statements.set(
            c.type,
            ctx.statement(c.type, placeholderSql(c.template, ctx.driver), { prepare: true }),
          );
        }
  }
  for (const s of scripts)
    for (const c of s.commands) if (c.kind === 'sql') sqlText.set(c, placeholderSql(c.template, ctx.driver));
  const sequences = mode === 'extended' ? undefined : scripts.map((s) => sequencesOf(s, mode));

  let current = 0;
  const saved: number[] = rng.save();
  // one script's latency is the event's, which the engine records; several are timed apart
  const timed = scripts.length > 1 || cfg.latencyLimitUs > 0;
  const stepNames = scripts.map((_, i) => K.script(i));
  let tries = 1;
  let txStart = 0;
  /** The command that threw the retryable error of the last try. */
  let failedCommand: Command | undefined;
  let inTx = false;
  let commandNo = 0;
  /** pgbench counts a script that ends inside a transaction, then aborts the client. */
  let pendingAbort: DbError | undefined;
  /**
   * A batched transaction (ClientHandler.sequence) failed after its BEGIN: the transaction is open on the
   * connection, and the next event() rolls it back first, as event() does at once after such an error.
   */
  let rollbackFirst = false;

  const env: EvalEnv = {
    vars,
    rng,
    debug: (text) => process.stderr.write(`debug(script=${current},command=${commandNo + 1}): ${text}\n`),
  };

  const choose = (): number => {
    if (scripts.length === 1) return 0;
    let w = Number(cfg.chooseRng.rangeUpTo(totalWeight - 1));
    let i = 0;
    do {
      w -= (scripts[i++] as Script).weight;
    } while (w >= 0);
    return i - 1;
  };

  const params = (c: SqlCommand): unknown[] => {
    const out: unknown[] = [];
    for (const name of c.template.vars) {
      const raw = vars.raw(name);
      out.push(
        raw !== undefined && raw.t === 'int' && typeof raw.v === 'number' ? raw.v : (vars.text(name) ?? null),
      );
    }
    return out;
  };

  const substituted = (c: SqlCommand): string => {
    const { parts, vars: names } = c.template;
    let s = parts[0] as string;
    for (let i = 0; i < names.length; i++) {
      const name = names[i] as string;
      s += (vars.text(name) ?? `:${name}`) + parts[i + 1];
    }
    return s;
  };

  const store = (c: SqlCommand, rows: Record<string, unknown>[]): void => {
    const where = `client ${id} script ${current} command ${c.index} query 0`;
    if (c.store === 'gset' && rows.length !== 1)
      throw abort(`${where}: expected one row, got ${rows.length}`);
    const list = c.store === 'gset' ? rows.slice(-1) : rows;
    for (const row of list) {
      for (const [col, v] of Object.entries(row)) {
        const name = c.prefix + col;
        try {
          vars.setText(c.store as string, name, v === null || v === undefined ? '' : String(v));
        } catch {
          throw abort(`${where}: error storing into variable ${name}`);
        }
      }
    }
  };

  /** Send one SQL command; in a pipeline, return its promise instead of waiting for it. */
  const sql = (c: SqlCommand): Promise<unknown> => {
    if (c.compound && mode !== 'simple') {
      // what the server answers to several statements in one extended-protocol message
      return Promise.reject(
        new DbError('fatal', '42601', 'cannot insert multiple commands into a prepared statement', '42601'),
      );
    }
    if (c.store !== undefined) {
      const p =
        mode === 'simple'
          ? ctx.all(c.type, substituted(c))
          : ctx.all(c.type, sqlText.get(c) as string, params(c));
      return p.then((rows) => store(c, rows));
    }
    if (mode === 'simple') return ctx.query(c.type, substituted(c));
    if (mode === 'extended') return ctx.query(c.type, sqlText.get(c) as string, params(c));
    return ctx.run(statements.get(c.type) as Statement, params(c));
  };

  const sqlError = (c: SqlCommand, e: unknown): unknown => {
    // cancelled by the run's stop (Ctrl-C): the engine drops it; not an abort of this client to print
    if (!(e instanceof DbError) || ctx.cancelled) return e;
    if (e.kind === 'retryable') return e;
    if (e.code === 'PGBENCH_ABORT') return e;
    const where = `client ${id} script ${current} aborted in command ${c.index} query 0: `;
    // A lost connection aborts the client as pgbench's does (the engine would open it again and run the
    // transaction once more), with the server's FATAL message, or libpq's words when it sent none.
    if (e.kind === 'reconnect') return abort(`${where}${lostConnection(e, ctx.driver)}`, e.sqlState);
    return abort(`${where}ERROR:  ${e.message}`, e.sqlState);
  };

  const metaFailed = (c: MetaCommand, e: unknown): DbError => {
    if (e instanceof DbError) return e;
    const why = e instanceof EvalFailure ? e.message : String((e as Error)?.message ?? e);
    return abort(
      `client ${id} aborted in command ${c.index} (${c.name}) of script ${current}; ${why === '' ? 'evaluation of meta-command failed' : why}`,
    );
  };

  const shellCommand = (c: MetaCommand): string => {
    const words = c.shell as string[];
    const argv0 = words[0] as string;
    let cmd = '';
    for (const w of words) {
      let arg: string;
      if (!w.startsWith(':')) arg = w;
      else if (w.startsWith('::')) arg = w.slice(1);
      else {
        const v = vars.text(w.slice(1));
        if (v === undefined) throw new EvalFailure(`${argv0}: undefined variable "${w}"`);
        arg = v;
      }
      if (cmd.length + arg.length + (cmd === '' ? 0 : 1) >= 255)
        throw new EvalFailure(`${argv0}: shell command is too long`);
      cmd = cmd === '' ? arg : `${cmd} ${arg}`;
    }
    return cmd;
  };

  /** From a false condition: the next \elif that holds, or the \else, or the \endif; returns where to go on. */
  const onFalse = (cmds: Command[], target: number): number => {
    let t = target;
    for (;;) {
      const c = cmds[t] as MetaCommand;
      if (c.name !== 'elif') return t + 1;
      commandNo = c.index;
      if (truth((c.expr as NonNullable<MetaCommand['expr']>)(env))) return t + 1;
      t = c.onFalse as number;
    }
  };

  /**
   * A meta-command that needs no waiting (\set and the conditionals), run at once: where to go on, or -1 for
   * one that waits (`meta`). Not an async function: TPC-B's four \set a transaction would each cost an
   * async call and an await, a promise and a turn of the microtask queue.
   */
  const metaNow = (c: MetaCommand, cmds: Command[], pc: number): number => {
    switch (c.name) {
      case 'set':
        vars.set('set', c.variable as string, (c.expr as NonNullable<MetaCommand['expr']>)(env));
        return pc + 1;
      case 'if':
        return truth((c.expr as NonNullable<MetaCommand['expr']>)(env))
          ? pc + 1
          : onFalse(cmds, c.onFalse as number);
      case 'elif':
      case 'else':
        // reached from the end of a branch that ran: skip to the \endif
        return (c.toEnd as number) + 1;
      case 'endif':
        return pc + 1;
      default:
        return -1;
    }
  };

  /** The meta-commands that wait (\sleep, \shell, \setshell); the rest go through `metaNow`. */
  const meta = async (
    c: MetaCommand,
    pc: number,
    pipeline: Promise<unknown>[] | undefined,
  ): Promise<number> => {
    switch (c.name) {
      case 'sleep': {
        const { value, factor } = c.sleep as NonNullable<MetaCommand['sleep']>;
        let n: number;
        if (typeof value === 'number') n = value;
        else {
          const t = vars.text(value);
          if (t === undefined) throw new EvalFailure(`sleep: undefined variable "${value}"`);
          n = atoi(t);
          if (n === 0 && !/^[0-9]/.test(t))
            throw new EvalFailure(`sleep: invalid sleep time "${t}" for variable "${value}"`);
        }
        const us = n * factor;
        if (us > 0) await ctx.sleep(us / 1000);
        return pc + 1;
      }
      case 'shell': {
        const r = await execShell(shellCommand(c));
        if (r.stdout) process.stderr.write(r.stdout);
        if (r.code !== 0) throw new EvalFailure('shell: could not launch shell command');
        return pc + 1;
      }
      case 'setshell': {
        const r = await execShell(shellCommand(c));
        const first = (r.stdout.split('\n')[0] ?? '').slice(0, 63);
        const m = /^\s*([+-]?\d+)\s*$/.exec(first);
        if (r.stdout === '') throw new EvalFailure('setshell: could not read result of shell command');
        if (m === null)
          throw new EvalFailure(`setshell: shell command must return an integer (not "${first}")`);
        const v = BigInt.asIntN(32, BigInt(m[1] as string));
        vars.set('setshell', c.variable as string, int(normInt(v) as Int));
        return pc + 1;
      }
      default:
        void pipeline;
        return pc + 1;
    }
  };

  /** A transaction boundary the script has passed. */
  const passed = (c: SqlCommand): void => {
    if (c.tx === 'begin') inTx = true;
    else if (c.tx === 'end') inTx = false;
  };

  /**
   * SQL commands `from` to `to` (excluded), one after the other, as one `runSequence` (`-M prepared`) or
   * `querySequence` (`-M simple`): on the native core one wake-up of this client for all of them. As when
   * each is sent alone, a failure ends it at the failed one.
   */
  const sequence = async (cmds: Command[], from: number, to: number): Promise<void> => {
    try {
      if (mode === 'simple') {
        const queries: AdhocQuery[] = [];
        for (let i = from; i < to; i++) {
          const c = cmds[i] as SqlCommand;
          queries.push({ type: c.type, sql: substituted(c) });
        }
        await ctx.querySequence(queries);
      } else {
        const items: SingleStatement[] = [];
        for (let i = from; i < to; i++) {
          const c = cmds[i] as SqlCommand;
          items.push({ statement: statements.get(c.type) as Statement, params: params(c) });
        }
        await ctx.runSequence(items);
      }
    } catch (e) {
      const at = from + ctx.sequenceIndex;
      for (let i = from; i < at; i++) passed(cmds[i] as SqlCommand);
      const c = cmds[at] as SqlCommand;
      commandNo = c.index;
      failedCommand = c;
      throw sqlError(c, e);
    }
    for (let i = from; i < to; i++) passed(cmds[i] as SqlCommand);
  };

  const runScript = async (s: Script): Promise<void> => {
    const cmds = s.commands;
    const n = cmds.length;
    const ends = sequences?.[current];
    let pipeline: Promise<unknown>[] | undefined;
    let pc = 0;
    while (pc < n) {
      const c = cmds[pc] as Command;
      commandNo = c.index;
      if (c.kind === 'sql') {
        const end = ends === undefined || pipeline !== undefined ? 0 : (ends[pc] as number);
        if (end > pc + 1) {
          await sequence(cmds, pc, end);
          pc = end;
          continue;
        }
        if (pipeline !== undefined) {
          if (c.store !== undefined) {
            throw abort(
              `client ${id} aborted in command ${c.index} (${c.store}) of script ${current}; \\${c.store} is not allowed in pipeline mode`,
            );
          }
          const p = sql(c).catch((e: unknown) => {
            throw sqlError(c, e);
          });
          p.catch(() => {});
          pipeline.push(p);
        } else {
          try {
            await sql(c);
          } catch (e) {
            failedCommand = c;
            throw sqlError(c, e);
          }
        }
        passed(c);
        pc++;
        continue;
      }
      const t0 = cfg.perCommand ? nowUs() : 0;
      try {
        if (c.name === 'startpipeline') {
          if (mode === 'simple')
            throw new EvalFailure('cannot use pipeline mode with the simple query protocol');
          if (pipeline !== undefined) throw new EvalFailure('already in pipeline mode');
          pipeline = [];
          pc++;
        } else if (c.name === 'syncpipeline') {
          if (pipeline === undefined) throw new EvalFailure('not in pipeline mode');
          pc++;
        } else if (c.name === 'endpipeline') {
          if (pipeline === undefined) throw new EvalFailure('not in pipeline mode');
          const results = await Promise.allSettled(pipeline);
          pipeline = undefined;
          const bad = results.find((r) => r.status === 'rejected') as PromiseRejectedResult | undefined;
          if (bad !== undefined) {
            failedCommand = c;
            throw bad.reason;
          }
          pc++;
        } else {
          const next = metaNow(c, cmds, pc);
          pc = next >= 0 ? next : await meta(c, pc, pipeline);
        }
      } catch (e) {
        if (e instanceof DbError && (e.kind !== 'fatal' || e.code === 'PGBENCH_ABORT')) throw e;
        throw metaFailed(c, e);
      }
      if (cfg.perCommand) ctx.step(c.type, nowUs() - t0);
    }
    if (pipeline !== undefined) throw abort(`client ${id} aborted: end of script reached with pipeline open`);
  };

  /**
   * A transaction ended, done or failed: its retries are counted now, as pgbench counts them at the end
   * of a transaction (one that the deadline cut short is dropped with its retries; -r's per-command
   * retries count as they happen, as pgbench's do).
   */
  const settled = (): void => {
    if (tries === 1) return;
    ctx.count(K.retried(current));
    ctx.count(K.retries(current), tries - 1);
  };
  /** Roll back the transaction an error left open; a failure aborts the client, as pgbench's. */
  const rollBack = async (): Promise<void> => {
    try {
      await ctx.rollback();
    } catch (r) {
      throw abort(
        `client ${id} aborted while rolling back the transaction after an error; ${(r as Error).message}`,
      );
    }
  };
  const handler: ClientHandler = {
    abortOnError: !cfg.exitOnAbort,
    connectPerEvent: cfg.connect,
    async event() {
      if (pendingAbort !== undefined) throw pendingAbort;
      if (rollbackFirst) {
        rollbackFirst = false;
        await rollBack();
      }
      if (ctx.attempt > 1) {
        // a retry: the same script with the same random numbers
        rng.restore(saved);
        tries++;
        if (failedCommand !== undefined && cfg.perCommand) ctx.count(K.cmdRetries(failedCommand.type));
      } else {
        current = choose();
        rng.saveTo(saved);
        tries = 1;
        // as pgbench's, a transaction's time runs from its schedule under -R (the lag counts)
        if (timed) txStart = ctx.scheduledUs > 0 ? ctx.scheduledUs : nowUs();
      }
      failedCommand = undefined;
      try {
        await runScript(scripts[current] as Script);
      } catch (e) {
        if (e instanceof DbError && e.kind === 'retryable' && inTx) {
          inTx = false;
          await rollBack();
        }
        throw e;
      }
      settled();
      if (timed) {
        const us = nowUs() - txStart;
        if (scripts.length > 1) ctx.step(stepNames[current] as string, us);
        if (cfg.latencyLimitUs > 0 && us > cfg.latencyLimitUs) ctx.count(K.late);
      }
      if (inTx) {
        pendingAbort = abort(
          `client ${id} aborted: end of script reached without completing the last transaction`,
        );
      }
    },
    // -L also bounds the retries: a transaction that has taken longer than the limit is not tried again
    ...(cfg.latencyLimitUs > 0
      ? {
          onError: (err: DbError) =>
            err.kind === 'retryable' && nowUs() - txStart > cfg.latencyLimitUs
              ? ('skip' as const)
              : undefined,
        }
      : {}),
    failed(err) {
      settled();
      ctx.count(K.failed(current, failureKind(err)));
      if (failedCommand !== undefined && cfg.perCommand) ctx.count(K.cmdFailures(failedCommand.type));
    },
  };
  const one = batchable(cfg);
  if (one === undefined) return handler;

  // Batches (ClientHandler.single, or .sequence for a transaction of several statements): a transaction is
  // its \set commands then its statements. The random state before each draw is kept in a ring, so that a
  // failed batch can undo the draws after the failed event and a retry can replay that event's random
  // numbers (singleFailed). The ring is one flat array (four numbers a state): as arrays of their own, its
  // 258 states were ~37 KB of heap per client.
  const { sets, sqls } = one;
  // -M simple: each command sent as text with the values put in (SingleStatement.sql), recorded under the
  // type of a statement declared for it (never prepared)
  const simple = mode === 'simple';
  const stmts = sqls.map(
    (c) =>
      statements.get(c.type) ??
      ctx.statement(c.type, placeholderSql(c.template, ctx.driver), { prepare: false }),
  );
  const RING = BATCH_MAX + 2;
  const ring = new Float64Array(4 * RING);
  let draws = 0;
  /** The \set commands of one transaction, its random state kept first; throws as the draw's contract says. */
  const drawSets = (): void => {
    const before = 4 * (draws % RING);
    rng.saveInto(ring, before);
    tries = 1;
    failedCommand = undefined;
    try {
      for (const c of sets) {
        commandNo = c.index;
        vars.set('set', c.variable as string, (c.expr as NonNullable<MetaCommand['expr']>)(env));
      }
    } catch (e) {
      // as it was: event() evaluates it again and fails it with pgbench's message
      rng.restoreFrom(ring, before);
      throw e;
    }
    draws++;
  };
  handler.singleFailed = (error, unrun, at) => {
    draws -= unrun;
    // after the failed event's draw (the next events draw the same again), and its start kept for a retry
    if (unrun > 0) rng.restoreFrom(ring, 4 * (draws % RING));
    const start = 4 * ((draws - 1) % RING);
    for (let i = 0; i < 4; i++) saved[i] = ring[start + i] as number;
    const c = sqls[at] as SqlCommand;
    failedCommand = c;
    commandNo = c.index;
    // the statements before it ran: a transaction they opened is open until the next event() closes it
    let open = false;
    for (let i = 0; i < at; i++) {
      const tx = (sqls[i] as SqlCommand).tx;
      if (tx === 'begin') open = true;
      else if (tx === 'end') open = false;
    }
    if (open) rollbackFirst = true;
    return sqlError(c, error);
  };
  if (sqls.length === 1) {
    const only = sqls[0] as SqlCommand;
    const stmt = stmts[0] as Statement;
    handler.single = simple
      ? () => {
          drawSets();
          return { statement: stmt, sql: substituted(only) };
        }
      : () => {
          drawSets();
          return { statement: stmt, params: params(only) };
        };
  } else {
    handler.sequenceLength = sqls.length;
    handler.sequence = () => {
      // a transaction left open by a failed one is rolled back by event() first
      if (rollbackFirst) throw new Error('a transaction is open');
      drawSets();
      const items: SingleStatement[] = [];
      for (let i = 0; i < sqls.length; i++) {
        const c = sqls[i] as SqlCommand;
        items.push(
          simple
            ? { statement: stmts[i] as Statement, sql: substituted(c) }
            : { statement: stmts[i] as Statement, params: params(c) },
        );
      }
      return items;
    };
  }
  return handler;
}

/**
 * For each command of a script, where the run of SQL commands that starts there ends (the index after its
 * last; 0 where none starts): SQL commands one after the other that store nothing (\gset, \aset), so that
 * none depends on another's result, and under `-M prepared` are not compound (each one prepared statement;
 * a compound one fails there). The runner sends such a run as one sequence (ClientContext.runSequence, or
 * querySequence under `-M simple`), as pgbench sends its commands: each after the one before it is answered.
 */
export function sequencesOf(script: Script, mode: QueryMode): Int32Array {
  const cmds = script.commands;
  const ends = new Int32Array(cmds.length);
  const plain = (c: Command | undefined): boolean =>
    c !== undefined && c.kind === 'sql' && c.store === undefined && (mode === 'simple' || !c.compound);
  for (let i = cmds.length - 1; i >= 0; i--)
    if (plain(cmds[i])) ends[i] = plain(cmds[i + 1]) ? (ends[i + 1] as number) : i + 1;
  return ends;
}

/**
 * The script's \set commands and its statements, when its transactions can run as statement batches: one
 * script, prepared statements or text queries (-M prepared or simple; not extended), nothing timed apart
 * (-r, -L, several scripts) and no connection per transaction; the script is only \set commands and then
 * SQL commands (no \gset or \aset, none compound under -M prepared, where the server refuses them),
 * one without transaction control or several that close every transaction they open (TPC-B's BEGIN … END:
 * a batch never ends inside one); and no \set reads a variable the script sets, or prints (debug()), so
 * that evaluating the \set commands again from the same random state gives the same values.
 */
export function batchable(cfg: RunnerConfig): { sets: MetaCommand[]; sqls: SqlCommand[] } | undefined {
  if (cfg.mode === 'extended' || cfg.scripts.length !== 1) return undefined;
  if (cfg.perCommand || cfg.connect || cfg.latencyLimitUs > 0) return undefined;
  const cmds = (cfg.scripts[0] as Script).commands;
  const sets: MetaCommand[] = [];
  let i = 0;
  for (; i < cmds.length; i++) {
    const c = cmds[i] as Command;
    if (c.kind !== 'meta') break;
    if (c.name !== 'set' || c.uses === undefined || c.uses.prints) return undefined;
    sets.push(c);
  }
  const sqls: SqlCommand[] = [];
  let open = false;
  for (; i < cmds.length; i++) {
    const c = cmds[i] as Command;
    if (c.kind !== 'sql' || c.store !== undefined || (c.compound && cfg.mode === 'prepared'))
      return undefined;
    if (c.tx === 'begin') open = true;
    else if (c.tx === 'end') open = false;
    sqls.push(c);
  }
  if (sqls.length === 0 || open || (sqls.length === 1 && (sqls[0] as SqlCommand).tx !== undefined))
    return undefined;
  const written = new Set(sets.map((c) => c.variable as string));
  for (const c of sets) for (const v of c.uses?.reads ?? []) if (written.has(v)) return undefined;
  return { sets, sqls };
}
