/** BEGIN, COMMIT and ROLLBACK sent as plain statements through `query`, for the clients that do just that. */
export abstract class StatementTransactions {
  abstract query(sql: string, params?: readonly unknown[]): Promise<number>;

  async begin(): Promise<void> {
    await this.query('BEGIN');
  }
  async commit(): Promise<void> {
    await this.query('COMMIT');
  }
  async rollback(): Promise<void> {
    await this.query('ROLLBACK');
  }
}
