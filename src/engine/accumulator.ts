/**
 * The run's accumulator: the counter snapshots the load workers send (an `interval` message per report
 * interval crossed, the last partial one in `done`) merged into the run's totals and into its timeline of
 * closed intervals. Pure: no worker, no timer, no clock; the engine (engine.ts) feeds it messages and reads
 * what it closed.
 *
 * Totals (statement types, events, errors, retries, reconnects, the workload's counters and steps, schedule
 * lag, event connects, warm-up) take every snapshot as it arrives, so that a live view (`--metrics-listen`,
 * `--threshold-abort`) sees the run so far. An interval closes when every worker has reported it, and never
 * while a finished worker's last interval may still grow (the one it ended in is partial: only `finish`
 * closes it and the ones after it). Histograms merge exactly (HDR snapshots added), so the closed intervals
 * add up to the totals.
 *
 * The interval that ends at the deadline holds the events that end after it too (a statement in flight at
 * the deadline finishes, as pgbench's and sysbench's do). When some are still running a while after the
 * deadline, the worker reports that interval at once (its snapshot so far) and the rest in `done`: the
 * interval closes on time, without them, for the live lines (pgbench's progress line at 1.0 s of `-T 1`
 * says what ended by 1.0 s, printed then), and `finish` puts the late part into its point of the timeline,
 * which therefore still adds up to the totals.
 */
import { DbError, type SerializedDbError } from '../driver/errors.ts';
import {
  addSnapshot,
  type Histogram,
  mergingHistogram,
  percentileMs,
  summarize,
} from '../metrics/histogram.ts';
import { countByKind } from '../metrics/kinds.ts';
import type {
  ClientSummary,
  EngineOutcome,
  LiveView,
  MeasurePlan,
  TypeAccumulator,
} from '../metrics/outcome.ts';
import type { ErrorCount, IntervalPoint } from '../metrics/run-result.ts';
import { round2, round3 } from '../numbers.ts';
import type { CounterSnapshot, DoneMessage, IntervalMessage } from './protocol.ts';
import { StageFigures } from './stage-acc.ts';

/** The running totals an `onSnapshot` hook may read. */
export interface LiveTotals {
  types: ReadonlyMap<string, TypeAccumulator>;
  events: { readonly count: number; readonly hist: Histogram };
}

/** What the accumulator gives the run's outcome (the engine adds the run's own facts: workers, times, CPU). */
export type AccumulatedOutcome = Pick<
  EngineOutcome,
  | 'elapsedS'
  | 'types'
  | 'events'
  | 'errors'
  | 'retries'
  | 'reconnects'
  | 'intervals'
  | 'clientSummaries'
  | 'warmup'
  | 'stages'
  | 'fatal'
  | 'rate'
  | 'counters'
  | 'steps'
  | 'eventConnects'
>;

export class RunAccumulator {
  private readonly plan: MeasurePlan;
  private readonly types = new Map<string, TypeAccumulator>();
  private readonly events = { count: 0, hist: mergingHistogram() };
  /** The totals so far, one object for the whole run (hooks read it, they do not keep a copy). */
  readonly live: LiveTotals = { types: this.types, events: this.events };
  private readonly errors = new Map<string, ErrorCount>();
  private retries = 0;
  private reconnects = 0;
  private readonly counters = new Map<string, number>();
  private readonly steps = new Map<string, { count: number; hist: Histogram }>();
  private readonly eventConnects = mergingHistogram();
  private readonly lag = { hist: mergingHistogram(), late: 0, dropped: 0, skipped: 0 };
  private readonly stageFig: StageFigures | undefined;
  private readonly warm = { elapsedUs: 0, events: 0, queries: 0 };
  private readonly summaries: ClientSummary[] = [];
  /** Epoch µs when the last measured event of any worker ended (0 if none). */
  private lastEndUs = 0;
  private fatalError: SerializedDbError | undefined;

  /** The snapshots of each interval not closed yet, by index. */
  private readonly open = new Map<number, CounterSnapshot[]>();
  private readonly points: IntervalPoint[] = [];
  /** The last interval closed (-1: none). */
  private closed = -1;
  /** The lowest interval a finished worker ended in: it and the ones after it close only at `finish`. */
  private doneFloor = Number.POSITIVE_INFINITY;
  /** Each worker's last interval reported (-1: none yet; Infinity once it has finished or was lost). */
  private readonly lastIdx: number[];
  /** The interval closed last: its snapshots and its point (when kept), for the late part of `done`. */
  private lastClosed: { idx: number; snaps: CounterSnapshot[]; point: IntervalPoint | undefined } | undefined;
  /** Snapshots of `done` messages for an interval already closed (the deadline's: see the top). */
  private readonly late: CounterSnapshot[] = [];

