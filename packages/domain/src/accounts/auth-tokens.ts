import type { AuthTokenPurpose, Executor } from '@sdx/db';
import { newId } from '../ids';
import { randomToken, tokenHash } from '../identity/secrets';

/**
 * Single-use tokens mailed to a user (extensions-2.md 2): email verification (24 hours) and
 * password reset (1 hour). Only the token's SHA-256 is stored; the token itself exists in the
 * mail (sealed in the outbox until sent) and in the link the user follows.
 */
export const TOKEN_TTL_MS: Readonly<Record<AuthTokenPurpose, number>> = {
  verify_email: 24 * 3600_000,
  reset_password: 3600_000,
};

/** A new token of the purpose for the user, valid from `now` for the purpose's lifetime (a verification link carries the password of its sign-up). */
export async function issueToken(
  db: Executor,
  userId: string,
  purpose: AuthTokenPurpose,
  now: Date,
  passwordHash: string | null = null,
): Promise<string> {
  const token = randomToken();
  await db
    .insertInto('auth_tokens')
    .values({
      id: newId('tok'),
      user_id: userId,
      purpose,
      token_hash: tokenHash(token),
      password_hash: passwordHash,
      expires_at: new Date(now.getTime() + TOKEN_TTL_MS[purpose]),
    })
    .execute();
  return token;
}

export interface RedeemedToken {
  userId: string;
  /** The password hash a sign-up's verification link carries; null otherwise. */
  passwordHash: string | null;
}

/**
 * Uses a token: the user it belongs to when it is of this purpose, unused and unexpired at
 * `now`, else null. One conditional UPDATE, so two requests with the same token cannot both
 * succeed.
 */
export async function redeemToken(db: Executor, token: string, purpose: AuthTokenPurpose, now: Date): Promise<RedeemedToken | null> {
  if (!token || token.length > 200) return null;
  const row = await db
    .updateTable('auth_tokens')
    .set({ used_at: now })
    .where('token_hash', '=', tokenHash(token))
    .where('purpose', '=', purpose)
    .where('used_at', 'is', null)
    .where('expires_at', '>', now)
    .returning(['user_id', 'password_hash'])
    .executeTakeFirst();
  return row ? { userId: row.user_id, passwordHash: row.password_hash } : null;
}

export interface LiveToken extends RedeemedToken {
  id: string;
}

/**
 * A token of this purpose that is unused and unexpired at `now`, without using it (a
 * verification link is used only once its sign-up's password was given: a wrong password leaves
 * it usable). Null otherwise.
 */
export async function findLiveToken(db: Executor, token: string, purpose: AuthTokenPurpose, now: Date): Promise<LiveToken | null> {
  if (!token || token.length > 200) return null;
  const row = await db
    .selectFrom('auth_tokens')
    .select(['id', 'user_id', 'password_hash'])
    .where('token_hash', '=', tokenHash(token))
    .where('purpose', '=', purpose)
    .where('used_at', 'is', null)
    .where('expires_at', '>', now)
    .executeTakeFirst();
  return row ? { id: row.id, userId: row.user_id, passwordHash: row.password_hash } : null;
}

/** Uses the token found by findLiveToken, once: false when it was used or expired in between. */
export async function redeemTokenById(db: Executor, id: string, now: Date): Promise<boolean> {
  const row = await db
    .updateTable('auth_tokens')
    .set({ used_at: now })
    .where('id', '=', id)
    .where('used_at', 'is', null)
    .where('expires_at', '>', now)
    .returning('id')
    .executeTakeFirst();
  return Boolean(row);
}

/**
 * The password hash of the user's newest sign-up link (a verification token that carries one),
 * expired or not: what a resent link carries. Null when none is left (the user row's hash
 * stands for it then).
 */
export async function latestSignUpPassword(db: Executor, userId: string): Promise<string | null> {
  const row = await db
    .selectFrom('auth_tokens')
    .select('password_hash')
    .where('user_id', '=', userId)
    .where('purpose', '=', 'verify_email')
    .where('password_hash', 'is not', null)
    .orderBy('created_at', 'desc')
    .orderBy('id', 'desc')
    .limit(1)
    .executeTakeFirst();
  return row?.password_hash ?? null;
}

/** Ends every other unused token of the purpose for the user (after one was used). */
export async function retireTokens(db: Executor, userId: string, purpose: AuthTokenPurpose, now: Date): Promise<void> {
  await db
    .updateTable('auth_tokens')
    .set({ used_at: now })
    .where('user_id', '=', userId)
    .where('purpose', '=', purpose)
    .where('used_at', 'is', null)
    .execute();
}
