/**
 * The command line of a bench script: node's parseArgs, plus `--help` (prints the script's head comment,
 * which is where each script's usage is written) and an unknown or malformed option reported in one line
 * with a pointer to `--help`, exit status 2, instead of a stack trace.
 */
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { type ParseArgsConfig, parseArgs } from 'node:util';

/** The first block comment of a file, without its markers and leading stars. */
export function headComment(file: string): string {
  const m = /\/\*\*?([\s\S]*?)\*\//.exec(readFileSync(file, 'utf8'));
  if (m === null) return '';
  return `${(m[1] ?? '')
    .split('\n')
    .map((l) => l.replace(/^\s*\* ?/, ''))
    .join('\n')
    .trim()}\n`;
}

/** parseArgs for the script at `url` (its import.meta.url). */
export function benchArgs<T extends ParseArgsConfig>(
  url: string,
  config: T,
): ReturnType<typeof parseArgs<T>> {
  const file = fileURLToPath(url);
  const argv = process.argv.slice(2);
  if (argv.includes('--help') || argv.includes('-h')) {
    process.stdout.write(headComment(file));
    process.exit(0);
  }
  try {
    return parseArgs(config);
  } catch (e) {
    process.stderr.write(`${file}: ${(e as Error).message} (--help shows the usage)\n`);
    process.exit(2);
  }
}

/**
 * The names of a comma-separated `--only` (or like) list, each one of `known`; a name that is not is reported
 * in one line, exit status 2, as an unknown option is (a typo would otherwise run nothing and say nothing).
 */
export function namesOf(url: string, option: string, value: string, known: readonly string[]): Set<string> {
  const names = value
    .split(',')
    .map((s) => s.trim())
    .filter((s) => s !== '');
  const unknown = names.filter((s) => !known.includes(s));
  if (unknown.length > 0) {
    process.stderr.write(
      `${fileURLToPath(url)}: --${option} ${unknown.join(',')}: not one of ${known.join(', ')} (--help shows the usage)\n`,
    );
    process.exit(2);
  }
  return new Set(names);
}

/**
 * A positive integer option (`--repeat`, `--time`), or with `list` a comma-separated list of them
 * (`--clients`); anything else is reported in one line, exit status 2, as an unknown option is (`--repeat x`
 * used to run every warm-up and then print rows of NaN).
 */
export function positivesOf(url: string, option: string, value: string, list = false): number[] {
  const parts = value.split(',').map((s) => s.trim());
  if ((!list && parts.length > 1) || parts.some((s) => !/^[1-9][0-9]*$/.test(s))) {
    const what = list ? 'a positive integer or a comma-separated list of them' : 'a positive integer';
    process.stderr.write(
      `${fileURLToPath(url)}: --${option} ${JSON.stringify(value)}: expected ${what} (--help shows the usage)\n`,
    );
    process.exit(2);
  }
  return parts.map(Number);
}

/** `positivesOf` for an option of one value: the number itself. */
export function positiveOf(url: string, option: string, value: string): number {
  return positivesOf(url, option, value)[0] as number;
}

/** `positiveOf` reading the option from a script's parsed `values` by its name. */
export function positiveIn(url: string, values: object): (option: string) => number {
  return (option) => positiveOf(url, option, (values as Record<string, unknown>)[option] as string);
}
