/**
 * A client's variables, as pgbench keeps them: a value (from `\set`) or a string (from `-D`, `\gset`,
 * `\setshell`), each turned into the other on first need and cached.
 */
import { EvalFailure, parseValue, type Value, valueText } from './value.ts';

interface Variable {
  text: string | undefined;
  value: Value | undefined;
}

/** Letters (any non-ASCII character counts as one), digits and underscores, not starting with a digit. */
export function validVariableName(name: string): boolean {
  return /^[A-Za-z_\u0080-\uffff][A-Za-z0-9_\u0080-\uffff]*$/.test(name);
}

export class Variables {
  private readonly vars = new Map<string, Variable>();

  has(name: string): boolean {
    return this.vars.has(name);
  }

  /** The value of `:name`; throws pgbench's "undefined variable" or the parse error of its string. */
  value(name: string): Value {
    const v = this.vars.get(name);
    if (v === undefined) throw new EvalFailure(`undefined variable "${name}"`);
    if (v.value === undefined) v.value = parseValue(name, v.text as string);
    return v.value;
  }

  /** The text of `:name` as it goes into SQL, or undefined when there is no such variable. */
  text(name: string): string | undefined {
    const v = this.vars.get(name);
    if (v === undefined) return undefined;
    if (v.text === undefined) v.text = valueText(v.value as Value);
    return v.text;
  }

  /** Whether a variable holds an integer value already (then it can be sent as a number). */
  raw(name: string): Value | undefined {
    return this.vars.get(name)?.value;
  }

  /** Set a value; `context` names the command for the invalid-name message. */
  set(context: string, name: string, value: Value): void {
    const v = this.vars.get(name);
    if (v !== undefined) {
      v.value = value;
      v.text = undefined;
      return;
    }
    if (!validVariableName(name)) throw new EvalFailure(`${context}: invalid variable name: "${name}"`);
    this.vars.set(name, { text: undefined, value });
  }

  setText(context: string, name: string, text: string): void {
    const v = this.vars.get(name);
    if (v !== undefined) {
      v.text = text;
      v.value = undefined;
      return;
    }
    if (!validVariableName(name)) throw new EvalFailure(`${context}: invalid variable name: "${name}"`);
    this.vars.set(name, { text, value: undefined });
  }

  /** A copy (each client starts from the same -D definitions). */
  clone(): Variables {
    const c = new Variables();
    for (const [k, v] of this.vars) c.vars.set(k, { ...v });
    return c;
  }
}
