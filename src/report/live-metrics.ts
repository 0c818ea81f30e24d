/**
 * Live metrics of a run in Prometheus's text exposition format (`--metrics-listen`). The registry is fed on
 * the main thread from the interval snapshots the load workers send anyway (counters and encoded HDR
 * histograms per statement type), so the per-statement hot path in the workers does not change at all:
 * what Prometheus sees moves once per `--report-interval` (1 s by default), per worker.
 *
 * Counters and gauges are prom-client's. The latency histograms are Prometheus histograms too, but their
 * buckets are read at each scrape from the HDR histograms the engine merges anyway: prom-client's Histogram
 * takes one value per `observe` call (about 350 ns each on this machine, measured with 1 M calls), which at
 * the hundreds of thousands to millions of statements per second a SQLite run makes would cost the main
 * thread a sixth of a core or more. `BucketHistogram` gives prom-client's registry the same shape its own
 * histograms give it. bench/metrics-cost.ts measures what is left.
 */
import { Counter, Gauge, type Metric, Registry } from 'prom-client';
import { redactSecrets } from '../driver/redact.ts';
import type { Target } from '../driver/types.ts';
import type { CounterSnapshot } from '../engine/protocol.ts';
import { forEachRecorded, type Histogram } from '../metrics/histogram.ts';

/**
 * Upper bounds of the latency buckets, seconds: 1-2-5 steps from 50 µs to 10 s (17 buckets and +Inf), so
 * that `histogram_quantile` interpolates within a factor of 2.5 from sub-millisecond point selects to
 * statements stalled for seconds. Faster statements (in-process SQLite) all land in the first bucket: the
 * RunResult has their exact percentiles.
 */
export const LATENCY_BUCKETS_S: readonly number[] = [
  0.00005, 0.0001, 0.0002, 0.0005, 0.001, 0.002, 0.005, 0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1, 2, 5, 10,
];

/** What the run is in, as the `dbsmack_run_phase` gauge tells it (1 for the current phase, 0 for the others). */
export const RUN_PHASES = ['setup', 'warmup', 'measuring', 'stopping', 'done'] as const;
export type RunPhase = (typeof RUN_PHASES)[number];

/** The labels every series of a run carries. */
export interface RunLabels {
  workload: string;
  /** The target's URL without its password. */
  target: string;
  /** `--label`, when given. */
  label?: string;
}

/**
 * The run's labels: the workload, the target's redacted URL and `--label`, each passed through
 * `redactSecrets` (a password the process knows never reaches a scraper, not even inside a label).
 */
export function runLabels(workload: string, target: Target, label?: string): RunLabels {
  return {
    workload: redactSecrets(workload),
    target: redactSecrets(target.redactedUrl),
    ...(label !== undefined ? { label: redactSecrets(label) } : {}),
  };
}

interface BucketSeries {
  labels: Record<string, string>;
  /** What earlier runs of a sweep added: count per bucket (not cumulative), the last one above the highest bound. */
  base: number[];
  baseSum: number;
  baseCount: number;
  /** The running run's merged histogram of this series (µs), read at each scrape. */
  live: Histogram | undefined;
}

/** `le` as Prometheus prints it (`5e-05`, `0.001`, `10`). */
const leText = (v: number): string => String(v);

/**
 * A Prometheus histogram whose buckets are read, at each scrape, from the run's merged HDR histograms (the
 * engine's totals per statement type, µs), so a snapshot costs no decoding beyond the engine's own. It
 * implements what prom-client's `Registry` reads of a metric (`name`, `help`, `type`, `aggregator`,
 * `get()`), so the registry formats it with the other metrics. A value goes to the first bucket whose bound
 * is at least the lowest value of its HDR bucket (HDR keeps three significant digits: a value within 0.1%
 * of a bound may count on either side of it).
 */
export class BucketHistogram {
  readonly name: string;
  readonly help: string;
  readonly type = 'histogram';
  readonly aggregator = 'sum';
  readonly boundsS: readonly number[];
  private readonly boundsUs: number[];
  private readonly series = new Map<string, BucketSeries>();

  constructor(name: string, help: string, boundsS: readonly number[]) {
    this.name = name;
    this.help = help;
    this.boundsS = boundsS;
    this.boundsUs = boundsS.map((b) => Math.round(b * 1e6));
  }

