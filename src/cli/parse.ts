import { UsageError } from './errors.ts';

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

/**
 * Split what follows the workload on the command line into workload options (`--name value`,
 * `--name=value`, bare `--flag` for booleans) and positional arguments (a smack file's $1 $2 …).
 */
export function splitWorkloadArgs(
  rest: readonly string[],
  isBool: (name: string) => boolean,
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
      if (eq > 0) {
        options[a.slice(2, eq)] = a.slice(eq + 1);
      } else {
        const name = a.slice(2);
        const next = rest[i + 1];
        if (isBool(name)) {
          if (next !== undefined && /^(on|off|true|false|yes|no)$/i.test(next)) {
            options[name] = next;
            i++;
          } else {
            options[name] = true;
          }
        } else {
          if (next === undefined) throw new UsageError(`option '--${name}' needs a value`);
          options[name] = next;
          i++;
        }
      }
    } else if (a.startsWith('-') && a.length > 1 && !/^-\d/.test(a)) {
      throw new UsageError(`unknown option '${a}'`, 'see dbsmack run --help');
    } else {
      args.push(a);
    }
  }
  return { options, args };
}
