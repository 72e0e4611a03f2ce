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
 * which is why production refuses to start without a key (packages/config). Outside production
 * the development key also stays an opening key once SECRETS_KEY is set (a development database
 * keeps working, and `rotate-secrets` re-seals it). In production (`nodeEnv: 'production'`) it
 * is never a key: a SECRETS_KEY or SECRETS_KEY_PREVIOUS equal to it is refused when the sealer
 * is made (at start), and a value sealed under it is refused when opened, since anyone could
 * have sealed it (extensions-3.md 1).
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

/** The development key's ID, as values sealed under it name it. */
export const DEVELOPMENT_KEY_ID = keyId(DEVELOPMENT_KEY);

/** Whether `key` is the public development key. */
export function isDevelopmentKey(key: Buffer | null): boolean {
  return key !== null && key.length === DEVELOPMENT_KEY.length && key.equals(DEVELOPMENT_KEY);
}

/** A value sealed under the development key was met in production. */
export class DevelopmentKeyRefused extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'DevelopmentKeyRefused';
  }
}

const VALUE_REFUSED =
  'A value sealed under the public development key is refused in production (anyone with the source can seal such values): set it again, or re-seal it outside production with rotate-secrets';
const KEY_REFUSED = (name: string) =>
  `${name} is the public development key, refused in production: set 32 random bytes in base64 (openssl rand -base64 32)`;

class AesGcmSealer implements Sealer {
  private readonly currentId: string;
  readonly keyId: string;
  private readonly keys = new Map<string, Buffer>();

  constructor(
    private readonly current: Buffer,
    previous: Buffer | null,
    private readonly production = false,
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
    if (this.production && id === DEVELOPMENT_KEY_ID) throw new DevelopmentKeyRefused(VALUE_REFUSED);
    const key = this.keys.get(id);
    if (!key)
      throw new Error(`no key of this process opens a value sealed under key ${id} (is SECRETS_KEY or SECRETS_KEY_PREVIOUS missing?)`);
    const raw = Buffer.from(payload, 'base64url');
    const decipher = createDecipheriv('aes-256-gcm', key, raw.subarray(0, 12));
    decipher.setAAD(Buffer.from(id));
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

/**
 * The sealer of a configuration (one per configuration object). With `nodeEnv: 'production'`
 * the development key is never used: a missing SECRETS_KEY, or a key equal to the development
 * key, throws (every process makes its sealer when it starts).
 */
export function sealerOf(config: { secretsKey: Buffer | null; secretsKeyPrevious: Buffer | null; nodeEnv?: string }): Sealer {
  let sealer = sealers.get(config);
  if (!sealer) {
    if (config.nodeEnv === 'production') {
      if (!config.secretsKey) throw new Error('SECRETS_KEY is required in production');
      if (isDevelopmentKey(config.secretsKey)) throw new DevelopmentKeyRefused(KEY_REFUSED('SECRETS_KEY'));
      if (isDevelopmentKey(config.secretsKeyPrevious)) throw new DevelopmentKeyRefused(KEY_REFUSED('SECRETS_KEY_PREVIOUS'));
      sealer = new AesGcmSealer(config.secretsKey, config.secretsKeyPrevious, true);
    } else {
      sealer = new AesGcmSealer(
        config.secretsKey ?? DEVELOPMENT_KEY,
        config.secretsKeyPrevious ?? (config.secretsKey ? DEVELOPMENT_KEY : null),
      );
    }
    sealers.set(config, sealer);
  }
  return sealer;
}
