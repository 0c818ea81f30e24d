/** `dbsmack show ID`: one recorded run or sweep (ids from `dbsmack history`), as text or its stored JSON. */
import type { Command } from '@commander-js/extra-typings';
import { EXIT, UsageError } from '../errors.ts';
import { renderSettings } from '../report/history-text.ts';
import { renderSweepText } from '../report/sweep-text.ts';
import { renderRunText } from '../report/text.ts';
import { DocumentReader } from '../store/documents.ts';
import type { ExitSink } from './command.ts';
import { checkTextOrJson, readHistoryOption } from './history-options.ts';

/** `show`'s action: the run or sweep on stdout; its exit code. */
export function showAction(idArg: string, o: { format: string; history?: string }): number {
  checkTextOrJson(o.format);
  if (!/^\d+$/.test(idArg))
    throw new UsageError(`show expects a numeric id, got '${idArg}'`, 'see dbsmack history');
  const id = Number(idArg);
  const reader = new DocumentReader(o.history);
  try {
    const { entry: e, doc } = reader.recorded(id);
    if (o.format === 'json') {
      process.stdout.write(`${JSON.stringify(doc, null, 2)}\n`);
    } else {
      const head = `${e.kind} ${id}${e.label ? ` "${e.label}"` : ''}${e.sweep_id !== null ? ` (repeat ${e.repeat} of sweep ${e.sweep_id})` : ''}, recorded ${e.recorded_at}\n`;
      if ('points' in doc) {
        process.stdout.write(
          head + renderSweepText(doc, id) + renderSettings(undefined, doc.server_settings),
        );
      } else {
        process.stdout.write(
          head + renderRunText(doc) + renderSettings(doc.server?.version, doc.server?.settings),
        );
      }
    }
  } finally {
    reader.close();
  }
  return EXIT.ok;
}

/** Define `show` on the program; its action hands its exit code to `exit`. */
export function registerShow(program: Command, exit: ExitSink): void {
  program
    .command('show')
    .description('print one recorded run or sweep')
    .argument('<id>', 'id from dbsmack history')
    .option('--format <fmt>', 'text or json (the stored RunResult or sweep document)', 'text')
    .addOption(readHistoryOption())
    .option('--debug', 'print stack traces of errors')
    .action((idArg, o) => exit(showAction(idArg, o)));
}
