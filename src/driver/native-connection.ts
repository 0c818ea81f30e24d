/**
 * What the two native connections (`native-mysql.ts`, `native-pg.ts`) share: the request in flight and
 * the FIFO of those behind it, and the completions the pump (`native-core.ts`) hands back. One request is
 * on the wire at a time; each completion carries the statement's own time, measured by the core where the
 * bytes were sent and received, which the connection keeps in `timedUs` for the engine to record.
 */
import os from 'node:os';
import type { DbError } from './errors.ts';
import {
  type CompletionSink,
  closeNative,
  K_NO_REPLY,
  openNative,
  ST_BATCH,
  ST_ERR,
  ST_LOST,
  ST_OK,
  submitBatchNative,
  submitNative,
  takeNative,
} from './native-core.ts';
import type { StatementBatch } from './statement-batch.ts';

type Settle = (v: unknown) => void;

/** What a completion resolves to. */
export const W_COUNT = 0;
/** The raw response bytes, decoded by the connection (`all()`, prepare). */
export const W_RAW = 1;
export const W_VOID = 2;

class Pending {
  readonly bytes: Uint8Array;
  readonly kind: number;
  readonly flags: number;
  readonly what: number;
  readonly resolve: Settle;
  readonly reject: Settle;
  constructor(bytes: Uint8Array, kind: number, flags: number, what: number, resolve: Settle, reject: Settle) {
    this.bytes = bytes;
    this.kind = kind;
    this.flags = flags;
    this.what = what;
    this.resolve = resolve;
    this.reject = reject;
  }
}

const noop: Settle = () => {};
let capturedResolve: Settle = noop;
let capturedReject: Settle = noop;
function capture(resolve: Settle, reject: Settle): void {
  capturedResolve = resolve;
  capturedReject = reject;
}

const ERRNO_NAMES = new Map<number, string>(
  Object.entries(os.constants.errno).map(([name, n]) => [n as number, name]),
);

/** The name of an errno (`ECONNRESET`), or undefined for 0. */
export function errnoName(n: number): string | undefined {
  return n === 0 ? undefined : (ERRNO_NAMES.get(n) ?? `ERRNO_${n}`);
}

/** The descriptor behind a connected `net.Socket` (TCP or Unix). */
export function socketFd(socket: unknown): number {
  const fd = (socket as { _handle?: { fd?: unknown } })._handle?.fd;
  if (typeof fd !== 'number' || fd < 0) throw new Error('the socket has no file descriptor to hand over');
  return fd;
}

export abstract class NativeRequests implements CompletionSink {
  /** The statement time of the last completion, measured by the native core (µs). */
  timedUs: number | undefined;
  protected readonly id: number;
  /** Set once the connection is gone: every later request rejects with it. */
  protected dead: DbError | null = null;
  private busy = false;
  private closed = false;
  private hWhat = W_VOID;
  private hResolve: Settle = noop;
  private hReject: Settle = noop;
  private readonly queue: Pending[] = [];
  /** The batch in flight (runBatch). */
  private batch: StatementBatch | undefined;

  /** `options`: the MySQL session's O_* bits of native-core.ts (0 for PostgreSQL). */
  constructor(fd: number, protocol: number, options: number) {
    this.id = openNative(fd, protocol, options, this);
  }

  /** The server's error, from the bytes of its error message. */
  protected abstract serverError(bytes: Buffer): DbError;
  /** The connection is gone: errno (0 when the server closed it), and the error it sent first, if any. */
  protected abstract lostError(errno: number, bytes: Buffer): DbError;

  /** The request kind and flags of a prepared statement's execution (what a batch is made of). */
  protected abstract readonly batchKind: number;
  protected abstract readonly batchFlags: number;

