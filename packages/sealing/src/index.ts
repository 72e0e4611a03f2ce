import { createCipheriv, createDecipheriv, createHash, randomBytes } from 'node:crypto';

/**
 * Secrets at rest (extensions-2.md 2): webhook secrets, TOTP secrets, destination credentials
 * and the bodies of unsent mail are stored sealed with AES-256-GCM under SECRETS_KEY.
 *
 * A sealed value reads `sealed:v1:<key id>:<base64url of iv (12 bytes) | ciphertext | tag (16 bytes)>`,
 * the key id being the first 8 hex digits of the key's SHA-256, so a value sealed under
 * SECRETS_KEY_PREVIOUS still opens while the keys are rotated (docs/deployment.md). The key id
 * is also the authenticated data, so a value cannot be moved between keys.
 *
 * Outside production a missing SECRETS_KEY falls back to a development key derived from a fixed
 * string: values are still never stored in clear, but anyone with this source can open them,
 * which is why production refuses to start without a key (packages/config).
 *
 * Its own package, below packages/db, because a migration seals too (20261127_0023 seals the
 * webhook secrets stored in clear before it): it imports nothing of the workspace.
 */
export interface Sealer {
  seal(plain: string): string;
  /** The plain text of a sealed value; throws when no key of this process opens it. */
  open(sealed: string): string;
  /** Sealed by this scheme (under any key). */
  isSealed(value: string): boolean;
  /** Sealed under the current key (a rotation re-seals what is not). */
  isCurrent(value: string): boolean;
  /** The current key's ID, as sealed values name it. */
  readonly keyId: string;
}

/** How every sealed value begins (a column constraint may require it). */
export const SEALED_PREFIX = 'sealed:v1:';
const PREFIX = SEALED_PREFIX;
const DEVELOPMENT_KEY = createHash('sha256').update('sdx development secrets key: not for production').digest();

function keyId(key: Buffer): string {
  return createHash('sha256').update(key).digest('hex').slice(0, 8);
}

class AesGcmSealer implements Sealer {
  private readonly currentId: string;
  readonly keyId: string;
  private readonly keys = new Map<string, Buffer>();

  constructor(
    private readonly current: Buffer,
    previous: Buffer | null,
  ) {
    this.currentId = keyId(current);
    this.keyId = this.currentId;
    this.keys.set(this.currentId, current);
    if (previous) this.keys.set(keyId(previous), previous);
  }

  seal(plain: string): string {
    const iv = randomBytes(12);
    const cipher = createCipheriv('aes-256-gcm', this.current, iv);
    cipher.setAAD(Buffer.from(this.currentId));
    const body = Buffer.concat([cipher.update(plain, 'utf8'), cipher.final()]);
    return `${PREFIX}${this.currentId}:${Buffer.concat([iv, body, cipher.getAuthTag()]).toString('base64url')}`;
  }

  open(sealed: string): string {
    if (!this.isSealed(sealed)) throw new Error('not a sealed value');
    const [id, payload] = sealed.slice(PREFIX.length).split(':');
    const key = this.keys.get(id!);
    if (!key) throw new Error(`no key of this process opens a value sealed under key ${id} (is SECRETS_KEY or SECRETS_KEY_PREVIOUS missing?)`);
    const raw = Buffer.from(payload!, 'base64url');
    const decipher = createDecipheriv('aes-256-gcm', key, raw.subarray(0, 12));
    decipher.setAAD(Buffer.from(id!));
    decipher.setAuthTag(raw.subarray(raw.length - 16));
    return Buffer.concat([decipher.update(raw.subarray(12, raw.length - 16)), decipher.final()]).toString('utf8');
  }

  isSealed(value: string): boolean {
    return value.startsWith(PREFIX);
  }

  isCurrent(value: string): boolean {
    return value.startsWith(`${PREFIX}${this.currentId}:`);
  }
}

/** Every sealed column (table, column): what `rotate-secrets` re-seals and the dump test checks. */
export const SEALED_COLUMNS: ReadonlyArray<readonly [table: string, column: string]> = [
  ['webhooks', 'secret'],
  ['webhooks', 'previous_secret'],
  ['users', 'two_factor_secret'],
  ['mail_outbox', 'body_sealed'],
  ['destinations', 'secret_access_key'],
];

const sealers = new WeakMap<object, Sealer>();

/** The sealer of a configuration (one per configuration object). */
export function sealerOf(config: { secretsKey: Buffer | null; secretsKeyPrevious: Buffer | null }): Sealer {
  let sealer = sealers.get(config);
  if (!sealer) {
    sealer = new AesGcmSealer(config.secretsKey ?? DEVELOPMENT_KEY, config.secretsKeyPrevious ?? (config.secretsKey ? DEVELOPMENT_KEY : null));
    sealers.set(config, sealer);
  }
  return sealer;
}
