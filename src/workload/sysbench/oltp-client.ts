/**
 * The per-client side of sysbench's OLTP scripts (`oltp_common.lua`): the prepared statements of every
 * table, and one function per statement group. As in sysbench, one table is drawn per group (all the point
 * selects of a transaction go to one table), ids follow `--rand-type`, and a DELETE and its INSERT share an id.
 */
import {
  C_TEMPLATE,
  type ClientContext,
  type ClientHandler,
  type Distribution,
  distributionFromOptions,
  PAD_TEMPLATE,
  type ParamType,
  randomString,
  type SingleStatement,
  type Statement,
} from '../../index.ts';
import { asOltp, type OltpOptions } from './options.ts';

const SQL = {
  point_selects: 'SELECT c FROM sbtest%u WHERE id=?',
  simple_ranges: 'SELECT c FROM sbtest%u WHERE id BETWEEN ? AND ?',
  sum_ranges: 'SELECT SUM(k) FROM sbtest%u WHERE id BETWEEN ? AND ?',
  order_ranges: 'SELECT c FROM sbtest%u WHERE id BETWEEN ? AND ? ORDER BY c',
  distinct_ranges: 'SELECT DISTINCT c FROM sbtest%u WHERE id BETWEEN ? AND ? ORDER BY c',
  index_updates: 'UPDATE sbtest%u SET k=k+1 WHERE id=?',
  non_index_updates: 'UPDATE sbtest%u SET c=? WHERE id=?',
  deletes: 'DELETE FROM sbtest%u WHERE id=?',
  inserts: 'INSERT INTO sbtest%u (id, k, c, pad) VALUES (?, ?, ?, ?)',
} as const;

type Key = keyof typeof SQL;

/**
 * The parameters' types, declared in the Parse message as sysbench's PostgreSQL driver declares them
 * (integers int8, strings varchar): the same message, parsed and planned by the server as sysbench's are,
 * as dbsmack also describes each portal as libpq does (pg-wire-encode.ts DESCRIBE_EXEC_SYNC).
 */
const TYPES: Record<Key, readonly ParamType[]> = {
  point_selects: ['int8'],
  simple_ranges: ['int8', 'int8'],
  sum_ranges: ['int8', 'int8'],
  order_ranges: ['int8', 'int8'],
  distinct_ranges: ['int8', 'int8'],
  index_updates: ['int8'],
  non_index_updates: ['varchar', 'int8'],
  deletes: ['int8'],
  inserts: ['int8', 'int8', 'varchar', 'varchar'],
};

/** Which statement groups a transaction's body has: oltp_read_only the reads, oltp_write_only the writes. */
export interface TxGroups {
  readonly reads: boolean;
  readonly writes: boolean;
}

/** Statement types as recorded (sysbench's statement keys). */
export const STATEMENT_TYPES: readonly Key[] = Object.keys(SQL) as Key[];

/**
 * A statement's SQL with the values put in, as sysbench's client-side emulation of prepared statements
 * sends it under `--db-ps-mode=disable` (`db_print_value`: numbers as they are, strings in single quotes;
 * sysbench's strings are digits, letters and dashes, never a quote): `parts` is the SQL split at its `?`.
 */
export function withValues(parts: readonly string[], params: readonly (number | string)[]): string {
  let sql = parts[0] as string;
  for (let i = 0; i < params.length; i++) {
    const v = params[i] as number | string;
    sql += (typeof v === 'string' ? `'${v}'` : String(v)) + (parts[i + 1] as string);
  }
  return sql;
}

export class OltpClient {
  readonly o: OltpOptions;
  readonly getId: Distribution;
  private readonly ctx: ClientContext;
  private readonly stmts: Partial<Record<Key, Statement>>[] = [];
  /**
   * `--db-ps-mode=disable`: every statement goes as a text query with its values in the SQL (each draw
   * carries `sql`), as sysbench sends them then: PostgreSQL gets a simple Query, not the extended
   * protocol's unnamed statement, and the engine batches them as text queries.
   */
  private readonly text: boolean;
  /** With `text`: each table's statements' SQL split at the `?`. */
  private readonly parts: Partial<Record<Key, readonly string[]>>[] = [];

