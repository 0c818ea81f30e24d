/**
 * `--help` of the commands that take a WORKLOAD (run, prepare, cleanup, sweep). They declare their own
 * `-h, --help` instead of commander's, so that the action sees the workload and can add its options (with
 * their defaults; a smack file's `$1 $2 …`) to the command's help.
 */
import { type CommandUnknownOpts, Option } from '@commander-js/extra-typings';
import { UsageError } from '../errors.ts';
import { loadWorkload, resolveWorkloadArg } from '../workload/registry.ts';
import type { Workload } from '../workload/types.ts';
import { workloadHelp } from './help.ts';

/** The help option of a command that takes a WORKLOAD. */
export function helpFlag(): Option<'-h, --help'> {
  return new Option('-h, --help', "display help for command (after WORKLOAD: the workload's options too)");
}

/** The long options of a command, for "did you mean …?" when an unknown word after the workload is a typo. */
export const longOptions = (cmd: CommandUnknownOpts): string[] =>
  cmd.options.flatMap((o) => (o.long !== undefined ? [o.long] : []));

/** The workload as its help shows it: option specs and positionals, no arguments needed. */
export function loadWorkloadForHelp(arg: string): Promise<Workload> {
  return loadWorkload({ ref: resolveWorkloadArg(arg), rawOptions: {}, args: [], argsOptional: true });
}

/**
 * With `--help`: print the command's help and, after a WORKLOAD, the workload's own; returns true. Without
 * it, a missing WORKLOAD is the usage error commander would give for a required argument.
 */
export async function workloadCommandHelp(
  cmd: CommandUnknownOpts,
  workload: string | undefined,
  help: boolean | undefined,
): Promise<boolean> {
  if (help) {
    process.stdout.write(cmd.helpInformation());
    if (workload !== undefined) {
      const w = await loadWorkloadForHelp(workload);
      process.stdout.write(`\n${workloadHelp(cmd.name(), workload, w, true)}`);
    }
    return true;
  }
  if (workload === undefined) {
    throw new UsageError("missing required argument 'workload'", `see dbsmack ${cmd.name()} --help`);
  }
  return false;
}
