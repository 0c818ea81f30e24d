import { InputError } from '../../errors.ts';
import type { Pos } from './ast.ts';

/**
 * A mistake in a smack file: `FILE:LINE:COLUMN: message`, with a hint. It is an `InputError`, so the CLI
 * prints it on one line and exits with 2.
 */
export class SmackError extends InputError {
  readonly file: string;
  readonly pos: Pos;
  constructor(file: string, pos: Pos, message: string, hint?: string) {
    super(`${file}:${pos.line}:${pos.col}: ${message}`, hint);
    this.file = file;
    this.pos = pos;
  }
}