  /** Declare the statements of `keys` for every table (prepared on first use, as sysbench prepares them all). */
  constructor(ctx: ClientContext, keys: readonly Key[]) {
    this.ctx = ctx;
    this.o = asOltp(ctx.options);
    this.getId = distributionFromOptions(ctx.random, ctx.options);
    this.text = this.o.db_ps_mode === 'disable';
    const prepare = !this.text;
    for (let t = 1; t <= this.o.tables; t++) {
      const s: Partial<Record<Key, Statement>> = {};
      const p: Partial<Record<Key, readonly string[]>> = {};
      for (const k of keys) {
        const sql = SQL[k].replace('%u', String(t));
        s[k] = ctx.statement(k, sql, { prepare, paramTypes: TYPES[k] });
        p[k] = sql.split('?');
      }
      this.stmts[t] = s;
      this.parts[t] = p;
    }
  }

  /** A drawn statement of table `t`: its parameters, and with `text` its SQL with them put in. */
  private drawn(t: number, k: Key, params: (number | string)[]): SingleStatement {
    const statement = this.stmt(t, k);
    if (!this.text) return { statement, params };
    return { statement, params, sql: withValues(this.parts[t]?.[k] as readonly string[], params) };
  }

  /** Run one drawn statement: executed, or sent as its text. */
  private exec(e: SingleStatement): Promise<number> {
    return e.sql === undefined
      ? this.ctx.run(e.statement, e.params)
      : this.ctx.query(e.statement.type, e.sql);
  }

  tableNum(): number {
    return 1 + Math.floor(this.ctx.random.next() * this.o.tables);
  }

  private stmt(t: number, k: Key): Statement {
    return this.stmts[t]?.[k] as Statement;
  }

  /**
   * A transaction as one `ClientHandler.sequence` (BEGIN, the body `drawBody` draws, COMMIT), so that the
   * engine batches whole transactions on the native I/O core: the handler's sequence fields, or undefined
   * where the body is empty. BEGIN and COMMIT are prepared statements here (sysbench prepares them too;
   * text queries under `--db-ps-mode=disable`, as all the others then), recorded as `begin` and `commit` as
   * `ctx.begin()` and `ctx.commit()` record theirs; `--skip-trx` leaves them out.
   */
  transaction(
    groups: TxGroups,
  ): Pick<ClientHandler, 'sequence' | 'sequenceLength' | 'sequenceTransaction'> | undefined {
    const length = this.bodyLength(groups);
    if (length <= 0) return undefined;
    if (this.o.skip_trx) {
      return {
        sequenceLength: length,
        sequence: () => {
          const out: SingleStatement[] = [];
          this.drawBody(out, groups);
          return out;
        },
      };
    }
    const prepare = !this.text;
    const edge = (type: string, sql: string): SingleStatement => {
      const statement = this.ctx.statement(type, sql, { kind: 'other', prepare });
      return prepare ? { statement } : { statement, sql };
    };
    const begin = edge('begin', 'BEGIN');
    const commit = edge('commit', 'COMMIT');
    return {
      sequenceLength: length + 2,
      sequenceTransaction: true,
      sequence: () => {
        const out: SingleStatement[] = [begin];
        this.drawBody(out, groups);
        out.push(commit);
        return out;
      },
    };
  }

  /** A transaction's body in sysbench's order: the reads, then the writes, of the groups asked for. */
  drawBody(out: SingleStatement[], groups: TxGroups): void {
    if (groups.reads) {
      this.drawPointSelects(out);
      this.drawRangeSelects(out);
    }
    if (groups.writes) {
      this.drawIndexUpdates(out);
      this.drawNonIndexUpdates(out);
      this.drawDeleteInserts(out);
    }
  }

  /** Statements `drawBody` draws with these options. */
  bodyLength(groups: TxGroups): number {
    const o = this.o;
    // a negative count draws nothing, as sysbench's loops run none
    const c = (x: number): number => Math.max(0, x);
    let n = 0;
    if (groups.reads) {
      n += c(o.point_selects);
      if (o.range_selects)
        n += c(o.simple_ranges) + c(o.sum_ranges) + c(o.order_ranges) + c(o.distinct_ranges);
    }
    if (groups.writes) n += c(o.index_updates) + c(o.non_index_updates) + 2 * c(o.delete_inserts);
    return n;
  }

