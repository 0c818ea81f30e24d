/** `dbsmack gen-data -n N -f FORMAT`: super-smack's data generator, built in. */
import type { Command } from '@commander-js/extra-typings';
import { GenDataFormatError, writeGenData } from '../workload/smack/gen-data.ts';
import { UsageError } from './errors.ts';
import { nonNegativeInt, positiveInt } from './parse.ts';

export function registerGenData(program: Command): void {
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
    .action(async (o) => {
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
      try {
        await writeGenData(o.numRows, o.format, o.out ?? process.stdout, o.seed);
      } catch (e) {
        if (e instanceof GenDataFormatError) throw new UsageError(`gen-data: ${e.message}`);
        throw e;
      }
    });
}
