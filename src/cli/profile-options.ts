/**
 * The command-line side of `--profile` and the scheduling experiments, shared by every command that runs
 * workloads (`run`, `sweep`): `addProfileOptions(cmd)` declares the options, `profileProbesFrom(options)`
 * turns them into the RunProbes to hand to `runOnce`.
 */
import { Option } from '@commander-js/extra-typings';
import type { RunProbe } from '../engine/run-once.ts';
import type { SchedRequest } from '../metrics/profile-types.ts';
import { ProfileProbe } from '../probe/profile-probe.ts';
import { expandCpuList, POLICIES, SchedProbe } from '../probe/server-sched.ts';
import { UsageError } from './errors.ts';
import { helpDefault } from './help.ts';
import { positiveInt } from './parse.ts';
import { codeProbeFrom, type StacksCliOptions, stacksOptions } from './stacks-options.ts';

/** What the profile options parse into (a subset of a command's options). */
export interface ProfileCliOptions extends StacksCliOptions {
  profile?: boolean;
  profileRate?: number;
  serverPid?: number;
  serverNice?: number;
  serverPolicy?: (typeof POLICIES)[number];
  serverPriority?: number;
  serverCpus?: string;
  connectTimeout?: number;
}

function niceValue(v: string): number {
  const n = Number(v);
  if (!/^-?\d+$/.test(v.trim()) || n < -20 || n > 19) {
    throw new UsageError(`--server-nice expects a nice value from -20 to 19, got '${v}'`);
  }
  return n;
}

function priorityValue(v: string): number {
  const n = Number(v);
  if (!/^\d+$/.test(v.trim()) || n < 0 || n > 99) {
    throw new UsageError(`--server-priority expects a real-time priority from 1 to 99, got '${v}'`);
  }
  return n;
}

function cpuList(v: string): string {
  try {
    expandCpuList(v);
  } catch (e) {
    throw new UsageError(`--server-cpus: ${(e as Error).message}`);
  }
  return v.trim();
}

function rateValue(v: string): number {
  const n = Number(v);
  if (!Number.isFinite(n) || n <= 0 || n > 1000) {
    throw new UsageError(`--profile-rate expects samples per second above 0 and up to 1000, got '${v}'`);
  }
  return n;
}

/** The one thing `addProfileOptions` needs of a command: kept narrow so any commander command fits. */
export interface OptionTarget {
  addOption(option: Option): unknown;
}

/**
 * Declare the profile and scheduling options on a command (`run`, `sweep`). Its action receives them as
 * `ProfileCliOptions` fields; pass those to `profileProbesFrom`.
 */
export function addProfileOptions(cmd: OptionTarget): void {
  const options = [
    new Option(
      '--profile',
      "record where the server waits (performance schema / pg_stat_activity), its threads' scheduling statistics and load",
    ),
    helpDefault(
      new Option('--profile-rate <hz>', 'pg_stat_activity samples per second with --profile').argParser(
        rateValue,
      ),
      '20',
    ),
    new Option('--server-pid <pid>', "the server's process id, when dbsmack cannot find it itself").argParser(
      positiveInt('--server-pid'),
    ),
    new Option(
      '--server-nice <n>',
      "set the server threads' nice value for the run (restored after)",
    ).argParser(niceValue),
    new Option('--server-policy <policy>', "set the server threads' scheduling policy for the run").choices(
      POLICIES,
    ),
    helpDefault(
      new Option('--server-priority <p>', 'real-time priority with --server-policy fifo|rr').argParser(
        priorityValue,
      ),
      '1',
    ),
    new Option(
      '--server-cpus <list>',
      'pin the server threads to these CPUs for the run, e.g. 0 or 0-1,3',
    ).argParser(cpuList),
  ];
  for (const o of [...options, ...stacksOptions()]) cmd.addOption(o as unknown as Option);
}

/**
 * The probes the options ask for: scheduling first (so that the profile sees it), then the profile, then the
 * code profile (`--profile-stacks`, `--count-calls`: last, because it times its window from its own start).
 */
export function profileProbesFrom(o: ProfileCliOptions, context: { sweep?: boolean } = {}): RunProbe[] {
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
