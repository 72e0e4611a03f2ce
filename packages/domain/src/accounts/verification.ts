import type { Executor, Tx, UserRow } from '@sdx/db';
import { signupAttemptMail, verificationMail } from '@sdx/mail';
import { type Actor, recordAudit } from '../audit/audit';
import type { Services } from '../context';
import { raiseAllowance } from '../credits/grants';
import { ApiError } from '../errors';
import { queueMail, recentMailCount } from '../mail/outbox';
import { issueToken, redeemToken, retireTokens } from './auth-tokens';
import { findUserByEmail } from './emails';
import { type ClientMeta, startSession } from './sessions';
import { type SignedIn, signedInAs } from './signed-in';

/**
 * Email verification (extensions-2.md 2). With EMAIL_VERIFICATION on, sign-up answers the same
 * for a new and a taken email and starts no session; the mailed link (24 hours, once) verifies
 * the email, gives the personal workspace its NEW_WORKSPACE_CREDITS and signs the user in.
 */

/** Mails of one template to one address an hour; more are dropped silently. */
export const MAILS_PER_EMAIL_PER_HOUR = 5;
const HOUR_MS = 3600_000;

/** Whether another mail of the template may go to the address this hour. */
export async function mayMail(db: Executor, to: string, template: string): Promise<boolean> {
  return (await recentMailCount(db, to, [template], HOUR_MS)) < MAILS_PER_EMAIL_PER_HOUR;
}

/**
 * A verification link for the user, mailed in the caller's transaction (unless the hour's mails
 * are spent). A link from a sign-up carries that sign-up's password hash: following it sets that
 * password, so whoever reads the mailbox ends up with the password they chose, even when someone
 * else signed up with the address first.
 */
export async function mailVerification(tx: Tx, services: Services, user: Pick<UserRow, 'id' | 'email'>, passwordHash: string | null = null): Promise<void> {
  if (!(await mayMail(tx, user.email, 'verify_email'))) return;
  const token = await issueToken(tx, user.id, 'verify_email', services.clock.now(), passwordHash);
  await queueMail(tx, services.config, { to: user.email, template: 'verify_email', ...verificationMail({ appUrl: services.config.appUrl, token }) });
}

/** The owner of a taken email is told that someone tried to sign up with it (at most 5 an hour). */
export async function mailSignupAttempt(tx: Tx, services: Services, email: string): Promise<void> {
  if (!(await mayMail(tx, email, 'signup_attempt'))) return;
  await queueMail(tx, services.config, { to: email, template: 'signup_attempt', ...signupAttemptMail({ appUrl: services.config.appUrl }) });
}

/**
 * Marks the email verified, once: the personal workspace receives its plan allowance and the
 * change is audited. A second call does nothing.
 */
export async function markVerified(tx: Tx, services: Pick<Services, 'config' | 'clock'>, userId: string, ip: string | null, actor: Actor = { type: 'user', id: userId, ip }): Promise<void> {
  const now = services.clock.now();
  const verified = await tx
    .updateTable('users')
    .set({ email_verified_at: now, updated_at: now })
    .where('id', '=', userId)
    .where('email_verified_at', 'is', null)
    .returning('id')
    .executeTakeFirst();
  if (!verified) return;
  await retireTokens(tx, userId, 'verify_email', now);
  const personal = await tx.selectFrom('workspaces').selectAll().where('personal_user_id', '=', userId).forUpdate().executeTakeFirst();
  if (!personal) return;
  await raiseAllowance(tx, personal, services.config.newWorkspaceCredits, now);
  await recordAudit(tx, {
    workspaceId: personal.id,
    action: 'user.email_verified',
    actor,
    targetType: 'user',
    targetId: userId,
    data: { credits: Math.max(0, services.config.newWorkspaceCredits - personal.monthly_quota) },
  });
}

/** POST /v1/auth/verify: the token's user verified and signed in; 410 verification_invalid otherwise. */
export async function verifyEmail(services: Services, token: string, meta: ClientMeta): Promise<SignedIn> {
  const userId = await services.db.transaction().execute(async (tx) => {
    const redeemed = await redeemToken(tx, token, 'verify_email', services.clock.now());
    if (!redeemed) return null;
    if (redeemed.passwordHash) {
      await tx.updateTable('users').set({ password_hash: redeemed.passwordHash }).where('id', '=', redeemed.userId).where('email_verified_at', 'is', null).execute();
    }
    await markVerified(tx, services, redeemed.userId, meta.ip);
    return redeemed.userId;
  });
  if (!userId) throw new ApiError('verification_invalid', 'This link was used already, has expired or is unknown; ask for a new one.');
  const user = await services.db.selectFrom('users').selectAll().where('id', '=', userId).executeTakeFirstOrThrow();
  return signedInAs(services, user, await startSession(services.db, user.id, meta));
}

/** POST /v1/auth/verify/resend: a new link when the email waits for verification; nothing otherwise. Always answers the same. */
export async function resendVerification(services: Services, email: string): Promise<void> {
  const user = await findUserByEmail(services.db, email);
  if (!user || user.email_verified_at) return;
  await services.db.transaction().execute((tx) => mailVerification(tx, services, user));
}

/**
 * `npm run admin -- verify-email EMAIL`: the operator marks the user's email verified (as the
 * link would, without signing anyone in), audited with the CLI as the actor. False: no such user;
 * an email verified already stays as it was (true).
 */
export async function verifyEmailByOperator(services: Pick<Services, 'db' | 'config' | 'clock'>, email: string, actor: Actor): Promise<boolean> {
  const user = await findUserByEmail(services.db, email);
  if (!user) return false;
  await services.db.transaction().execute((tx) => markVerified(tx, services, user.id, null, actor));
  return true;
}
