import { WebhookVerificationError } from './errors';
import type { WebhookEvent } from './types';

/**
 * Standard Webhooks signatures (https://www.standardwebhooks.com): `webhook-signature` holds one
 * or more `v1,<base64 HMAC-SHA256>` separated by spaces, each over `{webhook-id}.{webhook-timestamp}.{body}`
 * keyed with the secret's decoded bytes (`whsec_` + base64). Web Crypto only, so it runs the same
 * in Node 20+ and in browsers.
 */

/** Headers as fetch gives them, or as Node's IncomingMessage does. */
export type HeadersLike = Headers | Record<string, string | string[] | undefined>;

export interface VerifyOptions {
  /** Largest distance between webhook-timestamp and now, in seconds (default 300). */
  toleranceSeconds?: number;
  /** The clock, for tests (ms since the epoch). */
  now?: number;
}

const encoder = new TextEncoder();

/**
 * Checks a delivery and returns its event. `secret` may be several (during a rotation both the
 * old and the new one sign). Throws WebhookVerificationError when no signature matches, a header
 * is missing, or the timestamp is too far from now (a replay).
 */
export async function verifyWebhook(
  body: string | Uint8Array,
  headers: HeadersLike,
  secret: string | string[],
  options: VerifyOptions = {},
): Promise<WebhookEvent> {
  const id = header(headers, 'webhook-id');
  const timestamp = header(headers, 'webhook-timestamp');
  const signatures = header(headers, 'webhook-signature');
  if (!id || !timestamp || !signatures)
    throw new WebhookVerificationError('missing webhook-id, webhook-timestamp or webhook-signature header');
  const seconds = Number(timestamp);
  if (!/^\d+$/.test(timestamp) || !Number.isSafeInteger(seconds))
    throw new WebhookVerificationError('webhook-timestamp is not a Unix time in seconds');
  const now = Math.floor((options.now ?? Date.now()) / 1000);
  const tolerance = options.toleranceSeconds ?? 300;
  if (Math.abs(now - seconds) > tolerance)
    throw new WebhookVerificationError(`webhook-timestamp is more than ${tolerance} s away from now`);

  const bytes = typeof body === 'string' ? encoder.encode(body) : body;
  const offered = signatures
    .split(' ')
    .filter((entry) => entry.startsWith('v1,'))
    .map((entry) => entry.slice(3));
  for (const candidate of Array.isArray(secret) ? secret : [secret]) {
    const expected = await signature(candidate, id, timestamp, bytes);
    if (offered.some((sig) => constantTimeEqual(sig, expected))) {
      try {
        return JSON.parse(new TextDecoder().decode(bytes)) as WebhookEvent;
      } catch {
        throw new WebhookVerificationError('the signed body is not JSON');
      }
    }
  }
  throw new WebhookVerificationError('no signature matches the secret');
}

/** The three headers that sign `body` as the service signs a delivery. */
export async function signWebhook(
  body: string,
  secret: string,
  options: { id: string; timestamp?: number },
): Promise<Record<'webhook-id' | 'webhook-timestamp' | 'webhook-signature', string>> {
  const timestamp = String(options.timestamp ?? Math.floor(Date.now() / 1000));
  return {
    'webhook-id': options.id,
    'webhook-timestamp': timestamp,
    'webhook-signature': `v1,${await signature(secret, options.id, timestamp, encoder.encode(body))}`,
  };
}

async function signature(secret: string, id: string, timestamp: string, body: Uint8Array): Promise<string> {
  const raw = secret.startsWith('whsec_') ? secret.slice('whsec_'.length) : secret;
  let keyBytes: Uint8Array;
  try {
    keyBytes = fromBase64(raw);
  } catch {
    throw new WebhookVerificationError('the secret is not whsec_ followed by base64');
  }
  const key = await crypto.subtle.importKey('raw', new Uint8Array(keyBytes), { name: 'HMAC', hash: 'SHA-256' }, false, ['sign']);
  const prefix = encoder.encode(`${id}.${timestamp}.`);
  const signed = new Uint8Array(new ArrayBuffer(prefix.length + body.length));
  signed.set(prefix);
  signed.set(body, prefix.length);
  const mac = await crypto.subtle.sign('HMAC', key, signed);
  return toBase64(new Uint8Array(mac));
}

function header(headers: HeadersLike, name: string): string | undefined {
  if (typeof (headers as Headers).get === 'function') return (headers as Headers).get(name) ?? undefined;
  const record = headers as Record<string, string | string[] | undefined>;
  const key = Object.keys(record).find((k) => k.toLowerCase() === name);
  const value = key === undefined ? undefined : record[key];
  return Array.isArray(value) ? value.join(' ') : value;
}

function constantTimeEqual(a: string, b: string): boolean {
  if (a.length !== b.length) return false;
  let diff = 0;
  for (let i = 0; i < a.length; i++) diff |= a.charCodeAt(i) ^ b.charCodeAt(i);
  return diff === 0;
}

function fromBase64(text: string): Uint8Array {
  const binary = atob(text);
  const bytes = new Uint8Array(binary.length);
  for (let i = 0; i < binary.length; i++) bytes[i] = binary.charCodeAt(i);
  return bytes;
}

function toBase64(bytes: Uint8Array): string {
  let binary = '';
  for (const byte of bytes) binary += String.fromCharCode(byte);
  return btoa(binary);
}
