import { UsageError } from '../errors.ts';
import type { OptionSpec } from './types.ts';

/** `--table-size` and `--table_size` are the same option, as in sysbench. */
export function normalizeOptionName(name: string): string {
  return name.replace(/^-+/, '').replace(/-/g, '_');
}

const TRUE = new Set(['on', 'true', 'yes', '1']);
const FALSE = new Set(['off', 'false', 'no', '0']);

/** Where workload options were given, for error messages that point at the right help. */
export interface OptionContext {
  /** The command (`run`, `prepare`, `cleanup`, `sweep`). */
  command: string;
  /** The WORKLOAD argument as typed (`oltp_read_write`, `./kv.ts`). */
  workloadArg: string;
  /** The command's own long options (`--clients`, `--time` …): an unknown word may be a typo of one. */
  commandOptions: readonly string[];
}

/** Edit distance with adjacent transpositions (`clinets` → `clients` is 1). */
function distance(a: string, b: string): number {
  const d: number[][] = Array.from({ length: a.length + 1 }, (_, i) =>
    Array.from({ length: b.length + 1 }, (_, j) => (i === 0 ? j : j === 0 ? i : 0)),
  );
  for (let i = 1; i <= a.length; i++) {
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      let v = Math.min(d[i - 1]![j]! + 1, d[i]![j - 1]! + 1, d[i - 1]![j - 1]! + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1])
        v = Math.min(v, d[i - 2]![j - 2]! + 1);
      d[i]![j] = v;
    }
  }
  return d[a.length]![b.length]!;
}

/**
 * The known options nearest to an unknown one (`--clinets` → `--clients`): at most two edits away and
 * sharing more than 40% of the word, as commander suggests for the commands it knows whole. Dashes and
 * underscores are the same (`--table_size` is `--table-size`).
 */
export function nearestOptions(unknown: string, known: readonly string[]): string[] {
  const norm = (s: string): string => s.replace(/^-+/, '').replace(/_/g, '-').toLowerCase();
  const word = norm(unknown);
  let best = 3;
  let out: string[] = [];
  for (const k of new Set(known)) {
    const d = distance(word, norm(k));
    if (d > 2 || (word.length - d) / word.length <= 0.4 || d > best) continue;
    if (d < best) {
      best = d;
      out = [];
    }
    out.push(k);
  }
  return out;
}

/** `--table-size` for the spec named `table_size`. */
export const optionFlag = (name: string): string => `--${name.replace(/_/g, '-')}`;

/**
 * The error for an option that neither the command nor the workload has: says so, with the nearest known
 * option of either when the word looks like a typo of one, and where both lists of options are.
 */
export function unknownOptionError(
  rawName: string,
  workload: string,
  specs: Record<string, OptionSpec> | undefined,
  ctx?: OptionContext,
): UsageError {
  const flag = `--${rawName.replace(/^-+/, '')}`;
  const own = Object.keys(specs ?? {}).map(optionFlag);
  const near = nearestOptions(flag, [...own, ...(ctx?.commandOptions ?? [])]);
  if (ctx === undefined) {
    return new UsageError(
      `unknown option '${flag}' for workload ${workload}${near.length > 0 ? ` (did you mean ${near.join(' or ')}?)` : ''}`,
      own.length > 0 ? `its options are: ${own.join(', ')}` : `${workload} takes no options of its own`,
    );
  }
  const whose =
    own.length > 0 ? `dbsmack ${ctx.command} ${ctx.workloadArg} --help for the options of ${workload}, ` : '';
  return new UsageError(
    near.length > 0
      ? `unknown option '${flag}' (did you mean ${near.join(' or ')}?)`
      : `unknown option '${flag}': neither ${ctx.command} nor ${workload} has it`,
    `see ${whose}dbsmack ${ctx.command} --help for the options of ${ctx.command}${own.length === 0 ? ` (${workload} has none of its own)` : ''}`,
  );
}

/**
 * Parse raw option values (strings from the command line, or booleans for bare flags) against a workload's
 * option specs, filling defaults. Unknown options and bad values are usage errors naming the option.
 */
export function parseWorkloadOptions(
  workload: string,
  specs: Record<string, OptionSpec> | undefined,
  raw: Record<string, string | boolean>,
  ctx?: OptionContext,
): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  const s = specs ?? {};
  for (const [name, spec] of Object.entries(s)) out[name] = spec.default;
  for (const [rawName, value] of Object.entries(raw)) {
    const name = normalizeOptionName(rawName);
    const spec = s[name];
    if (spec === undefined) throw unknownOptionError(rawName, workload, specs, ctx);
    out[name] = convert(name, spec, value);
  }
  return out;
}

function convert(name: string, spec: OptionSpec, value: string | boolean): unknown {
  const flag = `--${name.replace(/_/g, '-')}`;
  switch (spec.type) {
    case 'bool': {
      if (typeof value === 'boolean') return value;
      const v = value.toLowerCase();
      if (TRUE.has(v)) return true;
      if (FALSE.has(v)) return false;
      throw new UsageError(`${flag} expects on or off, got '${value}'`);
    }
    case 'int':
    case 'number': {
      if (typeof value === 'boolean') throw new UsageError(`${flag} needs a value`);
      const n = Number(value);
      if (value.trim() === '' || !Number.isFinite(n) || (spec.type === 'int' && !Number.isInteger(n))) {
        throw new UsageError(
          `${flag} expects ${spec.type === 'int' ? 'an integer' : 'a number'}, got '${value}'`,
        );
      }
      if (spec.min !== undefined && n < spec.min) {
        throw new UsageError(`${flag} must be at least ${spec.min}, got '${value}'`);
      }
      if (spec.max !== undefined && n > spec.max) {
        throw new UsageError(`${flag} must be at most ${spec.max}, got '${value}'`);
      }
      return n;
    }
    case 'string': {
      if (typeof value === 'boolean') throw new UsageError(`${flag} needs a value`);
      if (spec.choices && !spec.choices.includes(value)) {
        throw new UsageError(`${flag} must be one of ${spec.choices.join(', ')}, got '${value}'`);
      }
      return value;
    }
  }
}