  /**
   * Run a batch of encoded executions one after another (see statement-batch.ts); resolves when it ends,
   * with its results in the batch and its error, if any, in `batch.error` (the connection lost: also every
   * later request's). Only when nothing is in flight (the engine's closed loop).
   */
  runBatch(batch: StatementBatch, text = false): Promise<void> {
    if (this.dead !== null) {
      batch.failFirst(ST_LOST, this.dead);
      return Promise.resolve();
    }
    if (this.busy) throw new Error('runBatch: a request is already in flight');
    const p = new Promise<unknown>(capture);
    batch.error = undefined;
    this.busy = true;
    this.batch = batch;
    this.hResolve = capturedResolve;
    this.hReject = capturedReject;
    submitBatchNative(
      this.id,
      batch.bytes,
      batch.offsets,
      batch.count,
      this.batchKind,
      // text queries (`encodeQuery`'s) carry no flags on either protocol, as `query` sends them: a simple
      // Query ends at its ReadyForQuery, with no Sync after a COPY refusal
      text ? 0 : this.batchFlags,
      batch.results,
      batch.budgetUs,
      batch.group,
    );
    return p as Promise<void>;
  }

  /** Send a request now, or queue it behind the one in flight. Resolves to a count, raw bytes or nothing. */
  protected request(bytes: Uint8Array, kind: number, flags: number, what: number): Promise<unknown> {
    const p = new Promise<unknown>(capture);
    if (this.dead !== null) capturedReject(this.dead);
    else if (!this.busy) this.start(bytes, kind, flags, what, capturedResolve, capturedReject);
    // The bytes may be a view of a shared write buffer: keep a copy.
    else this.queue.push(new Pending(Buffer.from(bytes), kind, flags, what, capturedResolve, capturedReject));
    return p;
  }

  private start(
    bytes: Uint8Array,
    kind: number,
    flags: number,
    what: number,
    res: Settle,
    rej: Settle,
  ): void {
    this.busy = true;
    this.hWhat = what;
    this.hResolve = res;
    this.hReject = rej;
    submitNative(this.id, bytes, kind, flags);
  }

  onCompletion(status: number, value: number, latencyUs: number): void {
    const what = this.hWhat;
    const resolve = this.hResolve;
    const reject = this.hReject;
    this.busy = false;
    this.hResolve = noop;
    this.hReject = noop;
    this.timedUs = latencyUs;
    let error: DbError | null = null;
    let result: unknown;
    if (status === ST_BATCH) {
      // The batch ended at its last statement with a result: that one's status says how.
      const batch = this.batch as StatementBatch;
      this.batch = undefined;
      const n = value;
      const last = n > 0 ? batch.status(n - 1) : ST_OK;
      if (last === ST_ERR) batch.error = this.serverError(takeNative(this.id));
      else if (last === ST_LOST) {
        batch.error = this.lostError(batch.value(n - 1), takeNative(this.id));
        this.dead = batch.error;
        for (const q of this.queue.splice(0)) q.reject(this.dead);
      }
      const next = this.queue.shift();
      if (next !== undefined)
        this.start(next.bytes, next.kind, next.flags, next.what, next.resolve, next.reject);
      resolve(undefined);
      return;
    }
    if (status === ST_OK) result = what === W_COUNT ? value : undefined;
    else if (status === ST_ERR) error = this.serverError(takeNative(this.id));
    else if (status === ST_LOST) {
      error = this.lostError(value, takeNative(this.id));
      this.dead = error;
    } else result = takeNative(this.id);
    if (error !== null && this.dead !== null) {
      // Queued requests fail with the connection.
      for (const q of this.queue.splice(0)) q.reject(this.dead);
    } else {
      const next = this.queue.shift();
      if (next !== undefined)
        this.start(next.bytes, next.kind, next.flags, next.what, next.resolve, next.reject);
    }
    if (error !== null) reject(error);
    else resolve(result);
  }

  /**
   * Close the descriptor now (Connection.abort): a request in flight never settles, queued ones and later
   * ones reject as on a lost connection.
   */
  abort(): void {
    if (this.closed) return;
    this.closed = true;
    this.batch = undefined;
    this.shut(this.lostError(0, Buffer.alloc(0)));
  }

  /**
   * Send `goodbye` (no reply) unless the connection is gone, then close the descriptor; later requests
   * reject with `closed`.
   */
  protected async closeWith(goodbye: Uint8Array, closed: DbError): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    if (this.dead === null) await this.request(goodbye, K_NO_REPLY, 0, W_VOID).catch(noop);
    this.shut(closed);
  }

  /** Close the descriptor; queued requests reject with why the connection is gone (`dead`, else `why`). */
  private shut(why: DbError): void {
    this.dead ??= why;
    closeNative(this.id, this.busy);
    this.busy = false;
    for (const q of this.queue.splice(0)) q.reject(this.dead);
  }
}
