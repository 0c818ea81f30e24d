/**
 * Password authentication of the lean PostgreSQL client: MD5 and SCRAM-SHA-256 (RFC 5802 / RFC 7677,
 * without channel binding, since the lean client never speaks TLS). Pure functions over node:crypto so
 * that the SCRAM exchange can be checked against the RFC's test vector with an injected nonce.
 */
import { crypto } from '../lazy-crypto.ts';

/** The answer to AuthenticationMD5Password: `md5` + md5hex(md5hex(password + user) + salt). */
export function md5Password(user: string, password: string, salt: Buffer): string {
  const inner = crypto()
    .createHash('md5')
    .update(password + user, 'utf8')
    .digest('hex');
  return `md5${crypto().createHash('md5').update(inner, 'latin1').update(salt).digest('hex')}`;
}

const hmac = (key: Buffer, text: string): Buffer =>
  crypto().createHmac('sha256', key).update(text, 'utf8').digest();

/** SASLprep, as far as it matters for real passwords: non-ASCII spaces become spaces, then NFKC. */
function saslPrep(password: string): string {
  // biome-ignore lint/suspicious/noControlCharactersInRegex: the ASCII range test is the point.
  if (/^[\x00-\x7f]*$/.test(password)) return password;
  return password.replace(/[\u00a0\u1680\u2000-\u200b\u202f\u205f\u3000]/g, ' ').normalize('NFKC');
}

/** The username of the SCRAM messages (`n=`): PostgreSQL ignores it and uses the startup user; libpq sends ''. */
const saslName = (user: string): string => user.replace(/=/g, '=3D').replace(/,/g, '=2C');

/** StoredKey and ServerKey of a password, as the server keeps them in its SCRAM verifier. */
export function scramKeys(
  password: string,
  salt: Buffer,
  iterations: number,
): { salted: Buffer; clientKey: Buffer; storedKey: Buffer; serverKey: Buffer } {
  const salted = crypto().pbkdf2Sync(saslPrep(password), salt, iterations, 32, 'sha256');
  const clientKey = hmac(salted, 'Client Key');
  const storedKey = crypto().createHash('sha256').update(clientKey).digest();
  return { salted, clientKey, storedKey, serverKey: hmac(salted, 'Server Key') };
}

/** One SCRAM-SHA-256 exchange, client side. */
export class ScramClient {
  readonly clientFirstBare: string;
  private readonly nonce: string;
  private readonly password: string;
  private expectedServerSignature: Buffer | undefined;

  constructor(password: string, user = '', nonce: string = crypto().randomBytes(18).toString('base64')) {
    this.password = password;
    this.nonce = nonce;
    this.clientFirstBare = `n=${saslName(user)},r=${nonce}`;
  }

  /** client-first-message: no channel binding (`n,,`). */
  clientFirst(): string {
    return `n,,${this.clientFirstBare}`;
  }

  /** client-final-message for the server-first-message; throws when the server's message is malformed. */
  clientFinal(serverFirst: string): string {
    const attrs = parseAttributes(serverFirst);
    const r = attrs.get('r');
    const s = attrs.get('s');
    const i = Number(attrs.get('i'));
    if (r === undefined || !r.startsWith(this.nonce) || r.length === this.nonce.length) {
      throw new Error('SCRAM: the server nonce does not extend the client nonce');
    }
    if (s === undefined || !Number.isInteger(i) || i < 1)
      throw new Error('SCRAM: malformed server-first-message');
    const { clientKey, storedKey, serverKey } = scramKeys(this.password, Buffer.from(s, 'base64'), i);
    const withoutProof = `c=biws,r=${r}`;
    const authMessage = `${this.clientFirstBare},${serverFirst},${withoutProof}`;
    const signature = hmac(storedKey, authMessage);
    const proof = Buffer.alloc(clientKey.length);
    for (let k = 0; k < proof.length; k++) proof[k] = (clientKey[k] as number) ^ (signature[k] as number);
    this.expectedServerSignature = hmac(serverKey, authMessage);
    return `${withoutProof},p=${proof.toString('base64')}`;
  }

  /** True when the server-final-message proves that the server knows the password. */
  verifyServerFinal(serverFinal: string): boolean {
    const v = parseAttributes(serverFinal).get('v');
    const want = this.expectedServerSignature;
    if (v === undefined || want === undefined) return false;
    const got = Buffer.from(v, 'base64');
    return got.length === want.length && crypto().timingSafeEqual(got, want);
  }
}

function parseAttributes(text: string): Map<string, string> {
  const m = new Map<string, string>();
  for (const part of text.split(',')) {
    const eq = part.indexOf('=');
    if (eq === 1) m.set(part.slice(0, 1), part.slice(2));
  }
  return m;
}
