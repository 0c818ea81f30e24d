/**
 * One complete run, reusable by every command that runs workloads (through run/run.ts `runPlanned`):
 * optional prepare, the engine, the probes that watch the server while it is measured, and the RunResult.
 */

import { ioNote, loadConnectorOf, loadEnvironmentNotes, loadIoOf } from '../driver/connectors.ts';
import type { Target } from '../driver/types.ts';
import { buildRunResult } from '../metrics/build-result.ts';
import type { IntervalPoint, RunResult } from '../metrics/run-result.ts';
import type { AdminContext, Workload } from '../workload/types.ts';
import { withAdminContext } from './admin.ts';
import { Engine, type EngineHooks } from './engine.ts';
import { captureEnv } from './env.ts';
import type { RunPlan } from './protocol.ts';

/** What a probe learns when the clients are connected, just before the measured part starts. */
export interface ProbeStartInfo {
  target: Target;
  /** Backend pids (PostgreSQL) or connection ids (MySQL) of the run's own connections; 0 for SQLite. */
  sessionIds: number[];
  clients: number;
  serverVersion: string;
  /** Epoch ms when the measured part starts (after the warm-up). */
  measureAtMs: number;
  /** Seconds of warm-up before it; 0: the run's first statement comes after every probe's start() returned. */
  warmupS: number;
  /** Length of the measured part in seconds when the run is limited by time (`--time`). */
  measureS?: number;
}

/**
 * Something that watches a run from the side (server wait profiles, OS thread statistics). Its data is
 * stored in the RunResult under `key`.
 */
export interface RunProbe {
  readonly key: string;
  start(info: ProbeStartInfo): Promise<void> | void;
  /** The measured part just ended; the run's own connections are still open (a last server-side sample). */
  measured?(): Promise<void> | void;
  /** The measured part is over (or the run failed: `result` undefined); return what to store. */
  stop(result: RunResult | undefined): Promise<unknown> | unknown;
}

/** Lets a command stop the run in progress (first Ctrl-C) and know that it did. */
export class RunController {
  interrupted = false;
  private engine: Engine | undefined;

  attach(engine: Engine | undefined): void {
    this.engine = engine;
    if (engine && this.interrupted) engine.stop('interrupted');
  }

  stop(): void {
    this.interrupted = true;
    this.engine?.stop('interrupted');
  }
}

export interface RunInput {
  plan: RunPlan;
  workload: Workload;
  /** The workload's parsed options. */
  options: Record<string, unknown>;
  workers: number;
  label?: string;
  probes?: RunProbe[];
  onInterval?(p: IntervalPoint): void;
  /**
   * The clients are connected and set up: a chance to refuse the run before it starts (a threshold on a
   * statement type the workload does not have). `types`: the statement types the clients declared.
   */
  beforeStart?(info: { types: string[] }): void;
  /** After each complete interval: a reason to stop now (`--threshold-abort`), or undefined. */
  check?: EngineHooks['check'];
  /** Messages (prepare progress) go here; stderr by default. */
  log(message: string): void;
  controller: RunController;
  /** Each worker's interval snapshot as it arrives, with the run's totals so far (live metrics). */
  onSnapshot?: EngineHooks['onSnapshot'];
}

/**
 * The notes given so far (the environment's, `loadEnvironmentNotes`; that the native I/O core is missing,
 * `ioNote`): each once per process, since a sweep runs many times.
 */
const noted = new Set<string>();

function noteOnce(note: string | undefined, log: (message: string) => void): void {
  if (note === undefined || noted.has(note)) return;
  noted.add(note);
  log(note);
}

/** Run once; throws `StartError` when the clients cannot start (connect, load, set-up). */
export async function runOnce(input: RunInput): Promise<RunResult> {
  const { plan, workload, options } = input;
  const target = plan.target;
  // before anything of the run: a value of DBSMACK_IO or DBSMACK_BATCH they do not take is refused
  for (const note of loadEnvironmentNotes()) noteOnce(note, (m) => input.log(m));
  const admin = (fn: (ctx: AdminContext) => Promise<void>, textOnly = false): Promise<void> =>
    withAdminContext(
      target,
      options,
      plan.clients,
      plan.connectTimeoutMs,
      input.log,
      fn,
      plan.targetOverridden,
      textOnly,
    );
  if (workload.prepareOnRun && workload.prepare) await admin(workload.prepare.bind(workload));
  // say "run prepare first" rather than let every client fail on a missing table
  else if (workload.check) await admin(workload.check.bind(workload), workload.textCheck === true);
  noteOnce(ioNote(target), (m) => input.log(m));
  const probes = input.probes ?? [];
  const started: RunProbe[] = [];
  const engine = new Engine(plan, input.workers, {
    ...(input.onInterval ? { onInterval: input.onInterval } : {}),
    ...(input.check ? { check: input.check } : {}),
    onMeasureEnd: async () => {
      for (const p of started) await p.measured?.();
    },
    onStart: async (info) => {
      input.beforeStart?.({ types: info.types });
      for (const p of probes) {
        await p.start({
          target,
          sessionIds: info.sessionIds,
          clients: plan.clients,
          serverVersion: info.serverVersion,
          measureAtMs: Date.now() + 20 + plan.warmupS * 1000,
          warmupS: plan.warmupS,
          ...(plan.timeS !== undefined ? { measureS: plan.timeS } : {}),
        });
        started.push(p);
      }
    },
    ...(input.onSnapshot ? { onSnapshot: input.onSnapshot } : {}),
  });
  input.controller.attach(engine);
  let result: RunResult | undefined;
  try {
    const outcome = await engine.run();
    result = buildRunResult(outcome, {
      workloadName: workload.name,
      options,
      target,
      ...(loadConnectorOf(target) !== undefined ? { connector: loadConnectorOf(target) } : {}),
      io: loadIoOf(target),
      ...(input.label !== undefined ? { label: input.label } : {}),
      env: captureEnv(),
    });
    const groups = workload.groupsOf?.(result);
    if (groups !== undefined) result.groups = groups;
    workload.extendResult?.(result);
  } finally {
    input.controller.attach(undefined);
    // A probe that started always stops, even when the run failed, so that it restores what it changed.
    for (const p of started) {
      const data = await p.stop(result);
      if (result !== undefined && data !== undefined)
        (result as unknown as Record<string, unknown>)[p.key] = data;
    }
  }
  return result as RunResult;
}