  /** Read `h` (which goes on growing) for the series of `labels` from now on, until `fold`. */
  track(labels: Record<string, string>, h: Histogram): void {
    const key = JSON.stringify(labels);
    let s = this.series.get(key);
    if (s === undefined) {
      s = {
        labels,
        base: new Array<number>(this.boundsUs.length + 1).fill(0),
        baseSum: 0,
        baseCount: 0,
        live: h,
      };
      this.series.set(key, s);
    } else if (s.live !== h) {
      this.foldSeries(s);
      s.live = h;
    }
  }

  /** A run ended: keep what its histograms hold, for the runs that follow (a sweep). */
  fold(): void {
    for (const s of this.series.values()) this.foldSeries(s);
  }

  private foldSeries(s: BucketSeries): void {
    if (s.live === undefined) return;
    const b = this.buckets(s.live);
    b.counts.forEach((c, j) => {
      s.base[j] = (s.base[j] ?? 0) + c;
    });
    s.baseSum += b.sum;
    s.baseCount += b.count;
    s.live = undefined;
  }

  /** Counts per bucket (not cumulative), sum (seconds) and count of an HDR histogram in µs. */
  buckets(h: Histogram): { counts: number[]; sum: number; count: number } {
    const bounds = this.boundsUs;
    const counts = new Array<number>(bounds.length + 1).fill(0);
    let sum = 0;
    let count = 0;
    let j = 0;
    // the walk goes up through the values, so the bucket only ever moves up
    forEachRecorded(h, (lowUs, midUs, c) => {
      while (j < bounds.length && lowUs > (bounds[j] as number)) j++;
      counts[j] = (counts[j] ?? 0) + c;
      sum += (midUs * c) / 1e6;
      count += c;
    });
    return { counts, sum, count };
  }

  /** What prom-client's registry formats: cumulative `_bucket` series, `_sum` and `_count`. */
  async get(): Promise<{
    name: string;
    help: string;
    type: string;
    aggregator: string;
    values: { labels: Record<string, string | number>; value: number; metricName: string }[];
  }> {
    const values: { labels: Record<string, string | number>; value: number; metricName: string }[] = [];
    for (const s of this.series.values()) {
      const live = s.live ? this.buckets(s.live) : { counts: [], sum: 0, count: 0 };
      let acc = 0;
      this.boundsS.forEach((b, j) => {
        acc += (s.base[j] ?? 0) + (live.counts[j] ?? 0);
        values.push({
          labels: { ...s.labels, le: leText(b) },
          value: acc,
          metricName: `${this.name}_bucket`,
        });
      });
      const count = s.baseCount + live.count;
      values.push({ labels: { ...s.labels, le: '+Inf' }, value: count, metricName: `${this.name}_bucket` });
      values.push({ labels: s.labels, value: s.baseSum + live.sum, metricName: `${this.name}_sum` });
      values.push({ labels: s.labels, value: count, metricName: `${this.name}_count` });
    }
    return { name: this.name, help: this.help, type: this.type, aggregator: this.aggregator, values };
  }
}

/** The engine's running totals of a run: merged histograms per statement type and of the events (µs). */
export interface LiveTotals {
  types: ReadonlyMap<string, { readonly hist: Histogram }>;
  events: { readonly hist: Histogram };
}

/** The metrics of one run (or of every run of a sweep, which add up in the same series). */
export class LiveMetrics {
  readonly registry = new Registry();
  private readonly statements: Counter<'statement' | 'kind'>;
  private readonly statementErrors: Counter<'statement'>;
  private readonly events: Counter;
  private readonly errors: Counter<'code' | 'kind'>;
  private readonly retries: Counter;
  private readonly reconnects: Counter;
  private readonly late: Counter;
  private readonly clientsGauge: Gauge;
  private readonly phaseGauge: Gauge<'phase'>;
  private readonly queueGauge: Gauge;
  private readonly inFlightGauge: Gauge;
  private readonly statementLatency: BucketHistogram;
  private readonly eventLatency: BucketHistogram;
  /** Rate mode: each worker's queue and events in flight at its latest snapshot. */
  private readonly rateByWorker = new Map<number, { queue: number; concurrency: number }>();
  private current: RunPhase = 'setup';

