/**
 * The probes a run's options ask for (`--profile`, the scheduling experiments, `--profile-stacks`,
 * `--count-calls`): the RunProbes handed to `runOnce`. The options themselves are declared in
 * cli/profile-options.ts.
 */

import { accessSync, constants } from 'node:fs';
import path from 'node:path';
import type { RunProbe } from '../engine/run-once.ts';
import { UsageError } from '../errors.ts';
import type { SchedRequest } from '../metrics/profile-types.ts';
import { CodeProbe } from '../probe/code-probe.ts';
import { ProfileProbe } from '../probe/profile-probe.ts';
import { type POLICIES, SchedProbe } from '../probe/server-sched.ts';

/** What the profile options parse into (a subset of a command's options). */
export interface ProbeOptions extends StacksCliOptions {
  profile?: boolean;
  profileRate?: number;
  serverPid?: number;
  serverNice?: number;
  serverPolicy?: (typeof POLICIES)[number];
  serverPriority?: number;
  serverCpus?: string;
  connectTimeout?: number;
}

/**
 * The probes the options ask for: scheduling first (so that the profile sees it), then the profile, then the
 * code profile (`--profile-stacks`, `--count-calls`: last, because it times its window from its own start).
 */
export function profileProbesFrom(o: ProbeOptions, context: { sweep?: boolean } = {}): RunProbe[] {
  const probes: RunProbe[] = [];
  const connectTimeoutMs = (o.connectTimeout ?? 10) * 1000;
  const req: SchedRequest = {};
  if (o.serverNice !== undefined) req.nice = o.serverNice;
  if (o.serverPolicy !== undefined) req.policy = o.serverPolicy;
  if (o.serverCpus !== undefined) req.cpus = o.serverCpus;
  if (o.serverPriority !== undefined) {
    if (o.serverPolicy !== 'fifo' && o.serverPolicy !== 'rr') {
      throw new UsageError('--server-priority goes with --server-policy fifo or rr');
    }
    if (o.serverPriority < 1) throw new UsageError('--server-priority must be from 1 to 99 for fifo and rr');
    req.priority = o.serverPriority;
  }
  const pid = o.serverPid !== undefined ? { serverPid: o.serverPid } : {};
  if (Object.keys(req).length > 0) probes.push(new SchedProbe(req, { ...pid, connectTimeoutMs }));
  if (o.profile) probes.push(new ProfileProbe({ rateHz: o.profileRate ?? 20, ...pid, connectTimeoutMs }));
  const code = codeProbeFrom(o, context);
  if (code) probes.push(code);
  return probes;
}

/** What the options parse into (`--profile-stacks`, `--count-calls`, …). */
export interface StacksCliOptions {
  profileStacks?: boolean;
  stacksWindow?: number;
  stacksOut?: string;
  countCalls?: string[];
}

/** The probe the options ask for, or undefined; `sweep` writes one `--stacks-out` file per run. */
export function codeProbeFrom(
  o: StacksCliOptions & { serverPid?: number; connectTimeout?: number },
  context: { sweep?: boolean } = {},
): RunProbe | undefined {
  const calls = o.countCalls ?? [];
  if (o.stacksOut !== undefined && !o.profileStacks)
    throw new UsageError('--stacks-out goes with --profile-stacks');
  if (o.stacksWindow !== undefined && !o.profileStacks && calls.length === 0)
    throw new UsageError('--stacks-window goes with --profile-stacks or --count-calls');
  if (!o.profileStacks && calls.length === 0) return undefined;
  if (o.stacksOut !== undefined) {
    const dir = path.dirname(path.resolve(o.stacksOut));
    try {
      accessSync(dir, constants.W_OK);
    } catch {
      throw new UsageError(`cannot write --stacks-out ${o.stacksOut}: ${dir} is not a writable directory`);
    }
  }
  return new CodeProbe({
    stacks: o.profileStacks === true,
    countCalls: calls,
    ...(o.stacksWindow !== undefined ? { windowS: o.stacksWindow } : {}),
    ...(o.stacksOut !== undefined ? { outFile: o.stacksOut } : {}),
    ...(context.sweep ? { perRunFiles: true } : {}),
    ...(o.serverPid !== undefined ? { serverPid: o.serverPid } : {}),
    connectTimeoutMs: (o.connectTimeout ?? 10) * 1000,
  });
}