  constructor(plan: MeasurePlan, workers: number) {
    this.plan = plan;
    this.lastIdx = new Array<number>(workers).fill(-1);
    this.stageFig = plan.stages !== undefined ? new StageFigures(plan.stages) : undefined;
  }

  /** A worker's snapshot of interval `m.idx`: into the totals and the interval's snapshots. */
  interval(m: IntervalMessage): void {
    this.snapshotOf(m.idx).push(m);
    this.merge(m);
    this.lastIdx[m.workerIndex] = m.idx;
  }

  /**
   * A worker finished: its last, partial interval (a snapshot like the others, which only `finish` closes),
   * its clients' summaries, its warm-up, when its last event ended, and the fatal error that stopped it.
   */
  done(m: DoneMessage): void {
    // the deadline's interval, reported at once by this worker and closed: what ended after it came later
    if (m.last.idx <= this.closed) this.late.push(m.last);
    else this.snapshotOf(m.last.idx).push(m.last);
    this.merge(m.last);
    this.lastIdx[m.workerIndex] = Number.POSITIVE_INFINITY;
    // a worker that ran to the deadline ended its last interval there: complete in time, it need not wait
    if (m.pastDeadline !== true) this.doneFloor = Math.min(this.doneFloor, m.last.idx);
    this.summaries.push(...m.clientSummaries);
    this.warm.events += m.warmup.events;
    this.warm.queries += m.warmup.types.reduce((a, t) => a + t.count, 0);
    this.warm.elapsedUs = Math.max(this.warm.elapsedUs, m.warmup.elapsedUs);
    this.lastEndUs = Math.max(this.lastEndUs, m.lastEndUs);
    this.lag.dropped += m.dropped ?? 0;
    if (m.fatal && this.fatalError === undefined) this.fatalError = m.fatal;
  }

  /** A worker died mid-run: it reports nothing more, and its error stops the run (unless one already did). */
  lost(workerIndex: number, error: SerializedDbError): void {
    this.lastIdx[workerIndex] = Number.POSITIVE_INFINITY;
    this.fatalError ??= error;
  }

  /**
   * A worker that did not stop in time was terminated: its clients are reported aborted with `reason`, and
   * the measured part ends at `endUs` at the latest.
   */
  abandoned(clientIds: readonly number[], reason: string, endUs: number): void {
    for (const id of clientIds) {
      this.summaries.push({
        id,
        events: 0,
        queries: 0,
        errors: 0,
        connectMs: 0,
        busyUs: 0,
        batched: 0,
        aborted: true,
        abortReason: reason,
      });
    }
    this.lastEndUs = Math.max(this.lastEndUs, endUs);
  }

  /** Whether a fatal error has stopped a worker. */
  get fatal(): boolean {
    return this.fatalError !== undefined;
  }

  /** The longest event (or statement) merged so far, in µs (0 before any): the deadline's grace follows it. */
  longestUs(): number {
    let most = this.events.count > 0 ? this.events.hist.maxValue : 0;
    for (const t of this.types.values()) if (t.count > 0 && t.hist.maxValue > most) most = t.hist.maxValue;
    return most;
  }

  /** The index of the last interval closed (-1 when none is): a live check runs once per new one. */
  get closedUpTo(): number {
    return this.closed;
  }

  /** Close every interval all workers have reported; the points of those that counted something. */
  closeComplete(): IntervalPoint[] {
    return this.close(false, 0);
  }

  /**
   * The run is over: close every interval left (the last one ends where the measured part ended, counted
   * from `measureAtUs`) and every stage; the points of those that counted something.
   */
  finish(measureAtUs: number): IntervalPoint[] {
    this.addLate(measureAtUs);
    const points = this.close(true, measureAtUs);
    this.stageFig?.closeAll();
    return points;
  }

  /** The run so far, as a live check (`--threshold-abort`) sees it. */
  liveView(): LiveView {
    let errorCount = 0;
    for (const e of this.errors.values()) errorCount += e.count;
    return {
      plan: this.plan,
      events: this.events,
      types: this.types,
      errors: errorCount,
      stages: this.stageFig?.stages,
    };
  }

  /** The merged figures of the run, once `finish` has closed it. */
  outcome(measureAtUs: number): AccumulatedOutcome {
    const plan = this.plan;
    const elapsedS = this.lastEndUs > 0 ? (this.lastEndUs - measureAtUs) / 1e6 : 0;
    this.summaries.sort((a, b) => a.id - b.id);
    const lag = this.lag;
    return {
      elapsedS: Math.max(0, elapsedS),
      types: this.types,
      events: this.events,
      errors: [...this.errors.values()].sort((a, b) => b.count - a.count),
      retries: this.retries,
      reconnects: this.reconnects,
      intervals: this.points,
      clientSummaries: this.summaries,
      warmup:
        plan.warmupS > 0
          ? { elapsedS: this.warm.elapsedUs / 1e6, events: this.warm.events, queries: this.warm.queries }
          : undefined,
      ...(this.stageFig !== undefined ? { stages: this.stageFig.stages } : {}),
      fatal: this.fatalError ? DbError.fromJSON(this.fatalError) : undefined,
      rate: plan.rate
        ? { lagHist: lag.hist, late: lag.late, dropped: lag.dropped, skipped: lag.skipped }
        : undefined,
      counters: this.counters,
      steps: this.steps,
      eventConnects: this.eventConnects,
    };
  }