  constructor(labels: RunLabels) {
    const registers = [this.registry];
    this.registry.setDefaultLabels(labels);
    this.statements = new Counter({
      name: 'dbsmack_statements_total',
      help: 'Statements finished in the measured part, by statement type and kind (read, write, other)',
      labelNames: ['statement', 'kind'] as const,
      registers,
    });
    this.statementErrors = new Counter({
      name: 'dbsmack_statement_errors_total',
      help: 'Statements that failed, by statement type',
      labelNames: ['statement'] as const,
      registers,
    });
    this.events = new Counter({
      name: 'dbsmack_events_total',
      help: 'Events (transactions, rounds, script runs) finished in the measured part',
      registers,
    });
    this.errors = new Counter({
      name: 'dbsmack_errors_total',
      help: 'Errors by code (server error number, SQLSTATE or driver code) and kind (retryable, reconnect, fatal)',
      labelNames: ['code', 'kind'] as const,
      registers,
    });
    this.retries = new Counter({
      name: 'dbsmack_retries_total',
      help: 'Events run again after a deadlock or serialization failure',
      registers,
    });
    this.reconnects = new Counter({
      name: 'dbsmack_reconnects_total',
      help: 'Connections lost and opened again',
      registers,
    });
    this.late = new Counter({
      name: 'dbsmack_rate_late_events_total',
      help: 'Open loop (--rate): events started more than --rate-late-ms after their scheduled time',
      registers,
    });
    this.clientsGauge = new Gauge({
      name: 'dbsmack_clients',
      help: 'Clients of the run with their connections open (0 before they are connected and after the run)',
      registers,
    });
    this.phaseGauge = new Gauge({
      name: 'dbsmack_run_phase',
      help: `1 for the phase the run is in, 0 for the others (${RUN_PHASES.join(', ')})`,
      labelNames: ['phase'] as const,
      registers,
    });
    this.queueGauge = new Gauge({
      name: 'dbsmack_rate_queue',
      help: 'Open loop (--rate): events due but not started, at the latest snapshot',
      registers,
    });
    this.inFlightGauge = new Gauge({
      name: 'dbsmack_rate_in_flight',
      help: 'Open loop (--rate): events in progress, at the latest snapshot',
      registers,
    });
    this.statementLatency = new BucketHistogram(
      'dbsmack_statement_latency_seconds',
      'Statement latency by statement type, seconds',
      LATENCY_BUCKETS_S,
    );
    this.eventLatency = new BucketHistogram(
      'dbsmack_event_latency_seconds',
      'Event latency, seconds (in rate mode from the intended start)',
      LATENCY_BUCKETS_S,
    );
    this.registry.registerMetric(this.statementLatency as unknown as Metric);
    this.registry.registerMetric(this.eventLatency as unknown as Metric);
    this.phase('setup');
  }

  /** The content type of `text()`. */
  get contentType(): string {
    return this.registry.contentType;
  }

  /** The exposition text, as a scrape gets it. */
  text(): Promise<string> {
    return this.registry.metrics();
  }

  phase(p: RunPhase): void {
    this.current = p;
    for (const name of RUN_PHASES) this.phaseGauge.set({ phase: name }, name === p ? 1 : 0);
  }

  get currentPhase(): RunPhase {
    return this.current;
  }

  clients(n: number): void {
    this.clientsGauge.set(n);
  }

  /**
   * Count one worker's interval snapshot (`workerIndex` tells whose rate queue it reports); the latency
   * histograms are read from the engine's `totals` at each scrape.
   */
  snapshot(s: CounterSnapshot, workerIndex: number, totals: LiveTotals): void {
    for (const t of s.types) {
      if (t.count > 0) this.statements.inc({ statement: t.name, kind: t.kind }, t.count);
      if (t.errors > 0) this.statementErrors.inc({ statement: t.name }, t.errors);
    }
    for (const [statement, acc] of totals.types) this.statementLatency.track({ statement }, acc.hist);
    this.eventLatency.track({}, totals.events.hist);
    if (s.events > 0) this.events.inc(s.events);
    for (const e of s.errors) if (e.count > 0) this.errors.inc({ code: e.code, kind: e.kind }, e.count);
    if (s.retries > 0) this.retries.inc(s.retries);
    if (s.reconnects > 0) this.reconnects.inc(s.reconnects);
    if ((s.late ?? 0) > 0) this.late.inc(s.late);
    if (s.queue !== undefined) {
      this.rateByWorker.set(workerIndex, { queue: s.queue, concurrency: s.concurrency ?? 0 });
      let queue = 0;
      let concurrency = 0;
      for (const r of this.rateByWorker.values()) {
        queue += r.queue;
        concurrency += r.concurrency;
      }
      this.queueGauge.set(queue);
      this.inFlightGauge.set(concurrency);
    }
  }

  /** A run ended: its histograms are kept for the runs that follow (a sweep), whose workers start afresh. */
  runEnded(): void {
    this.statementLatency.fold();
    this.eventLatency.fold();
    this.rateByWorker.clear();
    this.clients(0);
  }
}
