/**
 * The ground floor of the house: errors a user can cause are values with a stable exit code and a hint,
 * thrown by any layer (URL parsing, workloads, the run layer, the CLI); the CLI prints one line for them (no
 * stack trace unless --debug). Every exit code dbsmack gives is here; the README's table documents them.
 */
export const EXIT = {
  ok: 0,
  internal: 1,
  usage: 2,
  connect: 3,
  runFailed: 4,
  /** The work was done and printed, but a file it was to be written to (or the history) could not be. */
  output: 5,
  input: 2,
  /** `compare --fail-below/--fail-above`: a significant ratio past the bound. */
  regression: 6,
  /** `compare --fail-below/--fail-above`: past the bound, but one run a side cannot tell. */
  inconclusive: 7,
  /** A `--threshold` (or `capacity --slo`) did not hold. */
  threshold: 8,
  interrupted: 130,
} as const;

/** A user error as data: how it crosses from a load worker to the main thread, or into a file. */
export interface SerializedUserError {
  name: string;
  message: string;
  hint?: string;
  exitCode: number;
  code: string;
}

/** The stable code of an error that names none of its own, by its exit code. */
const CODE_OF_EXIT: Record<number, string> = {
  [EXIT.usage]: 'USAGE',
  [EXIT.connect]: 'CONNECT',
  [EXIT.runFailed]: 'RUN_FAILED',
  [EXIT.output]: 'OUTPUT',
  [EXIT.threshold]: 'THRESHOLD',
};

/** Whether `value` is an object that carries `brand` (on itself or its prototypes). */
function isBranded(value: unknown, brand: symbol): boolean {
  return typeof value === 'object' && value !== null && (value as Record<symbol, unknown>)[brand] === true;
}

/**
 * Make `instanceof cls` hold for an instance of any copy of the module that defines `cls`, by `brand` (a
 * `Symbol.for` name) on its prototype: the CLI runs from a bundle of its own (scripts/bundle.js) while a
 * workload module's `import … from 'dbsmack'` loads the package's files, and each has its own classes.
 * Subclasses keep the ordinary check.
 */
export function brandInstances(cls: abstract new (...args: never[]) => object, brand: symbol): void {
  Object.defineProperty(cls.prototype, brand, { value: true });
  Object.defineProperty(cls, Symbol.hasInstance, {
    value(this: unknown, value: unknown): boolean {
      return (
        Function.prototype[Symbol.hasInstance].call(this, value) || (this === cls && isBranded(value, brand))
      );
    },
  });
}

export class UserError extends Error {
  readonly exitCode: number;
  readonly hint: string | undefined;
  /** Stable across versions: what scripts and the worker boundary go by, never the class name. */
  readonly code: string;
  constructor(message: string, hint?: string, exitCode: number = EXIT.usage, code?: string) {
    super(message);
    this.hint = hint;
    this.exitCode = exitCode;
    this.code = code ?? CODE_OF_EXIT[exitCode] ?? 'USER';
  }

  toJSON(): SerializedUserError {
    return {
      name: this.name,
      message: this.message,
      ...(this.hint !== undefined ? { hint: this.hint } : {}),
      exitCode: this.exitCode,
      code: this.code,
    };
  }

  /**
   * The user error `e` stands for, if it is one: by its fields, not its class, since a workload module may
   * bring its own copy of this module (the built package beside the sources).
   */
  static serialize(e: unknown): SerializedUserError | undefined {
    if (!(e instanceof Error)) return undefined;
    const u = e as Error & Partial<Pick<UserError, 'exitCode' | 'hint' | 'code'>>;
    if (typeof u.exitCode !== 'number' || typeof u.code !== 'string') return undefined;
    return { name: e.name, message: e.message, hint: u.hint, exitCode: u.exitCode, code: u.code };
  }

  static fromJSON(s: SerializedUserError): UserError {
    const e = new UserError(s.message, s.hint, s.exitCode, s.code);
    Object.defineProperty(e, 'name', { value: s.name });
    return e;
  }
}

brandInstances(UserError, Symbol.for('dbsmack.UserError'));

/** A bad command, option or value: exit 2. */
export class UsageError extends UserError {
  override readonly name = 'UsageError';
  constructor(message: string, hint?: string) {
    super(message, hint, EXIT.usage);
  }
}

/** A malformed input file; the message names file:line:column. Exit 2, like any other bad input. */
export class InputError extends UserError {
  override readonly name = 'InputError';
  constructor(message: string, hint?: string) {
    super(message, hint, EXIT.input, 'INPUT');
  }
}

/** The server could not be reached or refused us. The message names the redacted URL. Exit 3. */
export class ConnectError extends UserError {
  override readonly name = 'ConnectError';
  /** `code` is the connection's own (ECONNREFUSED, 1045, 28P01 …). */
  constructor(message: string, code: string, hint?: string) {
    super(message, hint, EXIT.connect, code);
  }
}
