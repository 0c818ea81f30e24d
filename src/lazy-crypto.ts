/**
 * node:crypto, loaded on its first use. The main thread has it from Node's start-up snapshot, but a worker
 * thread compiles it at import (about 3 ms of CPU each), and the load workers need it only to answer a
 * password challenge: with trust authentication or an empty password they never touch it.
 */
import type * as Crypto from 'node:crypto';
import { createRequire } from 'node:module';

let loaded: typeof Crypto | undefined;

export function crypto(): typeof Crypto {
  if (loaded === undefined) loaded = createRequire(import.meta.url)('node:crypto') as typeof Crypto;
  return loaded;
}
