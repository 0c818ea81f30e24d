/** `dbsmack history`: what was recorded, newest first (`dbsmack show ID` prints one of them: show.ts). */
import type { Command } from '@commander-js/extra-typings';
import { Option } from '@commander-js/extra-typings';
import { EXIT } from '../errors.ts';
import { renderHistoryList } from '../report/history-text.ts';
import { DocumentReader } from '../store/documents.ts';
import type { ExitSink } from './command.ts';
import { checkTextOrJson, readHistoryOption } from './history-options.ts';
import { positiveInt } from './parse.ts';

export interface HistoryListOptions {
  label?: string;
  workload?: string;
  kind?: 'run' | 'sweep';
  all?: boolean;
  limit: number;
  format: string;
  history?: string;
}

/** `history`'s action: the list on stdout; its exit code. */
export function historyAction(o: HistoryListOptions): number {
  checkTextOrJson(o.format);
  const reader = new DocumentReader(o.history);
  try {
    const entries = reader.history().list({
      ...(o.label !== undefined ? { label: o.label } : {}),
      ...(o.workload !== undefined ? { workload: o.workload } : {}),
      ...(o.kind !== undefined ? { kind: o.kind } : {}),
      sweepRuns: o.all === true || o.kind === 'run',
      limit: o.limit,
    });
    process.stdout.write(
      o.format === 'json' ? `${JSON.stringify(entries, null, 2)}\n` : renderHistoryList(entries),
    );
  } finally {
    reader.close();
  }
  return EXIT.ok;
}

/** Define `history` on the program; its action hands its exit code to `exit`. */
export function registerHistory(program: Command, exit: ExitSink): void {
  program
    .command('history')
    .description('list recorded runs and sweeps, newest first')
    .option('--label <name>', 'only this label')
    .option('--workload <name>', 'only this workload')
    .addOption(new Option('--kind <kind>', 'only runs or only sweeps').choices(['run', 'sweep'] as const))
    .option('--all', 'also list the runs that belong to sweeps')
    .option('-n, --limit <n>', 'at most N entries', positiveInt('--limit'), 50)
    .option('--format <fmt>', 'text or json', 'text')
    .addOption(readHistoryOption())
    .option('--debug', 'print stack traces of errors')
    .action((o) => exit(historyAction(o)));
}
