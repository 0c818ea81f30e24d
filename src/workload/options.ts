import { UsageError } from '../cli/errors.ts';
import type { OptionSpec } from './types.ts';

/** `--table-size` and `--table_size` are the same option, as in sysbench. */
export function normalizeOptionName(name: string): string {
  return name.replace(/^-+/, '').replace(/-/g, '_');
}

const TRUE = new Set(['on', 'true', 'yes', '1']);
const FALSE = new Set(['off', 'false', 'no', '0']);

/**
 * Parse raw option values (strings from the command line, or booleans for bare flags) against a workload's
 * option specs, filling defaults. Unknown options and bad values are usage errors naming the option.
 */
export function parseWorkloadOptions(
  workload: string,
  specs: Record<string, OptionSpec> | undefined,
  raw: Record<string, string | boolean>,
): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  const s = specs ?? {};
  for (const [name, spec] of Object.entries(s)) out[name] = spec.default;
  for (const [rawName, value] of Object.entries(raw)) {
    const name = normalizeOptionName(rawName);
    const spec = s[name];
    if (spec === undefined) {
      const known = Object.keys(s);
      throw new UsageError(
        `unknown option '--${rawName.replace(/^-+/, '')}' for workload ${workload}`,
        known.length > 0
          ? `its options are: ${known.map((k) => `--${k.replace(/_/g, '-')}`).join(', ')}`
          : `${workload} takes no options of its own; see dbsmack run --help`,
      );
    }
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
