/**
 * Errors a user can cause are values with a stable exit code and a hint; the CLI prints one line for
 * them (no stack trace unless --debug). The codes are documented in the README.
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
  // 6 and 7: `compare --fail-below/--fail-above` (EXIT_REGRESSION, EXIT_INCONCLUSIVE in compare.ts)
  /** A `--threshold` (or `capacity --slo`) did not hold. */
  threshold: 8,
  interrupted: 130,
} as const;

export class UserError extends Error {
  readonly exitCode: number;
  readonly hint: string | undefined;
  constructor(message: string, hint?: string, exitCode: number = EXIT.usage) {
    super(message);
    this.hint = hint;
    this.exitCode = exitCode;
  }
}

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
    super(message, hint, EXIT.input);
  }
}

/** The server could not be reached or refused us. The message names the redacted URL. Exit 3. */
export class ConnectError extends UserError {
  override readonly name = 'ConnectError';
  readonly code: string;
  constructor(message: string, code: string, hint?: string) {
    super(message, hint, EXIT.connect);
    this.code = code;
  }
}