  async begin(): Promise<void> {
    if (!this.o.skip_trx) await this.ctx.begin();
  }

  async commit(): Promise<void> {
    if (!this.o.skip_trx) await this.ctx.commit();
  }

  /**
   * The groups of a transaction's body drawn into `out`, in sysbench's order (each group draws its table,
   * then its values), for one `runSequence`: its statements do not depend on each other's results, so
   * the native I/O core runs them as one request (one wake-up of the client instead of one a statement).
   */
  drawPointSelects(out: SingleStatement[], count = this.o.point_selects): void {
    const t = this.tableNum();
    for (let i = 0; i < count; i++)
      out.push(this.drawn(t, 'point_selects', [this.getId(1, this.o.table_size)]));
  }

  private drawRanges(out: SingleStatement[], key: Key, count: number): void {
    const t = this.tableNum();
    for (let i = 0; i < count; i++) {
      const id = this.getId(1, this.o.table_size);
      out.push(this.drawn(t, key, [id, id + this.o.range_size - 1]));
    }
  }

  drawRangeSelects(out: SingleStatement[]): void {
    if (!this.o.range_selects) return;
    this.drawRanges(out, 'simple_ranges', this.o.simple_ranges);
    this.drawRanges(out, 'sum_ranges', this.o.sum_ranges);
    this.drawRanges(out, 'order_ranges', this.o.order_ranges);
    this.drawRanges(out, 'distinct_ranges', this.o.distinct_ranges);
  }

  drawIndexUpdates(out: SingleStatement[]): void {
    const t = this.tableNum();
    for (let i = 0; i < this.o.index_updates; i++)
      out.push(this.drawn(t, 'index_updates', [this.getId(1, this.o.table_size)]));
  }

  drawNonIndexUpdates(out: SingleStatement[]): void {
    const t = this.tableNum();
    for (let i = 0; i < this.o.non_index_updates; i++) {
      const c = randomString(this.ctx.random, C_TEMPLATE);
      out.push(this.drawn(t, 'non_index_updates', [c, this.getId(1, this.o.table_size)]));
    }
  }

  drawDeleteInserts(out: SingleStatement[]): void {
    const t = this.tableNum();
    for (let i = 0; i < this.o.delete_inserts; i++) {
      const id = this.getId(1, this.o.table_size);
      const k = this.getId(1, this.o.table_size);
      const c = randomString(this.ctx.random, C_TEMPLATE);
      const pad = randomString(this.ctx.random, PAD_TEMPLATE);
      out.push(this.drawn(t, 'deletes', [id]), this.drawn(t, 'inserts', [id, k, c, pad]));
    }
  }

  /** The groups drawn by `draw`, run in order as one sequence (of text queries under `text`). */
  run(draw: (out: SingleStatement[]) => void): Promise<void> {
    const out: SingleStatement[] = [];
    draw(out);
    return this.ctx.runSequence(out);
  }

  pointSelects(count = this.o.point_selects): Promise<void> {
    return this.run((out) => this.drawPointSelects(out, count));
  }

  indexUpdates(): Promise<void> {
    return this.run((out) => this.drawIndexUpdates(out));
  }

  nonIndexUpdates(): Promise<void> {
    return this.run((out) => this.drawNonIndexUpdates(out));
  }

  /**
   * The statement and parameters of an event of one statement, drawn as the functions above draw them
   * (the table first, then the values): for `ClientHandler.single`, which lets the engine batch them.
   */
  point(key: 'point_selects' | 'index_updates' | 'deletes'): SingleStatement {
    const t = this.tableNum();
    return this.drawn(t, key, [this.getId(1, this.o.table_size)]);
  }

  nonIndexUpdate(): SingleStatement {
    const t = this.tableNum();
    const c = randomString(this.ctx.random, C_TEMPLATE);
    return this.drawn(t, 'non_index_updates', [c, this.getId(1, this.o.table_size)]);
  }

  async deleteOne(): Promise<void> {
    const t = this.tableNum();
    await this.exec(this.drawn(t, 'deletes', [this.getId(1, this.o.table_size)]));
  }
}
