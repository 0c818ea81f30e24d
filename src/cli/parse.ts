import { UsageError } from '../errors.ts';

/** Parse a positive integer option value; commander hands us strings. */
export function positiveInt(name: string) {
  return (v: string): number => {
    const n = Number(v);
    if (!/^\d+$/.test(v.trim()) || !Number.isSafeInteger(n) || n < 1) {
      throw new UsageError(`${name} expects a positive integer, got '${v}'`);
    }
    return n;
  };
}

export function nonNegativeInt(name: string) {
  return (v: string): number => {
    const n = Number(v);
    if (!/^\d+$/.test(v.trim()) || !Number.isSafeInteger(n)) {
      throw new UsageError(`${name} expects a non-negative integer, got '${v}'`);
    }
    return n;
  };
}

/** Seconds, fractions allowed (`0.5`), zero allowed where `allowZero`. */
export function seconds(name: string, allowZero = true) {
  return (v: string): number => {
    const n = Number(v);
    if (v.trim() === '' || !Number.isFinite(n) || n < 0 || (!allowZero && n === 0)) {
      throw new UsageError(`${name} expects a number of seconds${allowZero ? '' : ' above 0'}, got '${v}'`);
    }
    return n;
  };
}

/** How a word `--name` after the workload is read: a flag (`on`/`off` may follow), an option with a value, or unknown. */
export type WorkloadOptionKind = 'bool' | 'value' | 'unknown';

/** On/off words a bare boolean option takes as its value (`--prepared off`). */
const BOOL_WORD = /^(on|off|true|false|yes|no|1|0)$/i;
/** A word that is an option, not a value (`-5` is a value). */
const looksLikeOption = (w: string): boolean => w.length > 1 && w.startsWith('-') && !/^-\d/.test(w);

/**
 * Split what follows the workload on the command line into workload options (`--name value`,
 * `--name=value`, bare `--flag` for booleans) and positional arguments (a smack file's $1 $2 …).
 * `kindOf` says what each `--name` is; an unknown one goes to `unknown`, which throws the error that
 * names it. A boolean takes the next word as its value when that is an on/off word, or, for a workload
 * without positional arguments, any word that is not an option (so `--prepared maybe` is refused as a
 * bad value instead of `maybe` becoming a stray argument).
 */
export function splitWorkloadArgs(
  rest: readonly string[],
  kindOf: (name: string) => WorkloadOptionKind,
  o: { positionals: boolean; unknown: (name: string) => never; help?: string },
): { options: Record<string, string | boolean>; args: string[] } {
  const options: Record<string, string | boolean> = {};
  const args: string[] = [];
  for (let i = 0; i < rest.length; i++) {
    const a = rest[i] as string;
    if (a === '--') {
      args.push(...rest.slice(i + 1));
      break;
    }
    if (a.startsWith('--') && a.length > 2) {
      const eq = a.indexOf('=');
      const name = eq > 0 ? a.slice(2, eq) : a.slice(2);
      const kind = kindOf(name);
      if (kind === 'unknown') o.unknown(name);
      if (eq > 0) {
        options[name] = a.slice(eq + 1);
        continue;
      }
      const next = rest[i + 1];
      if (kind === 'bool') {
        if (next !== undefined && (BOOL_WORD.test(next) || (!o.positionals && !looksLikeOption(next)))) {
          options[name] = next;
          i++;
        } else {
          options[name] = true;
        }
      } else {
        if (next === undefined || looksLikeOption(next)) {
          throw new UsageError(`option '--${name}' needs a value`, `--${name} VALUE, or --${name}=VALUE`);
        }
        options[name] = next;
        i++;
      }
    } else if (looksLikeOption(a)) {
      throw new UsageError(`unknown option '${a}'`, o.help ?? 'see dbsmack run --help');
    } else {
      args.push(a);
    }
  }
  return { options, args };
}
