/**
 * Password scrambles of the lean MySQL/MariaDB client (mysql-lean.ts), written from the protocol
 * documentation: `mysql_native_password` (SHA-1 challenge/response) and `caching_sha2_password` (SHA-256
 * fast path; full authentication sends the password in clear over a Unix socket, or RSA-OAEP-encrypted
 * with the server's public key over TCP). Any other plugin is refused with a pointer to the library client.
 */
import { crypto } from '../lazy-crypto.ts';
import { DbError } from './errors.ts';

export const NATIVE_PASSWORD = 'mysql_native_password';
export const CACHING_SHA2 = 'caching_sha2_password';

function digest(alg: 'sha1' | 'sha256', ...parts: Buffer[]): Buffer {
  const h = crypto().createHash(alg);
  for (const p of parts) h.update(p);
  return h.digest();
}

function xorInto(a: Buffer, b: Buffer): Buffer {
  const out = Buffer.allocUnsafe(a.length);
  for (let i = 0; i < a.length; i++) out[i] = (a[i] as number) ^ (b[i % b.length] as number);
  return out;
}

/** The first 20 bytes of the server's challenge (its trailing NUL dropped). */
export function scrambleOf(data: Buffer): Buffer {
  const end = data.length > 0 && data[data.length - 1] === 0 ? data.length - 1 : data.length;
  return data.subarray(0, Math.min(end, 20));
}

/** SHA1(password) XOR SHA1(scramble + SHA1(SHA1(password))); empty for an empty password. */
export function nativePassword(password: string, scramble: Buffer): Buffer {
  if (password === '') return Buffer.alloc(0);
  const p1 = digest('sha1', Buffer.from(password, 'utf8'));
  const p2 = digest('sha1', p1);
  return xorInto(p1, digest('sha1', scramble, p2));
}

/** SHA256(password) XOR SHA256(SHA256(SHA256(password)) + scramble); empty for an empty password. */
export function cachingSha2Password(password: string, scramble: Buffer): Buffer {
  if (password === '') return Buffer.alloc(0);
  const p1 = digest('sha256', Buffer.from(password, 'utf8'));
  const p2 = digest('sha256', p1);
  return xorInto(p1, digest('sha256', p2, scramble));
}

/** The password, NUL-terminated, XORed with the scramble and encrypted with the server's RSA key (OAEP). */
export function rsaEncryptedPassword(password: string, scramble: Buffer, pem: string): Buffer {
  const clear = Buffer.concat([Buffer.from(password, 'utf8'), Buffer.from([0])]);
  const { constants, publicEncrypt } = crypto();
  return publicEncrypt({ key: pem, padding: constants.RSA_PKCS1_OAEP_PADDING }, xorInto(clear, scramble));
}

/** The first auth response for `plugin`; throws a fatal DbError for a plugin this client does not speak. */
export function authResponse(plugin: string, password: string, scramble: Buffer): Buffer {
  if (plugin === NATIVE_PASSWORD) return nativePassword(password, scramble);
  if (plugin === CACHING_SHA2) return cachingSha2Password(password, scramble);
  throw new DbError(
    'fatal',
    'AUTH_PLUGIN',
    `authentication plugin ${plugin} is not supported by connector dbsmack; use ?connector=mysql2`,
  );
}
