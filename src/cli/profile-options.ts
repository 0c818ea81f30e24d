/**
 * The command-line side of `--profile` and the scheduling experiments, shared by every command that runs
 * workloads (`run`, `sweep`): `addProfileOptions(cmd)` declares the options; run/probes.ts
 * `profileProbesFrom(options)` turns them into the RunProbes to hand to `runOnce`.
 */
import { Option } from '@commander-js/extra-typings';
import { UsageError } from '../errors.ts';
import { expandCpuList, POLICIES } from '../probe/server-sched.ts';
import { helpDefault } from './help.ts';
import { positiveInt } from './parse.ts';
import { stacksOptions } from './stacks-options.ts';

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
 * `ProbeOptions` fields (run/probes.ts); pass those to `profileProbesFrom`.
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
