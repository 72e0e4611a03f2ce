import { randomInt } from 'node:crypto';
import { generateSecret, generateSync, generateURI, verifySync } from 'otplib';
import { tokenHash } from '../identity/secrets';

/**
 * The codes of two-factor sign-in, without I/O: TOTP (RFC 6238 with the parameters every
 * authenticator app uses: SHA-1, 6 digits, 30 s steps from the Unix epoch) through otplib, and
 * the recovery codes. Time is passed in, so the caller's injected clock decides the step.
 */
export const TOTP_PERIOD_SECONDS = 30;
export const TOTP_DIGITS = 6;
/** A code of the step before or after the current one is accepted too (clock drift, typing time). */
export const TOTP_WINDOW_STEPS = 1;
/** The issuer shown by authenticator apps. */
export const TOTP_ISSUER = 'Social Data';

/** A new TOTP secret: 20 random bytes (160 bits, RFC 4226's recommended length), in base32. */
export function newTotpSecret(): string {
  return generateSecret({ length: 20 });
}

/** The `otpauth://totp/` URL of a secret, for a QR code. */
export function otpauthUrl(secret: string, label: string): string {
  return generateURI({ issuer: TOTP_ISSUER, label, secret, algorithm: 'sha1', digits: TOTP_DIGITS, period: TOTP_PERIOD_SECONDS });
}

/** The time step (RFC 6238's T) of a moment. */
export function timeStepAt(at: Date): number {
  return Math.floor(at.getTime() / 1000 / TOTP_PERIOD_SECONDS);
}

/** The code of a secret at a moment (tests and the console's own checks use it; the service only verifies). */
export function totpAt(secret: string, at: Date): string {
  return generateSync({
    secret,
    epoch: Math.floor(at.getTime() / 1000),
    period: TOTP_PERIOD_SECONDS,
    digits: TOTP_DIGITS,
    algorithm: 'sha1',
  });
}

/** What a user typed as an authenticator code, spaces removed: six digits, or null when it is not one. */
export function asTotpCode(input: string): string | null {
  const code = input.replace(/\s+/g, '');
  return /^\d{6}$/.test(code) ? code : null;
}

/**
 * The time step whose code `code` is, within one step of `at`, and after `afterStep` (a code
 * counts once: steps up to the last one accepted are skipped); null when none. otplib compares
 * in constant time.
 */
export function matchTotp(secret: string, code: string, at: Date, afterStep: number | null): number | null {
  const current = timeStepAt(at);
  // otplib refuses an afterTimeStep beyond the window; then no step of the window is after it.
  if (afterStep !== null && afterStep >= current + TOTP_WINDOW_STEPS) return null;
  const result = verifySync({
    secret,
    token: code,
    epoch: Math.floor(at.getTime() / 1000),
    period: TOTP_PERIOD_SECONDS,
    digits: TOTP_DIGITS,
    algorithm: 'sha1',
    epochTolerance: TOTP_WINDOW_STEPS * TOTP_PERIOD_SECONDS,
    afterTimeStep: afterStep !== null && afterStep >= 0 ? afterStep : undefined,
  });
  return result.valid ? current + result.delta : null;
}

/**
 * Recovery codes: 10 per user, each 12 characters of Crockford's base32 (lower case, no i, l, o
 * or u, so nothing reads as another character), 60 random bits, shown in three groups of four
 * (`7kq2-9xv4-mm3p`). Typed back, case, spaces and dashes do not matter, and i, l and o read as
 * 1, 1 and 0.
 */
export const RECOVERY_CODE_COUNT = 10;
const ALPHABET = '0123456789abcdefghjkmnpqrstvwxyz';
const GROUPS = 3;
const GROUP_LENGTH = 4;

export function newRecoveryCode(): string {
  const groups: string[] = [];
  for (let g = 0; g < GROUPS; g += 1) {
    let group = '';
    for (let i = 0; i < GROUP_LENGTH; i += 1) group += ALPHABET[randomInt(ALPHABET.length)];
    groups.push(group);
  }
  return groups.join('-');
}

/** The stored form of a typed recovery code (`xxxx-xxxx-xxxx`), or null when it cannot be one. */
export function asRecoveryCode(input: string): string | null {
  const plain = input
    .toLowerCase()
    .replace(/[\s-]+/g, '')
    .replace(/[il]/g, '1')
    .replace(/o/g, '0');
  if (plain.length !== GROUPS * GROUP_LENGTH || [...plain].some((c) => !ALPHABET.includes(c))) return null;
  const groups: string[] = [];
  for (let g = 0; g < GROUPS; g += 1) groups.push(plain.slice(g * GROUP_LENGTH, (g + 1) * GROUP_LENGTH));
  return groups.join('-');
}

/**
 * What is stored of a recovery code: the SHA-256 of the user's ID and the code. 60 random bits
 * are far beyond online guessing (each guess is a counted failed sign-in, after the password);
 * the user's ID in the hash makes an offline search of a stolen table one user's codes at a time.
 * A slow hash (argon2) would add its cost to every sign-in that uses a code and buy little more.
 */
export function recoveryCodeHash(userId: string, code: string): string {
  return tokenHash(`${userId}:${code}`);
}
