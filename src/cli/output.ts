import { writeFileSync } from 'node:fs';
import { redactSecrets } from '../driver/redact.ts';

/** Results go to stdout; progress and messages to stderr, so pipes stay clean. */
export function say(message: string): void {
  process.stderr.write(`${redactSecrets(message)}\n`);
}

/** Write a result file readable only by its owner: it names hosts and users. */
export function writeResultFile(path: string, content: string): void {
  writeFileSync(path, redactSecrets(content), { mode: 0o600 });
}
