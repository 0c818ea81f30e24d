/**
 * How `--help` reads: every default in commander's one form, `(default: …)`, also for options whose
 * default is worked out at run time (`--time`: 10 s when no other limit is given), and each workload's own
 * help (`dbsmack run WORKLOAD --help`, sysbench's `dbsmack run WORKLOAD help`) in the same layout.
 */
import { Command, Help, Option } from '@commander-js/extra-typings';
import { builtinNames } from '../workload/registry.ts';
import type { OptionSpec, Workload } from '../workload/types.ts';

/**
 * Help settings for every command. Commander shows `(default: …)` only for a default value it holds; an
 * option whose default is decided later (no value for commander to hold, so that "not given" stays
 * visible) says what it is through `helpDefault`, shown in the same place and form.
 */
export const helpConfig: Partial<Help> = {
  optionDescription(option): string {
    const o = option as Option & { helpDefault?: string };
    const held = o.defaultValue;
    // One way of writing every default: bare, whether commander holds it (`"text"` otherwise) or the
    // option documents one worked out later.
    const text =
      o.defaultValueDescription ??
      (held !== undefined ? (typeof held === 'string' ? held : undefined) : o.helpDefault);
    if (text === undefined) return Help.prototype.optionDescription.call(this, option);
    const shown = Object.create(option, {
      defaultValue: { value: held ?? text },
      defaultValueDescription: { value: text },
    }) as Option;
    return Help.prototype.optionDescription.call(this, shown);
  },
};

/** Where the history is when `--history` is not given. */
export const HISTORY_DEFAULT = '$DBSMACK_HISTORY, else ~/.local/share/dbsmack/history.sqlite';

/** Document a default that commander does not hold (it is decided at run time): `(default: TEXT)`. */
export function helpDefault<O extends Option>(option: O, text: string): O {
  (option as Option & { helpDefault?: string }).helpDefault = text;
  return option;
}

const valueName = (spec: OptionSpec): string =>
  spec.type === 'bool'
    ? '[on|off]'
    : spec.type === 'string'
      ? '<value>'
      : spec.type === 'int'
        ? '<n>'
        : '<x>';

function shownDefault(spec: OptionSpec): string | undefined {
  if (spec.defaultText !== undefined) return spec.defaultText;
  if (spec.default === undefined || spec.default === '') return undefined;
  if (spec.type === 'bool') return spec.default ? 'on' : 'off';
  return String(spec.default);
}

/**
 * The help of one workload: what it is, its positional arguments (a smack file's `$1 $2 …` and where its
 * `main` reads them) and its options with their defaults, in commander's layout. `command` is the command
 * it was asked for (`run`, `prepare` …), whose own options are named at the end.
 */
export function workloadHelp(command: string, arg: string, w: Workload, commandShown = false): string {
  const description = w.description ?? builtinNames().find((b) => b.name === w.name)?.description;
  const args = w.positionals ?? [];
  const specs = Object.entries(w.options ?? {});
  const cmd = new Command(`dbsmack ${command} ${arg}`)
    .helpOption(false)
    .configureHelp(helpConfig)
    .usage(
      `[options of ${command}]${specs.length > 0 ? ' [options]' : ''}${args.length > 0 ? ` ${args.map((a) => a.name).join(' ')}` : ''}`,
    );
  if (description) cmd.description(description);
  for (const a of args) cmd.argument(a.name, a.description);
  for (const [name, spec] of specs) {
    const opt = new Option(`--${name.replace(/_/g, '-')} ${valueName(spec)}`, spec.description);
    if (spec.choices) opt.choices(spec.choices);
    const d = shownDefault(spec);
    if (d !== undefined) helpDefault(opt, d);
    cmd.addOption(opt);
  }
  let text = cmd.helpInformation();
  if (specs.length === 0) text += `\n${w.name} has no options of its own.\n`;
  if (w.positionals === undefined)
    text += `${specs.length === 0 ? '' : '\n'}It takes no positional arguments.\n`;
  return commandShown ? text : `${text}\nThe options of ${command} itself: dbsmack ${command} --help\n`;
}
