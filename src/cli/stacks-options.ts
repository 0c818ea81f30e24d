/**
 * The command-line side of `--profile-stacks`, `--stacks-window`, `--stacks-out` and `--count-calls` (on every
 * command that runs workloads, through profile-options.ts): the options, their checks, and the CodeProbe
 * they ask for.
 */
import { accessSync, constants } from 'node:fs';
import path from 'node:path';
import { Option } from '@commander-js/extra-typings';
import type { RunProbe } from '../engine/run-once.ts';
import { UsageError } from '../errors.ts';
import { CodeProbe, DEFAULT_WINDOW_S } from '../probe/code-probe.ts';
import { FUNCTION_NAME } from '../probe/uprobes.ts';

/** What the options parse into (a subset of a command's options). */
export interface StacksCliOptions {
  profileStacks?: boolean;
  stacksWindow?: number;
  stacksOut?: string;
  countCalls?: string[];
}

const MAX_WINDOW_S = 600;
const MAX_FUNCTIONS = 32;

function windowValue(v: string): number {
  const n = Number(v);
  if (v.trim() === '' || !Number.isFinite(n) || n <= 0 || n > MAX_WINDOW_S) {
    throw new UsageError(`--stacks-window expects seconds above 0 and up to ${MAX_WINDOW_S}, got '${v}'`);
  }
  return n;
}

function functionList(v: string): string[] {
  const names = [
    ...new Set(
      v
        .split(',')
        .map((s) => s.trim())
        .filter(Boolean),
    ),
  ];
  if (names.length === 0)
    throw new UsageError('--count-calls expects function names, e.g. open_table,JOIN::exec');
  const bad = names.find((n) => !FUNCTION_NAME.test(n));
  if (bad !== undefined)
    throw new UsageError(
      `--count-calls: '${bad}' is not a function name`,
      'name C functions (open_table) or C++ ones with their class (JOIN::exec), separated by commas',
    );
  if (names.length > MAX_FUNCTIONS)
    throw new UsageError(`--count-calls takes at most ${MAX_FUNCTIONS} functions, got ${names.length}`);
  return names;
}

export function stacksOptions(): Option[] {
  return [
    new Option(
      '--profile-stacks',
      "record the server threads' context switches with their stacks (Linux perf) for a window of the measured part: functions they were preempted and blocked in, off-CPU time, lock waits by caller",
    ),
    new Option(
      '--stacks-window <s>',
      `seconds of the window of --profile-stacks and --count-calls, centred in the measured part (default ${DEFAULT_WINDOW_S})`,
    ).argParser(windowValue),
    new Option(
      '--stacks-out <file>',
      "with --profile-stacks: write the window's stacks in the folded format of FlameGraph and speedscope (and their off-CPU time to FILE.off-cpu)",
    ),
    new Option(
      '--count-calls <functions>',
      'count calls of these server functions during the window with uprobes (root), e.g. open_table,JOIN::exec',
    ).argParser(functionList),
  ] as unknown as Option[];
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
