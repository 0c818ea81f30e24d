/**
 * A batch of statements for the native I/O core (`Connection.runBatch`): the encoded statements one after
 * another in one buffer, where each starts, and the array the core writes each statement's result into as
 * it completes. The engine fills it for events of one statement (`ClientHandler.single`) or of a fixed run
 * of them (`ClientHandler.sequence`), the
 * connection submits it as one call, and the engine records the results in a tight loop; the statements
 * still run one at a time on the connection, each timed by the core where its bytes are sent and received.
 */
import type { DbError } from './errors.ts';

/**
 * The most statements in one batch (the engine's adaptive size stays below it): 256, or what
 * `DBSMACK_BATCH_MAX` asks for (`batchMaxAsked`), to measure another. Longer batches mean fewer hand-overs
 * where a batch runs on its connection's own thread (D), and more memory touched a batch: on a 2-core Xeon
 * guest (2026-12-07, docs/performance.md) 2048 made one load thread with every batch on its connection's
 * thread (`DBSMACK_NATIVE_DESIGN=2 --workers 1`) 0.97-1.26 times as fast on PostgreSQL's point select at 8
 * clients (five pairs, median 1.11), but MariaDB's 0.87-0.96 times in both layouts it was tried in; the 50 ms
 * budget still ends a batch. An event of more statements than this (a transaction) is never batched with
 * others; as a sequence its first this many statements go as one batch and the rest one at a time. Each
 * client's batch holds room for this many statements from the start (`StatementBatch`: 256 bytes, and 36 of
 * results and offsets, each: 0.6 MB a client at 2048).
 */
export const BATCH_MAX = batchMaxAsked() ?? 256;

/**
 * The batch size `DBSMACK_BATCH_MAX` asks for: a whole number from 16 to 4096, else undefined (ignored; the
 * run says so once: connectors.ts `loadEnvironmentNotes`).
 */
export function batchMaxAsked(v: string | undefined = process.env.DBSMACK_BATCH_MAX): number | undefined {
  if (v === undefined || !/^\d+$/.test(v)) return undefined;
  const n = Number(v);
  return n >= 16 && n <= 4096 ? n : undefined;
}

/** Result status of one statement (as the core's completions). */
export const BATCH_OK = 0;

export class StatementBatch {
  /**
   * The encoded statements, `bytes[offsets[i], offsets[i + 1])` for statement i. Room for BATCH_MAX
   * statements of 256 bytes from the start: growing is rare, and its first time in a compiled loop would
   * make V8 compile the engine's statement loop again (a large function).
   */
  bytes: Buffer = Buffer.allocUnsafe(BATCH_MAX * 256);
  readonly offsets = new Uint32Array(BATCH_MAX + 1);
  /** Statements in the batch. */
  count = 0;
  /**
   * Written by the core: `[0]` the statements with a result so far, then per statement [status, value
   * (rows or affected rows), latencyUs (sent to received), endUs (from the submit)].
   */
  readonly results = new Float64Array(1 + 4 * BATCH_MAX);
  /** No event is started once this many µs have passed since the submit. */
  budgetUs = 0;
  /**
   * Statements per event (`count` is always whole events): the budget is looked at only where an event
   * starts, so the statements of an event that started all run (a transaction is not cut in its middle).
   */
  group = 1;
  /** The error the batch ended with: that of its last statement with a result (undefined: none). */
  error: DbError | undefined;

  /** Empty it for the next batch. */
  reset(): void {
    this.count = 0;
    this.error = undefined;
    this.results[0] = 0;
  }

  /** Append one encoded statement (copied: it may be a view of an encoder's shared buffer). */
  add(packet: Uint8Array): void {
    if (this.count >= BATCH_MAX) throw new Error(`a batch holds at most ${BATCH_MAX} statements`);
    const at = this.offsets[this.count] as number;
    const end = at + packet.length;
    if (end > this.bytes.length) {
      const grown = Buffer.allocUnsafe(Math.max(end, 2 * this.bytes.length));
      this.bytes.copy(grown, 0, 0, at);
      this.bytes = grown;
    }
    this.bytes.set(packet, at);
    this.count++;
    this.offsets[this.count] = end;
  }

  /** Keep only the first `n` statements (fewer than `count`). */
  cut(n: number): void {
    this.count = n;
  }

  /**
   * Statements with a result (the core's count; during the batch, those completed so far). As an int32:
   * a count read from the Float64Array may come out of optimised code as a heap number, and the first one
   * stored in a field that held small integers (Client.pendingN, after a batch cut short) changes the
   * object's shape, which threw away the load thread's compiled fillBatch and recordBatched whenever that
   * came after they were compiled (node --trace-generalization, --trace-deopt; docs/performance.md,
   * 2026-12-07).
   */
  get done(): number {
    return (this.results[0] as number) | 0;
  }

  status(i: number): number {
    return this.results[1 + 4 * i] as number;
  }

  value(i: number): number {
    return this.results[2 + 4 * i] as number;
  }

  latencyUs(i: number): number {
    return this.results[3 + 4 * i] as number;
  }

  /** When statement i's response was complete, in µs after the submit. */
  endUs(i: number): number {
    return this.results[4 + 4 * i] as number;
  }

  /** The batch could not be sent (the connection was gone before): its first statement fails with `error`. */
  failFirst(status: number, error: DbError): void {
    this.results[0] = 1;
    this.results[1] = status;
    this.results[2] = 0;
    this.results[3] = 0;
    this.results[4] = 0;
    this.error = error;
  }
}
