/**
 * The per-client side of sysbench's OLTP scripts (`oltp_common.lua`): the prepared statements of every
 * table, and one function per statement group. As in sysbench, one table is drawn per group (all the point
 * selects of a transaction go to one table), ids follow `--rand-type`, and a DELETE and its INSERT share an id.
 */
import {
  C_TEMPLATE,
  type ClientContext,
  type Distribution,
  distributionFromOptions,
  PAD_TEMPLATE,
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

/** Statement types as recorded (sysbench's statement keys). */
export const STATEMENT_TYPES: readonly Key[] = Object.keys(SQL) as Key[];

export class OltpClient {
  readonly o: OltpOptions;
  readonly getId: Distribution;
  private readonly ctx: ClientContext;
  private readonly stmts: Partial<Record<Key, Statement>>[] = [];

  /** Declare the statements of `keys` for every table (prepared on first use, as sysbench prepares them all). */
  constructor(ctx: ClientContext, keys: readonly Key[]) {
    this.ctx = ctx;
    this.o = asOltp(ctx.options);
    this.getId = distributionFromOptions(ctx.random, ctx.options);
    const prepare = this.o.db_ps_mode !== 'disable';
    for (let t = 1; t <= this.o.tables; t++) {
      const s: Partial<Record<Key, Statement>> = {};
      for (const k of keys) s[k] = ctx.statement(k, SQL[k].replace('%u', String(t)), { prepare });
      this.stmts[t] = s;
    }
  }

  tableNum(): number {
    return 1 + Math.floor(this.ctx.random.next() * this.o.tables);
  }

  private stmt(t: number, k: Key): Statement {
    return this.stmts[t]?.[k] as Statement;
  }

  async begin(): Promise<void> {
    if (!this.o.skip_trx) await this.ctx.begin();
  }

  async commit(): Promise<void> {
    if (!this.o.skip_trx) await this.ctx.commit();
  }

  async pointSelects(count = this.o.point_selects): Promise<void> {
    const t = this.tableNum();
    const s = this.stmt(t, 'point_selects');
    for (let i = 0; i < count; i++) await this.ctx.run(s, [this.getId(1, this.o.table_size)]);
  }

  private async ranges(key: Key, count: number): Promise<void> {
    const t = this.tableNum();
    const s = this.stmt(t, key);
    for (let i = 0; i < count; i++) {
      const id = this.getId(1, this.o.table_size);
      await this.ctx.run(s, [id, id + this.o.range_size - 1]);
    }
  }

  async rangeSelects(): Promise<void> {
    if (!this.o.range_selects) return;
    await this.ranges('simple_ranges', this.o.simple_ranges);
    await this.ranges('sum_ranges', this.o.sum_ranges);
    await this.ranges('order_ranges', this.o.order_ranges);
    await this.ranges('distinct_ranges', this.o.distinct_ranges);
  }

  async indexUpdates(): Promise<void> {
    const t = this.tableNum();
    const s = this.stmt(t, 'index_updates');
    for (let i = 0; i < this.o.index_updates; i++) await this.ctx.run(s, [this.getId(1, this.o.table_size)]);
  }

  async nonIndexUpdates(): Promise<void> {
    const t = this.tableNum();
    const s = this.stmt(t, 'non_index_updates');
    for (let i = 0; i < this.o.non_index_updates; i++) {
      const c = randomString(this.ctx.random, C_TEMPLATE);
      await this.ctx.run(s, [c, this.getId(1, this.o.table_size)]);
    }
  }

  async deleteInserts(): Promise<void> {
    const t = this.tableNum();
    const del = this.stmt(t, 'deletes');
    const ins = this.stmt(t, 'inserts');
    for (let i = 0; i < this.o.delete_inserts; i++) {
      const id = this.getId(1, this.o.table_size);
      const k = this.getId(1, this.o.table_size);
      const c = randomString(this.ctx.random, C_TEMPLATE);
      const pad = randomString(this.ctx.random, PAD_TEMPLATE);
      await this.ctx.run(del, [id]);
      await this.ctx.run(ins, [id, k, c, pad]);
    }
  }

  /**
   * The statement and parameters of an event of one statement, drawn as the functions above draw them
   * (the table first, then the values): for `ClientHandler.single`, which lets the engine batch them.
   */
  point(key: 'point_selects' | 'index_updates' | 'deletes'): SingleStatement {
    const t = this.tableNum();
    return { statement: this.stmt(t, key), params: [this.getId(1, this.o.table_size)] };
  }

  nonIndexUpdate(): SingleStatement {
    const t = this.tableNum();
    const c = randomString(this.ctx.random, C_TEMPLATE);
    return { statement: this.stmt(t, 'non_index_updates'), params: [c, this.getId(1, this.o.table_size)] };
  }

  async deleteOne(): Promise<void> {
    const t = this.tableNum();
    await this.ctx.run(this.stmt(t, 'deletes'), [this.getId(1, this.o.table_size)]);
  }
}
