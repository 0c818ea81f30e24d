/**
 * The probes a run's options ask for (`--profile`, the scheduling experiments, `--profile-stacks`,
 * `--count-calls`): the RunProbes handed to `runOnce`. The options themselves are declared in
 * cli/profile-options.ts.
 */

// Up into cli/ until the code probe's part moves down beside this file: it still lives beside its options.
import { codeProbeFrom, type StacksCliOptions } from '../cli/stacks-options.ts';
import type { RunProbe } from '../engine/run-once.ts';
import { UsageError } from '../errors.ts';
import type { SchedRequest } from '../metrics/profile-types.ts';
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
