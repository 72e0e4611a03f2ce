import { createHmac, randomBytes } from 'node:crypto';

/**
 * Standard Webhooks signing (https://www.standardwebhooks.com): a secret is `whsec_` + base64 of
 * 32 random bytes; a signature is `v1,` + base64 HMAC-SHA256, keyed with the secret's decoded
 * bytes, of `{webhook-id}.{webhook-timestamp}.{body}`. Several signatures (a secret being
 * rotated and its successor) travel in one header, separated by spaces; a receiver accepts the
 * message when any of them verifies.
 */
export const SECRET_PREFIX = 'whsec_';

export function generateSecret(): string {
  return SECRET_PREFIX + randomBytes(32).toString('base64');
}

/** The key bytes of a `whsec_` secret. */
export function secretKey(secret: string): Buffer {
  return Buffer.from(secret.startsWith(SECRET_PREFIX) ? secret.slice(SECRET_PREFIX.length) : secret, 'base64');
}

/** One `v1,` signature of the message. */
export function sign(secret: string, id: string, timestamp: number, body: string): string {
  return `v1,${createHmac('sha256', secretKey(secret)).update(`${id}.${timestamp}.${body}`).digest('base64')}`;
}

/** The headers of a signed message: `webhook-signature` carries one signature per secret, in order. */
export function signatureHeaders(secrets: readonly string[], id: string, timestamp: number, body: string): Record<string, string> {
  return {
    'webhook-id': id,
    'webhook-timestamp': String(timestamp),
    'webhook-signature': secrets.map((secret) => sign(secret, id, timestamp, body)).join(' '),
  };
}
