import { hash, verify } from '@node-rs/argon2';
import { randomToken } from '../identity/secrets';

/**
 * Passwords are hashed with argon2id (@node-rs/argon2's default algorithm and costs: 19 MiB,
 * 2 passes, 1 lane, the OWASP baseline), in a PHC string that carries its own salt and
 * parameters, so the costs can be raised later without breaking stored hashes.
 */
export const PASSWORD_MIN = 10;
export const PASSWORD_MAX = 128;

export function hashPassword(password: string): Promise<string> {
  return hash(password);
}

let dummy: Promise<string> | null = null;

/**
 * Checks a password against a stored hash. Without a stored hash (unknown email) it verifies
 * against a hash of a random password, so both answers take about the same time.
 */
export async function verifyPassword(stored: string | null, password: string): Promise<boolean> {
  if (stored === null) {
    dummy ??= hash(randomToken());
    await verify(await dummy, password).catch(() => false);
    return false;
  }
  return verify(stored, password).catch(() => false);
}
