/** `dbsmack history` (list what was recorded) and `dbsmack show ID` (one run or sweep). */
import type { Command } from '@commander-js/extra-typings';
import { Option } from '@commander-js/extra-typings';
import { EXIT, UsageError } from '../errors.ts';
import { renderHistoryList, renderSettings } from '../report/history-text.ts';
import { renderSweepText } from '../report/sweep-text.ts';
import { renderRunText } from '../report/text.ts';
import { DocumentReader } from '../store/documents.ts';
import { HISTORY_DEFAULT, helpDefault } from './help.ts';
import { positiveInt } from './parse.ts';

function checkFormat(f: string): void {
  if (f !== 'text' && f !== 'json') throw new UsageError(`unknown format '${f}'`, 'formats: text, json');
}

/** Register `history` and `show` on the program. */
export function registerHistory(program: Command, setExit: (code: number) => void): void {
  const historyOpt = (): Option<'--history <path>'> =>
    helpDefault(new Option('--history <path>', 'history database'), HISTORY_DEFAULT);
  program
    .command('history')
    .description('list recorded runs and sweeps, newest first')
    .option('--label <name>', 'only this label')
    .option('--workload <name>', 'only this workload')
    .addOption(new Option('--kind <kind>', 'only runs or only sweeps').choices(['run', 'sweep'] as const))
    .option('--all', 'also list the runs that belong to sweeps')
    .option('-n, --limit <n>', 'at most N entries', positiveInt('--limit'), 50)
    .option('--format <fmt>', 'text or json', 'text')
    .addOption(historyOpt())
    .option('--debug', 'print stack traces of errors')
    .action((o) => {
      checkFormat(o.format);
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
      setExit(EXIT.ok);
    });

  program
    .command('show')
    .description('print one recorded run or sweep')
    .argument('<id>', 'id from dbsmack history')
    .option('--format <fmt>', 'text or json (the stored RunResult or sweep document)', 'text')
    .addOption(historyOpt())
    .option('--debug', 'print stack traces of errors')
    .action((idArg, o) => {
      checkFormat(o.format);
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
            const s = doc;
            process.stdout.write(
              head + renderSweepText(s, id) + renderSettings(undefined, s.server_settings),
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
      setExit(EXIT.ok);
    });
}
