/**
 * super-smack's own options (`-d`, `-D`) and dbsmack's `--allow-shell` are options of the smack workload
 * (so that every worker sees them); the CLI passes them on as workload options.
 */
import { Option } from '@commander-js/extra-typings';
import { UsageError } from '../errors.ts';
import { helpDefault } from './help.ts';

export interface SmackCliOptions {
  dbType?: string;
  datadir?: string;
  allowShell?: boolean;
}

export const dbTypeOption = (): Option<'-d, --db-type <type>', undefined, undefined, string> =>
  helpDefault(
    new Option(
      '-d, --db-type <type>',
      'smack files: back-end of the client blocks when --db is not given',
    ).choices(['sqlite', 'mysql', 'pg']),
    'sqlite',
  ) as unknown as Option<'-d, --db-type <type>', undefined, undefined, string>;

/** `-D DIR`: where a smack file's relative data, dictionary and result files are. */
export const datadirOption = (): Option<'-D, --datadir <dir>'> =>
  helpDefault(
    new Option('-D, --datadir <dir>', 'smack files: directory of data and dictionary files'),
    '~/.cache/dbsmack',
  );

/** Workload options to append to the workload's arguments. */
export function smackWorkloadArgs(workload: string, o: SmackCliOptions): string[] {
  const out: string[] = [];
  if (o.dbType !== undefined) out.push('--db-type', o.dbType);
  if (o.datadir !== undefined) out.push('--datadir', o.datadir);
  if (o.allowShell) out.push('--allow-shell', 'on');
  if (out.length > 0 && !(workload === '-' || workload.endsWith('.smack'))) {
    throw new UsageError('-d, -D and --allow-shell apply to .smack files only');
  }
  return out;
}
