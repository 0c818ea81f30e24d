/**
 * Passwords never leave the process. Every password the process learns is registered here, and every
 * message that can reach a user, a file or the history goes through `redactSecrets`.
 */
const secrets = new Set<string>();

/** Remember a secret so that it is masked wherever it appears later. Strings shorter than three characters are ignored: masking every "a" would garble messages; URLs are masked by shape anyway. */
export function registerSecret(secret: string | undefined): void {
  if (secret !== undefined && secret.length >= 3) {
    secrets.add(secret);
    // The URL-encoded form can appear in echoed URLs too.
    const encoded = encodeURIComponent(secret);
    if (encoded !== secret) secrets.add(encoded);
  }
}

/**
 * Replace every registered secret, and the password part of any URL, with `***`. Secrets go first (a
 * password may itself look like part of a URL); the URL's password runs up to the last `@` before the next
 * white space or quote, as a password may hold unencoded `@`.
 */
export function redactSecrets(text: string): string {
  let out = text;
  for (const s of secrets) {
    if (out.includes(s)) out = out.split(s).join('***');
  }
  return out.replace(/(\b[a-z][a-z0-9+.-]*:\/\/[^:/@\s'"]*:)([^\s'"]*)@/gi, '$1***@');
}
