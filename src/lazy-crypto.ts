/**
 * node:crypto, loaded on its first use. A thread compiles it at import (about 3 ms of CPU, the main thread's
 * too), and most runs never use it: the load workers only to answer a password challenge (with trust
 * authentication or an empty password they never do), the CLI only to name the temporary file of an output.
 */
import type * as Crypto from 'node:crypto';
import { createRequire } from 'node:module';

let loaded: typeof Crypto | undefined;

export function crypto(): typeof Crypto {
  if (loaded === undefined) loaded = createRequire(import.meta.url)('node:crypto') as typeof Crypto;
  return loaded;
}
