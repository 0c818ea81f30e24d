/** `dbsmack gen-data -n N -f FORMAT`: super-smack's data generator, built in. */
import type { Command } from '@commander-js/extra-typings';
import { EXIT, UsageError } from '../errors.ts';
import { GenDataFormatError, writeGenData } from '../workload/smack/gen-data.ts';
import type { ExitSink } from './command.ts';
import { checkOutputFile, fsReason, isSystemError, OutputError, openOutputStream } from './output.ts';
import { nonNegativeInt, positiveInt } from './parse.ts';

/** Define `gen-data` on the program; its action hands its exit code to `exit`. */
export function registerGenData(program: Command, exit: ExitSink): void {
  program
    .command('gen-data')
    .description(
      'write N comma-separated rows from a super-smack gen-data format to stdout (or -o FILE), e.g. -n 90000 -f %12-12s%n,%25-25s,%n,%d',
    )
    // Required, but checked in the action: commander checks required options before unknown ones, and
    // `gen-data --bogus` must say that --bogus is unknown.
    .option('-n, --num-rows <n>', 'number of rows (required)', positiveInt('--num-rows'))
    .option(
      '-f, --format <fmt>',
      'row format (required): %Ns N random letters (%M-Ns M to N), %d random integer, %n row number, %% a percent sign',
    )
    .option('-o, --out <file>', 'write to FILE instead of stdout')
    .option('--seed <n>', 'seed of the generator (same seed, same rows)', nonNegativeInt('--seed'), 1)
    .action(async (o) => exit(await genDataAction(o)));
}

/** `gen-data`'s action: the rows on stdout or in `-o FILE`; its exit code. */
export async function genDataAction(o: {
  numRows?: number;
  format?: string;
  out?: string;
  seed: number;
}): Promise<number> {
  if (o.numRows === undefined)
    throw new UsageError(
      "required option '-n, --num-rows <n>' not specified",
      'dbsmack gen-data -n N -f FORMAT',
    );
  if (o.format === undefined)
    throw new UsageError(
      "required option '-f, --format <fmt>' not specified",
      'dbsmack gen-data -n N -f FORMAT',
    );
  // A bad -o fails before any row is made; the file appears whole or not at all.
  if (o.out !== undefined) checkOutputFile(o.out, '-o');
  const file = o.out !== undefined ? openOutputStream(o.out) : undefined;
  try {
    await writeGenData(o.numRows, o.format, file?.stream ?? process.stdout, o.seed);
    await file?.commit();
  } catch (e) {
    file?.abort();
    if (e instanceof GenDataFormatError) throw new UsageError(`gen-data: ${e.message}`);
    // stdout closed by its reader (`| head`): stop quietly, as other generators do
    if (o.out === undefined && (e as NodeJS.ErrnoException).code === 'EPIPE') return EXIT.ok;
    if (o.out !== undefined && !(e instanceof OutputError) && isSystemError(e))
      throw new OutputError(o.out, fsReason(e));
    throw e;
  }
  return EXIT.ok;
}
