/**
 * The command-line side of live metrics (`--metrics-listen HOST:PORT`, `--metrics-linger S`), shared by
 * `run` and `sweep`: `addMetricsOptions(cmd)` declares the options, `openMetrics(options, labels)` binds the
 * listener (before the run connects anywhere: a port in use is a usage error, exit 2) and returns what the
 * command hands to `runOnce` (a probe for the phases, the snapshot hook) and closes at the end.
 * prom-client is loaded only when the option is given.
 */
import { Option } from '@commander-js/extra-typings';
import type { Target } from '../driver/types.ts';
import type { LiveTotals } from '../engine/engine.ts';
import type { IntervalMessage } from '../engine/protocol.ts';
import type { RunProbe } from '../engine/run-once.ts';
import { UsageError } from '../errors.ts';
import type { LiveMetrics } from '../report/live-metrics.ts';
import type { MetricsServer } from '../report/metrics-server.ts';
import { helpDefault } from './help.ts';
import { seconds } from './parse.ts';
import type { OptionTarget } from './profile-options.ts';

/** Where to listen: `host` undefined for every interface (`:PORT`). */
export interface ListenAddress {
  host: string | undefined;
  port: number;
  /** As given, for messages. */
  text: string;
}

export interface MetricsCliOptions {
  metricsListen?: ListenAddress;
  metricsLinger?: number;
}

/** Parse `HOST:PORT`, `[IPv6]:PORT` or `:PORT` (every interface); port 0 takes any free port. */
export function parseListenAddress(v: string): ListenAddress {
  const text = v.trim();
  const m = /^(?:\[([0-9A-Fa-f:.%\w]+)\]|([^:[\]\s]*)):(\d{1,5})$/.exec(text);
  const port = Number(m?.[3]);
  if (m === null || port > 65535) {
    throw new UsageError(
      `--metrics-listen expects HOST:PORT, got '${v}'`,
      'e.g. 127.0.0.1:9464, [::1]:9464, or :9464 for every interface; port 0 takes any free port',
    );
  }
  const host = m[1] ?? (m[2] === '' ? undefined : m[2]);
  return { host, port, text };
}

export function addMetricsOptions(cmd: OptionTarget): void {
  const options = [
    new Option(
      '--metrics-listen <host:port>',
      "serve live metrics in Prometheus's text format at http://HOST:PORT/metrics during the run (:PORT for every interface, port 0 for any free port)",
    ).argParser(parseListenAddress),
    helpDefault(
      new Option(
        '--metrics-linger <s>',
        'keep serving the final metrics for S seconds after the result is printed, for a last scrape',
      ).argParser(seconds('--metrics-linger')),
      '0',
    ),
  ];
  for (const o of options) cmd.addOption(o as unknown as Option);
}

/** Why a listener could not be bound, as the user can act on it. */
function listenError(a: ListenAddress, e: NodeJS.ErrnoException): UsageError {
  const where = `--metrics-listen ${a.text}`;
  switch (e.code) {
    case 'EADDRINUSE':
      return new UsageError(
        `${where}: port ${a.port} is in use${a.host !== undefined ? ` on ${a.host}` : ''}`,
        'choose another port (or 0 for any free one), or stop what listens there (ss -ltnp)',
      );
    case 'EADDRNOTAVAIL':
      return new UsageError(`${where}: ${a.host} is not an address of this machine`);
    case 'EACCES':
      return new UsageError(
        `${where}: not allowed to listen on port ${a.port}`,
        'ports below 1024 need root',
      );
    case 'ENOTFOUND':
    case 'EAI_AGAIN':
      return new UsageError(`${where}: the host name ${a.host} does not resolve`);
    default:
      return new UsageError(`${where}: cannot listen: ${e.code ?? ''} ${e.message}`.trim());
  }
}

/** A run's (or a sweep's) live metrics: the registry, its listener, and the hooks that feed it. */
export class MetricsSession {
  readonly metrics: LiveMetrics;
  readonly server: MetricsServer;
  private readonly lingerS: number;
  private phaseTimer: NodeJS.Timeout | undefined;

