import { createHash, randomBytes } from 'node:crypto';

/** An opaque random token (256 bits, base64url): session cookies, CSRF tokens, invitation tokens. */
export function randomToken(bytes = 32): string {
  return randomBytes(bytes).toString('base64url');
}

/** What is stored of a token: its SHA-256. A token has 256 bits of entropy, so no salt or stretching is needed. */
export function tokenHash(token: string): string {
  return createHash('sha256').update(token, 'utf8').digest('hex');
}