  private snapshotOf(idx: number): CounterSnapshot[] {
    let snaps = this.open.get(idx);
    if (snaps === undefined) {
      snaps = [];
      this.open.set(idx, snaps);
    }
    return snaps;
  }

  /** One snapshot into the run's totals. */
  private merge(s: CounterSnapshot): void {
    for (const t of s.types) {
      let acc = this.types.get(t.name);
      if (acc === undefined) {
        acc = { kind: t.kind, count: 0, zero: 0, errors: 0, hist: mergingHistogram() };
        this.types.set(t.name, acc);
      }
      acc.count += t.count;
      acc.zero += t.zero ?? 0;
      acc.errors += t.errors;
      if (t.hist) addSnapshot(acc.hist, t.hist);
    }
    this.events.count += s.events;
    if (s.eventHist) addSnapshot(this.events.hist, s.eventHist);
    this.retries += s.retries;
    this.reconnects += s.reconnects;
    if (s.lagHist) addSnapshot(this.lag.hist, s.lagHist);
    this.lag.late += s.late ?? 0;
    this.lag.skipped += s.skipped ?? 0;
    for (const e of s.errors) {
      const key = `${e.kind}:${e.code}:${e.ignored}`;
      const acc = this.errors.get(key);
      if (acc) acc.count += e.count;
      else this.errors.set(key, { ...e });
    }
    for (const [k, v] of Object.entries(s.counters ?? {}))
      this.counters.set(k, (this.counters.get(k) ?? 0) + v);
    for (const st of s.steps ?? []) {
      let acc = this.steps.get(st.name);
      if (acc === undefined) {
        acc = { count: 0, hist: mergingHistogram() };
        this.steps.set(st.name, acc);
      }
      acc.count += st.count;
      addSnapshot(acc.hist, st.hist);
    }
    if (s.connectHist) addSnapshot(this.eventConnects, s.connectHist);
  }

  /** Close the intervals that are complete (all of them when `final`), in order. */
  private close(final: boolean, measureAtUs: number): IntervalPoint[] {
    const out: IntervalPoint[] = [];
    const maxKey = Math.max(this.closed, ...this.open.keys());
    // The interval a finished worker ended in is partial: it is only closed by the final emit.
    const upTo = final ? maxKey : Math.min(maxKey, this.doneFloor - 1, ...this.lastIdx);
    for (let idx = this.closed + 1; idx <= upTo; idx++) {
      const snaps = this.open.get(idx) ?? [];
      this.open.delete(idx);
      const stageFig = this.stageFig;
      const p = this.pointOf(idx, snaps, final, measureAtUs, (startS, dur) =>
        stageFig !== undefined ? stageFig.add(startS, dur, snaps) + 1 : undefined,
      );
      const kept = counted(p);
      if (kept) {
        this.points.push(p);
        out.push(p);
      }
      this.lastClosed = { idx, snaps, point: kept ? p : undefined };
      this.closed = idx;
    }
    return out;
  }

  /**
   * The late part of the deadline's interval (`done` after it closed) into its point of the timeline: the
   * point is made again from all its snapshots; the live lines had it without them.
   */
  private addLate(measureAtUs: number): void {
    const last = this.lastClosed;
    if (this.late.length === 0 || last === undefined) return;
    const late = this.late.splice(0);
    const snaps = [...last.snaps, ...late];
    const stageFig = this.stageFig;
    const p = this.pointOf(last.idx, snaps, true, measureAtUs, (startS) =>
      stageFig !== undefined ? stageFig.add(startS, 0, late) + 1 : undefined,
    );
    const at = last.point === undefined ? -1 : this.points.indexOf(last.point);
    const kept = at >= 0 || counted(p);
    if (at >= 0) this.points[at] = p;
    else if (kept) this.points.push(p);
    this.lastClosed = { idx: last.idx, snaps, point: kept ? p : undefined };
  }