  private readonly log: (m: string) => void;

  constructor(metrics: LiveMetrics, server: MetricsServer, lingerS: number, log: (m: string) => void) {
    this.metrics = metrics;
    this.server = server;
    this.lingerS = lingerS;
    this.log = log;
  }

  private failed = false;

  /**
   * The engine's snapshot hook (`RunInput.onSnapshot`). A failure here must not cost the run: it is told
   * once, and the metrics stop moving.
   */
  readonly onSnapshot = (m: IntervalMessage, totals: LiveTotals): void => {
    if (this.failed) return;
    try {
      this.metrics.snapshot(m, m.workerIndex, totals);
    } catch (e) {
      this.failed = true;
      this.log(`dbsmack: warning: live metrics stopped: ${(e as Error).message}`);
    }
  };

  /** Follows the phases of each run: connected (warm-up or measuring), measured, stopped. */
  readonly probe: RunProbe = {
    key: 'metrics',
    start: (info) => {
      const m = this.metrics;
      m.clients(info.clients);
      const untilMeasure = info.measureAtMs - Date.now();
      if (untilMeasure > 50) {
        m.phase('warmup');
        this.phaseTimer = setTimeout(() => m.phase('measuring'), untilMeasure);
        this.phaseTimer.unref();
      } else m.phase('measuring');
    },
    measured: () => {
      clearTimeout(this.phaseTimer);
      this.metrics.phase('stopping');
    },
    stop: () => {
      clearTimeout(this.phaseTimer);
      this.metrics.runEnded();
      this.metrics.phase('setup');
      // nothing goes into the RunResult
      return undefined;
    },
  };

  /** The command's runs are over (finished, failed or interrupted). */
  ended(): void {
    clearTimeout(this.phaseTimer);
    this.metrics.runEnded();
    this.metrics.phase('done');
  }

  /**
   * Close the listener, after `--metrics-linger` seconds unless the run was interrupted (a signal during
   * the linger ends it early; the command then exits as the run decided).
   */
  async finish(interrupted: boolean): Promise<void> {
    this.ended();
    if (this.lingerS > 0 && !interrupted) {
      this.log(
        `dbsmack: serving the final metrics at ${this.server.url} for ${this.lingerS} s (--metrics-linger; Ctrl-C ends it)`,
      );
      await new Promise<void>((resolve) => {
        const end = (): void => {
          clearTimeout(timer);
          process.off('SIGINT', end);
          process.off('SIGTERM', end);
          resolve();
        };
        const timer = setTimeout(end, this.lingerS * 1000);
        process.on('SIGINT', end);
        process.on('SIGTERM', end);
      });
    }
    await this.server.close();
  }
}

/**
 * Bind `--metrics-listen` when given (undefined otherwise), with the run's labels. Call it after the
 * options are checked and before anything connects.
 */
export async function openMetrics(
  o: MetricsCliOptions & { quiet?: boolean },
  labels: { workload: string; target: Target; label?: string | undefined },
  log: (m: string) => void,
): Promise<MetricsSession | undefined> {
  const a = o.metricsListen;
  if (a === undefined) {
    if (o.metricsLinger !== undefined && o.metricsLinger > 0)
      throw new UsageError('--metrics-linger goes with --metrics-listen HOST:PORT');
    return undefined;
  }
  const [{ LiveMetrics, runLabels }, { startMetricsServer }] = await Promise.all([
    import('../report/live-metrics.ts'),
    import('../report/metrics-server.ts'),
  ]);
  const metrics = new LiveMetrics(runLabels(labels.workload, labels.target, labels.label));
  let server: MetricsServer;
  try {
    server = await startMetricsServer(a.host, a.port, metrics);
  } catch (e) {
    throw listenError(a, e as NodeJS.ErrnoException);
  }
  if (!o.quiet) log(`dbsmack: metrics at ${server.url}`);
  return new MetricsSession(metrics, server, o.metricsLinger ?? 0, log);
}
