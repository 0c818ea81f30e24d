/**
 * `dbsmack prepare WORKLOAD` and `dbsmack cleanup WORKLOAD`: one command in two words, as sysbench has
 * them (the same options; the workload's `prepare` or `cleanup` runs on the set-up connections).
 */
import type { Command, CommandUnknownOpts } from '@commander-js/extra-typings';
import { Option } from '@commander-js/extra-typings';
import type { Target } from '../driver/types.ts';
import { withAdminContext } from '../engine/admin.ts';
import { EXIT } from '../errors.ts';
import { targetFor } from '../run/plan.ts';
import { adminError } from '../run/run-errors.ts';
import type { WorkloadRef } from '../workload/types.ts';
import { dbOption, type ExitSink } from './command.ts';
import { helpDefault, workloadHelp } from './help.ts';
import { say } from './output.ts';
import { positiveInt, seconds } from './parse.ts';
import { resolveWorkload, type TargetOptions, type WorkloadCommand } from './run.ts';
import { datadirOption, dbTypeOption, type SmackCliOptions, smackWorkloadArgs } from './smack-options.ts';
import { addSysbenchDbOptions, type SysbenchDbOptions, sysbenchDbUrl } from './sysbench-options.ts';
import { helpFlag, longOptions, workloadCommandHelp } from './workload-help.ts';

/**
 * The command line of `command` for this workload with the options it was given (the URL redacted), for
 * hints such as "drop them first with `dbsmack cleanup …`".
 */
export function commandLine(
  command: string,
  arg: string,
  ref: WorkloadRef,
  target: Target | undefined,
): string {
  const words = ['dbsmack', command, arg];
  if (target !== undefined) words.push('--db', target.redactedUrl);
  for (const [name, v] of Object.entries(ref.rawOptions)) {
    words.push(`--${name.replace(/_/g, '-')}`);
    if (v !== true) words.push(String(v));
  }
  return words.join(' ');
}

export interface AdminOptions extends TargetOptions {
  threads?: number;
}

/** `dbsmack prepare|cleanup WORKLOAD`. */
export async function adminCommand(
  what: 'prepare' | 'cleanup',
  arg: string,
  rest: readonly string[],
  o: AdminOptions,
  command: WorkloadCommand = { name: what, options: [], argsOptional: true },
): Promise<number> {
  const { workload, options, ref, help } = await resolveWorkload(arg, rest, command);
  if (help) {
    process.stdout.write(workloadHelp(what, arg, workload));
    return EXIT.ok;
  }
  const target = targetFor(o, workload);
  const fn = workload[what];
  if (fn === undefined) {
    say(`dbsmack: ${workload.name} has nothing to ${what}`);
    return EXIT.ok;
  }
  const t0 = Date.now();
  await withAdminContext(
    target,
    options,
    o.threads ?? 1,
    o.connectTimeout * 1000,
    say,
    fn.bind(workload),
    o.dbGiven === true,
  ).catch((e: unknown) =>
    adminError(e, target, {
      action: what,
      ...(what === 'prepare'
        ? { cleanup: commandLine('cleanup', arg, ref, o.dbGiven ? target : undefined) }
        : {}),
    }),
  );
  say(
    `dbsmack: ${what} ${workload.name} on ${target.redactedUrl}: done in ${((Date.now() - t0) / 1000).toFixed(2)} s`,
  );
  return EXIT.ok;
}

/** The action of `prepare` and `cleanup`: the workload's help, or its tables made or dropped; the exit code. */
export async function prepareAction(
  what: 'prepare' | 'cleanup',
  workload: string | undefined,
  o: AdminOptions & SysbenchDbOptions & SmackCliOptions & { help?: boolean },
  cmd: CommandUnknownOpts,
): Promise<number> {
  if (await workloadCommandHelp(cmd, workload, o.help)) return EXIT.ok;
  const sbUrl = cmd.getOptionValueSource('db') === 'default' ? sysbenchDbUrl(o) : undefined;
  return adminCommand(
    what,
    workload as string,
    [...cmd.args.slice(1), ...smackWorkloadArgs(workload as string, o)],
    {
      ...o,
      ...(sbUrl !== undefined ? { db: sbUrl } : {}),
      dbGiven: cmd.getOptionValueSource('db') !== 'default' || sbUrl !== undefined,
    },
    { name: what, options: longOptions(cmd), argsOptional: true },
  );
}

/** Define `prepare` and `cleanup` on the program; their actions hand their exit code to `exit`. */
export function registerPrepare(program: Command, exit: ExitSink): void {
  for (const what of ['prepare', 'cleanup'] as const) {
    const admin = program
      .command(what)
      .description(what === 'prepare' ? "create and load a workload's tables" : "drop a workload's tables")
      .usage('[options] <workload> [args...]')
      .helpOption(false)
      .argument('[workload]', 'built-in workload name or workload file')
      .argument('[args...]', 'workload options (--name value), or help')
      .addOption(dbOption())
      .addOption(
        helpDefault(
          new Option('--threads <n>', 'parallel connections for loading').argParser(positiveInt('--threads')),
          '1',
        ),
      )
      .option(
        '--connect-timeout <s>',
        'give up connecting after S seconds',
        seconds('--connect-timeout', false),
        10,
      )
      .option('--debug', 'print stack traces of errors')
      .addOption(helpFlag())
      .addOption(dbTypeOption())
      .addOption(datadirOption())
      .option('--allow-shell', 'smack files: let gen_data_file run shell commands other than gen-data')
      .allowUnknownOption();
    // --- sysbench options --- (--db-driver/--mysql-*/--pgsql-*)
    addSysbenchDbOptions(admin).action(async (workload, _args, o, cmd) =>
      exit(await prepareAction(what, workload, o, cmd)),
    );
  }
}
