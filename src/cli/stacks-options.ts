import { Option } from '@commander-js/extra-typings';
import { UsageError } from '../errors.ts';
import { DEFAULT_WINDOW_S } from '../probe/code-probe.ts';
import { FUNCTION_NAME } from '../probe/uprobes.ts';

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