  /**
   * The point of interval `idx` from its snapshots. It ends a report interval after its start, or where the
   * measured part ended when that is sooner: known at `finish` (`final`), else the run's length.
   */
  private pointOf(
    idx: number,
    snaps: CounterSnapshot[],
    final: boolean,
    measureAtUs: number,
    stage: (startS: number, durS: number) => number | undefined,
  ): IntervalPoint {
    const plan = this.plan;
    const { p, stmt, ev } = countsOf(snaps);
    const startS = idx * plan.reportIntervalS;
    const measuredS =
      final && this.lastEndUs > 0
        ? (this.lastEndUs - measureAtUs) / 1e6
        : (plan.timeS ?? Number.POSITIVE_INFINITY);
    const endS = Math.min(startS + plan.reportIntervalS, measuredS);
    p.t = round3(Math.max(startS, endS));
    p.dur = round3(p.t - startS);
    const d = p.dur > 0 ? p.dur : plan.reportIntervalS;
    p.qps = round2(p.queries / d);
    p.eps = round2(p.events / d);
    p.p95_ms = percentileMs(stmt, 95);
    if (stmt.totalCount > 0) p.max_ms = Math.round(stmt.maxValue) / 1000;
    p.event_p95_ms = percentileMs(ev, 95);
    const st = stage(startS, p.dur);
    if (st !== undefined) p.stage = st;
    if (ev.totalCount > 0) {
      const { min: _min, mean, stddev, ...pcts } = summarize(ev);
      p.event_latency_ms = pcts;
      p.event_mean_ms = mean;
      p.event_stddev_ms = stddev;
      if (plan.percentile !== undefined && plan.percentile > 0) {
        p.event_percentile_ms = percentileMs(ev, plan.percentile);
      }
    }
    return p;
  }
}

/** Keep every interval that counted something, so that the intervals add up to the totals. */
function counted(p: IntervalPoint): boolean {
  return p.dur > 0.0005 || p.queries > 0 || p.events > 0 || p.errors > 0 || p.retries > 0 || p.reconnects > 0;
}

/**
 * The two histograms an interval's latency figures are taken from, emptied for each interval: a new pair
 * per interval was 2 × 184 KB of new memory a second for the main thread to fill, walk and collect.
 */
let intervalHists: { stmt: Histogram; ev: Histogram; lag: Histogram } | undefined;

/** A histogram emptied as `reset` does, with a new one's start time stamp (reset sets 0). */
function emptied(h: Histogram): Histogram {
  h.reset();
  (h as { startTimeStampMsec: number }).startTimeStampMsec = Number.MAX_SAFE_INTEGER;
  return h;
}

/**
 * The counts of one interval's snapshots (its times and rates are set by the caller), and its histograms,
 * which are only good until the next call: read them before.
 */
function countsOf(snaps: readonly CounterSnapshot[]): { p: IntervalPoint; stmt: Histogram; ev: Histogram } {
  intervalHists ??= { stmt: mergingHistogram(), ev: mergingHistogram(), lag: mergingHistogram() };
  const stmt = emptied(intervalHists.stmt);
  const ev = emptied(intervalHists.ev);
  let lag: Histogram | undefined;
  const p: IntervalPoint = {
    t: 0,
    dur: 0,
    queries: 0,
    events: 0,
    qps: 0,
    eps: 0,
    p95_ms: 0,
    event_p95_ms: 0,
    errors: 0,
    ignored_errors: 0,
    retries: 0,
    reconnects: 0,
    reads: 0,
    writes: 0,
    others: 0,
  };
  for (const s of snaps) {
    // as sysbench counts: a write that changed no row is "other"
    const k = countByKind(s.types);
    p.reads += k.read;
    p.writes += k.write;
    p.others += k.other;
    for (const t of s.types) {
      p.queries += t.count;
      if (t.hist) addSnapshot(stmt, t.hist);
    }
    p.events += s.events;
    if (s.eventHist) addSnapshot(ev, s.eventHist);
    for (const e of s.errors) {
      p.errors += e.count;
      if (e.ignored && e.kind !== 'reconnect') p.ignored_errors = (p.ignored_errors ?? 0) + e.count;
    }
    p.retries += s.retries;
    p.reconnects += s.reconnects;
    if (s.lagHist !== undefined) {
      lag ??= emptied(intervalHists.lag);
      addSnapshot(lag, s.lagHist);
    }
    if (s.late !== undefined) p.rate_late = (p.rate_late ?? 0) + s.late;
    if (s.skipped !== undefined) p.rate_skipped = (p.rate_skipped ?? 0) + s.skipped;
    if (s.queue !== undefined) {
      p.rate_queue = (p.rate_queue ?? 0) + s.queue;
      p.rate_concurrency = (p.rate_concurrency ?? 0) + (s.concurrency ?? 0);
    }
    for (const [k, v] of Object.entries(s.counters ?? {})) {
      p.counters ??= {};
      p.counters[k] = (p.counters[k] ?? 0) + v;
    }
  }
  if (lag !== undefined && lag.totalCount > 0) p.rate_lag_ms = round3(lag.mean / 1000);
  return { p, stmt, ev };
}
