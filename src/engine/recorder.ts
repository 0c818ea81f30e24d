/**
 * Per-worker recorder: statement and event latencies into histograms per statement type, counters and
 * errors. It keeps only the current interval; the engine merges intervals exactly in the main thread.
 */
import type { DbError } from '../driver/errors.ts';
import type { StatementKind } from '../metrics/kinds.ts';
import {
  HIGHEST_US,
  type RecordingHistogram as Histogram,
  recordingHistogram,
} from '../metrics/recording-histogram.ts';
import type { CounterSnapshot, ErrorSnapshot, TypeSnapshot } from './protocol.ts';

interface TypeSlot {
  name: string;
  kind: StatementKind;
  hist: Histogram;
  count: number;
  /** Statements that returned or changed no row (a write of 0 rows is sysbench's "other"). */
  zero: number;
  errors: number;
}

const clamp = (us: number): number => (us < 1 ? 1 : us > HIGHEST_US ? HIGHEST_US : Math.round(us));

export class Recorder {
  private readonly slots: TypeSlot[] = [];
  private readonly byName = new Map<string, number>();
  private readonly eventHist: Histogram = recordingHistogram();
  private events = 0;
  private retries = 0;
  private reconnects = 0;
  private readonly errors = new Map<string, ErrorSnapshot>();
  /** Rate mode only: how late events started against their schedule. */
  private lagHist: Histogram | undefined;
  private late = 0;
  /** Rate mode: events skipped for being too late (RatePlan.skipLateUs). */
  private skipped = 0;
  private readonly counters = new Map<string, number>();
  private readonly steps = new Map<string, { hist: Histogram; count: number }>();
  private connectHist: Histogram | undefined;

  /** The statement types declared so far (by the clients' set-up, before the run). */
  names(): string[] {
    return [...this.byName.keys()];
  }

  /** The slot index of a statement type, created on first use. */
  slotOf(name: string, kind: StatementKind): number {
    let i = this.byName.get(name);
    if (i === undefined) {
      i = this.slots.length;
      this.slots.push({ name, kind, hist: recordingHistogram(), count: 0, zero: 0, errors: 0 });
      this.byName.set(name, i);
    }
    return i;
  }

  record(slot: number, us: number, rows: number): void {
    const s = this.slots[slot] as TypeSlot;
    s.hist.recordValue(clamp(us));
    s.count++;
    if (rows === 0) s.zero++;
  }

  typeError(slot: number): void {
    (this.slots[slot] as TypeSlot).errors++;
  }

  recordError(err: DbError, ignored: boolean): void {
    const key = `${err.kind}:${err.code}:${ignored}`;
    const e = this.errors.get(key);
    if (e) e.count++;
    else this.errors.set(key, { code: err.code, kind: err.kind, count: 1, ignored, message: err.message });
  }

  recordEvent(us: number): void {
    this.eventHist.recordValue(clamp(us));
    this.events++;
  }

  /** Rate mode: an event started `us` after its scheduled time. */
  recordLag(us: number, lateUs: number): void {
    this.lagHist ??= recordingHistogram();
    this.lagHist.recordValue(us < 0 ? 0 : clamp(us));
    if (us > lateUs) this.late++;
  }

  /** Rate mode: an event skipped, never run, for being too late. */
  skip(): void {
    this.skipped++;
  }

  retry(): void {
    this.retries++;
  }

  count(name: string, n: number): void {
    this.counters.set(name, (this.counters.get(name) ?? 0) + n);
  }

  step(name: string, us: number): void {
    let s = this.steps.get(name);
    if (s === undefined) {
      s = { hist: recordingHistogram(), count: 0 };
      this.steps.set(name, s);
    }
    s.hist.recordValue(clamp(us));
    s.count++;
  }

  /** A connection opened for one event (`connectPerEvent`). */
  connected(us: number): void {
    this.connectHist ??= recordingHistogram();
    this.connectHist.recordValue(clamp(us));
  }

  reconnect(): void {
    this.reconnects++;
  }

  /** Everything since the last snapshot (histograms as their counts); resets the counters. */
  snapshot(): CounterSnapshot {
    const types: TypeSnapshot[] = [];
    for (const s of this.slots) {
      if (s.count === 0 && s.errors === 0) continue;
      const t: TypeSnapshot = { name: s.name, kind: s.kind, count: s.count, errors: s.errors };
      if (s.zero > 0) t.zero = s.zero;
      if (s.count > 0) {
        t.hist = s.hist.counts();
        s.hist.reset();
      }
      types.push(t);
      s.count = 0;
      s.zero = 0;
      s.errors = 0;
    }
    const snap: CounterSnapshot = {
      types,
      events: this.events,
      errors: [...this.errors.values()],
      retries: this.retries,
      reconnects: this.reconnects,
    };
    if (this.events > 0) {
      snap.eventHist = this.eventHist.counts();
      this.eventHist.reset();
    }
    if (this.lagHist !== undefined) {
      snap.lagHist = this.lagHist.counts();
      snap.late = this.late;
      this.lagHist.reset();
      this.late = 0;
    }
    if (this.skipped > 0) {
      snap.skipped = this.skipped;
      this.skipped = 0;
    }
    if (this.counters.size > 0) {
      snap.counters = Object.fromEntries(this.counters);
      this.counters.clear();
    }
    for (const [name, s] of this.steps) {
      if (s.count === 0) continue;
      snap.steps ??= [];
      snap.steps.push({ name, count: s.count, hist: s.hist.counts() });
      s.hist.reset();
      s.count = 0;
    }
    if (this.connectHist !== undefined && this.connectHist.totalCount > 0) {
      snap.connectHist = this.connectHist.counts();
      this.connectHist.reset();
    }
    this.events = 0;
    this.retries = 0;
    this.reconnects = 0;
    this.errors.clear();
    return snap;
  }
}
