/** `dbsmack list`: the built-in workloads, one a line, with what each does. */
import type { Command } from '@commander-js/extra-typings';
import { EXIT } from '../errors.ts';
import { builtinNames } from '../workload/registry.ts';
import type { ExitSink } from './command.ts';

/** `list`'s action: the table on stdout; its exit code. */
export function listAction(): number {
  for (const w of builtinNames()) process.stdout.write(`${w.name.padEnd(24)} ${w.description}\n`);
  return EXIT.ok;
}

/** Define `list` on the program; its action hands its exit code to `exit`. */
export function registerList(program: Command, exit: ExitSink): void {
  program
    .command('list')
    .description('list the built-in workloads')
    .action(() => exit(listAction()));
}
