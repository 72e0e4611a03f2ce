import type { Executor, UserRow } from '@sdx/db';

/**
 * The one form of an email the service stores and compares (extensions-2.md 2): trimmed,
 * Unicode NFKC, then lower-cased, the same way in every place: sign-up, sign-in, its limiter,
 * verification, password reset and invitations. `Ａda@Example.com` and `ada@example.com` are one
 * account; so are `İ…` however it was typed, since JavaScript's lower-casing (not the database's
 * collation) makes the form that is stored and looked up.
 */
export function normalizeEmail(email: string): string {
  return email.trim().normalize('NFKC').toLowerCase();
}

/** The user of an email, compared in its one stored form. */
export async function findUserByEmail(db: Executor, email: string): Promise<UserRow | undefined> {
  return db.selectFrom('users').selectAll().where('email', '=', normalizeEmail(email)).executeTakeFirst();
}
