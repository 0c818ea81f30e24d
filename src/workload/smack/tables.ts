/**
 * The `table` blocks: make sure each table exists with at least `min_rows` rows; otherwise drop it,
 * re-create it and load its data file, generating that file first when it is missing. A table that passes
 * the check is left alone, as in the original.
 */
import { spawnSync } from 'node:child_process';
import { closeSync, existsSync, openSync, renameSync } from 'node:fs';
import type { Connection } from '../../driver/types.ts';
import { dataPath } from './dictionary.ts';
import { SmackError } from './errors.ts';
import { GenDataFormatError, writeGenData } from './gen-data.ts';
import { DataFileError, loadDataFile } from './loader.ts';
import type { TableDef } from './model.ts';

export interface TableEnv {
  /** Opens another connection like the table's, for loading in parallel. */
  open(): Promise<Connection>;
  file: string;
  datadir: string;
  allowShell: boolean;
  log(m: string): void;
}

/** Split a command line the way a shell would for simple cases: whitespace, '…' and "…". */
export function splitCommand(cmd: string): string[] {
  const out: string[] = [];
  let cur: string | undefined;
  let q: string | undefined;
  for (const c of cmd) {
    if (q) {
      if (c === q) q = undefined;
      else cur = (cur ?? '') + c;
    } else if (c === '"' || c === "'") {
      q = c;
      cur = cur ?? '';
    } else if (/\s/.test(c)) {
      if (cur !== undefined) out.push(cur);
      cur = undefined;
    } else cur = (cur ?? '') + c;
  }
  if (cur !== undefined) out.push(cur);
  return out;
}

/** `gen-data -n N -f FMT` (also `dbsmack gen-data …`), or undefined when the command is something else. */
export function parseGenDataCommand(cmd: string): { rows: number; format: string } | undefined {
  const argv = splitCommand(cmd);
  let i = 0;
  if (argv[0] !== undefined && /(^|\/)dbsmack$/.test(argv[0])) i++;
  if (argv[i] === undefined || !/(^|\/)gen-data$/.test(argv[i] as string)) return undefined;
  let rows: number | undefined;
  let format: string | undefined;
  for (i++; i < argv.length; i++) {
    const a = argv[i] as string;
    const v = argv[i + 1];
    if (a === '-n' || a === '--num-rows') {
      rows = Number(v);
      i++;
    } else if (a.startsWith('--num-rows=')) rows = Number(a.slice(11));
    else if (a === '-f' || a === '--format') {
      format = v;
      i++;
    } else if (a.startsWith('--format=')) format = a.slice(9);
    else return undefined;
  }
  if (rows === undefined || !Number.isInteger(rows) || rows < 1 || format === undefined) return undefined;
  return { rows, format };
}

function refuseShell(t: TableDef, target: string, env: TableEnv): void {
  const cmd = t.genDataFile as string;
  if (parseGenDataCommand(cmd) !== undefined || env.allowShell) return;
  throw new SmackError(
    env.file,
    t.genDataFilePos ?? t.pos,
    `gen_data_file runs a shell command ('${cmd}'), and shell commands run only with --allow-shell`,
    `only "gen-data -n N -f FORMAT" runs without it (dbsmack's own generator); or create ${target} yourself`,
  );
}

async function generate(t: TableDef, target: string, env: TableEnv): Promise<void> {
  const cmd = t.genDataFile as string;
  const pos = t.genDataFilePos ?? t.pos;
  const tmp = `${target}.tmp-${process.pid}`;
  const gd = parseGenDataCommand(cmd);
  refuseShell(t, target, env);
  if (gd) {
    env.log(`Populating data file '${target}' with dbsmack's built-in gen-data (${gd.rows} rows)`);
    try {
      await writeGenData(gd.rows, gd.format, tmp);
    } catch (e) {
      if (e instanceof GenDataFormatError) throw new SmackError(env.file, pos, `gen_data_file: ${e.message}`);
      throw e;
    }
  } else {
    env.log(`Populating data file '${target}' with shell command '${cmd}'`);
    const fd = openSync(tmp, 'w');
    try {
      const r = spawnSync('/bin/sh', ['-c', cmd], { stdio: ['ignore', fd, 'inherit'], cwd: env.datadir });
      if (r.status !== 0) {
        throw new SmackError(
          env.file,
          pos,
          `gen_data_file command failed (${r.error ? r.error.message : `exit status ${r.status ?? r.signal}`}): ${cmd}`,
        );
      }
    } finally {
      closeSync(fd);
    }
  }
  // Written aside and renamed, so that an interrupted generation never leaves a short file behind.
  renameSync(tmp, target);
}

async function countRows(conn: Connection, table: string): Promise<number | undefined> {
  try {
    const rows = await conn.all(`select count(*) as n from ${table}`);
    const r = rows[0] ?? {};
    return Number(Object.values(r)[0]);
  } catch {
    return undefined;
  }
}

/** Check, and if needed create and load, one table. */
export async function prepareTable(conn: Connection, t: TableDef, env: TableEnv): Promise<void> {
  const n = await countRows(conn, t.name);
  if (n !== undefined && n >= t.minRows) return;
  if (n !== undefined) {
    env.log(`Table '${t.name}' has ${n} rows, fewer than min_rows ${t.minRows}: dropping it`);
    await conn.query(`drop table ${t.name}`);
  }
  if (t.create === undefined) {
    throw new SmackError(env.file, t.pos, `table "${t.name}" needs creating but has no create statement`);
  }
  const file = t.dataFile === undefined ? undefined : dataPath(env.datadir, t.dataFile);
  // Refused before anything changes, so that a refused command leaves no empty table behind.
  if (file !== undefined && !existsSync(file) && t.genDataFile !== undefined) refuseShell(t, file, env);
  env.log(`Creating table '${t.name}'`);
  await conn.query(t.create);
  if (file === undefined) return;
  if (!existsSync(file)) {
    if (t.genDataFile === undefined) {
      throw new SmackError(
        env.file,
        t.dataFilePos ?? t.pos,
        `data file ${file} does not exist and table "${t.name}" has no gen_data_file`,
        'create the file, or add gen_data_file "gen-data -n ROWS -f FORMAT";',
      );
    }
    await generate(t, file, env);
  }
  const t0 = performance.now();
  let rows: number;
  try {
    rows = await loadDataFile(conn, t.name, file, env.open);
  } catch (e) {
    if (e instanceof DataFileError) throw new SmackError(env.file, t.dataFilePos ?? t.pos, e.message);
    // the data file is unreadable (a directory, no permission): the user's to fix, not a bug
    const code = (e as NodeJS.ErrnoException).code;
    if (typeof code === 'string' && /^E[A-Z]+$/.test(code)) {
      throw new SmackError(env.file, t.dataFilePos ?? t.pos, `cannot read the data file ${file}: ${code}`);
    }
    throw e;
  }
  const s = (performance.now() - t0) / 1000;
  env.log(
    `Table ${t.name} is now ready for the test: ${rows} rows loaded client-side in ${s.toFixed(2)} s (${Math.round(rows / Math.max(s, 1e-6))} rows/s)`,
  );
}
