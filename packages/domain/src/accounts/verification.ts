import type { Executor, Tx, UserRow } from '@sdx/db';
import { signupAttemptMail, verificationMail } from '@sdx/mail';
import { type Actor, recordAudit } from '../audit/audit';
import type { Services } from '../context';
import { raiseAllowance } from '../credits/grants';
import { ApiError } from '../errors';
import { queueMail, recentMailCount } from '../mail/outbox';
import { findLiveToken, issueToken, latestSignUpPassword, redeemTokenById, retireTokens } from './auth-tokens';
import { findUserByEmail } from '../identity/emails';
import { verifyPassword } from './passwords';
import { type ClientMeta, startSession } from './sessions';
import { type SignedIn, signedInAs } from './signed-in';

/**
 * Email verification (extensions-2.md 2, extensions-3.md 1). With EMAIL_VERIFICATION on,
 * sign-up answers the same for a new and a taken email and starts no session. Each sign-up's
 * link (24 hours, once) carries that sign-up's password hash; following it takes the token with
 * that password (a wrong one: 401, the link stays usable), verifies the email, sets that
 * password, gives the personal workspace its NEW_WORKSPACE_CREDITS, signs the user in, and ends
 * every other pending link of the email (410). So a link mailed by someone else's sign-up
 * verifies nothing without their password, and their password never signs in.
 */

/** Mails of one template to one address an hour; more are dropped silently. */
export const MAILS_PER_EMAIL_PER_HOUR = 5;
const HOUR_MS = 3600_000;

/** Whether another mail of the template may go to the address this hour. */
export async function mayMail(db: Executor, to: string, template: string): Promise<boolean> {
  return (await recentMailCount(db, to, [template], HOUR_MS)) < MAILS_PER_EMAIL_PER_HOUR;
}

/** What mailing a link needs: the configuration (APP_URL, the outbox's sealing) and the clock. */
export type MailDeps = Pick<Services, 'config' | 'clock'>;

/**
 * A verification link for the user, mailed in the caller's transaction (unless the hour's mails
 * are spent). The link carries the password hash of the sign-up it is for: only that password
 * redeems it, and following it sets that password. Null (links made before extensions-3.md):
 * the user row's password stands for it.
 */
export async function mailVerification(
  tx: Tx,
  services: MailDeps,
  user: Pick<UserRow, 'id' | 'email'>,
  passwordHash: string | null,
): Promise<void> {
  if (!(await mayMail(tx, user.email, 'verify_email'))) return;
  const token = await issueToken(tx, user.id, 'verify_email', services.clock.now(), passwordHash);
  await queueMail(tx, services.config, {
    to: user.email,
    template: 'verify_email',
    ...verificationMail({ appUrl: services.config.appUrl, token }),
  });
}

/** The owner of a taken email is told that someone tried to sign up with it (at most 5 an hour). */
export async function mailSignupAttempt(tx: Tx, services: MailDeps, email: string): Promise<void> {
  if (!(await mayMail(tx, email, 'signup_attempt'))) return;
  await queueMail(tx, services.config, { to: email, template: 'signup_attempt', ...signupAttemptMail({ appUrl: services.config.appUrl }) });
}

/**
 * Marks the email verified, once: the personal workspace receives its plan allowance and the
 * change is audited. A second call does nothing.
 */
export async function markVerified(
  tx: Tx,
  services: Pick<Services, 'config' | 'clock'>,
  userId: string,
  ip: string | null,
  actor: Actor = { type: 'user', id: userId, ip },
): Promise<void> {
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

/** A verification link that is no longer usable, or never was. */
function verificationInvalid(): ApiError {
  return new ApiError('verification_invalid', 'This link was used already, has expired or is unknown; ask for a new one.');
}

/**
 * The email a live verification token is for (what the route counts failed passwords under);
 * 410 verification_invalid when the token is used, expired, unknown or its email verified.
 */
export async function verificationEmail(services: Pick<Services, 'db' | 'clock'>, token: string): Promise<string> {
  const live = await findLiveToken(services.db, token, 'verify_email', services.clock.now());
  const user = live
    ? await services.db.selectFrom('users').select(['email', 'email_verified_at']).where('id', '=', live.userId).executeTakeFirst()
    : undefined;
  if (!user || user.email_verified_at) throw verificationInvalid();
  return user.email;
}

/**
 * POST /v1/auth/verify `{token, password}`: the password must be the one of the sign-up that
 * sent the token (401 invalid_credentials otherwise, and the token stays usable). Then, in one
 * transaction with the user's row locked (two links of one email verified at once take turns):
 * the token used, that sign-up's password set, the email verified (markVerified: the allowance,
 * the audit event, every other pending link retired), and the user signed in. A used, expired or
 * unknown token, or one of an email verified already: 410 verification_invalid.
 */
export async function verifyEmail(services: Services, token: string, password: string, meta: ClientMeta): Promise<SignedIn> {
  const live = await findLiveToken(services.db, token, 'verify_email', services.clock.now());
  if (!live) throw verificationInvalid();
  const user = await services.db.selectFrom('users').selectAll().where('id', '=', live.userId).executeTakeFirst();
  if (!user || user.email_verified_at) throw verificationInvalid();
  const passwordHash = live.passwordHash ?? user.password_hash;
  if (!passwordHash || !(await verifyPassword(passwordHash, password))) {
    throw new ApiError('invalid_credentials', 'The password is not the one given at the sign-up that sent this link.');
  }
  const verified = await services.db.transaction().execute(async (tx) => {
    const now = services.clock.now();
    const locked = await tx.selectFrom('users').select('email_verified_at').where('id', '=', user.id).forUpdate().executeTakeFirst();
    if (!locked || locked.email_verified_at) return false;
    if (!(await redeemTokenById(tx, live.id, now))) return false;
    await tx.updateTable('users').set({ password_hash: passwordHash, updated_at: now }).where('id', '=', user.id).execute();
    await markVerified(tx, services, user.id, meta.ip);
    return true;
  });
  if (!verified) throw verificationInvalid();
  const fresh = await services.db.selectFrom('users').selectAll().where('id', '=', user.id).executeTakeFirstOrThrow();
  return signedInAs(services, fresh, await startSession(services.db, fresh.id, meta));
}

/**
 * A resent link for the email, in the mail sender's transaction (accounts/mail-requests.ts):
 * a new link when an account with it waits for verification, carrying the password of its
 * newest sign-up; nothing otherwise.
 */
export async function mailNewVerificationLink(tx: Tx, services: MailDeps, email: string): Promise<void> {
  const user = await findUserByEmail(tx, email);
  if (!user || user.email_verified_at) return;
  await mailVerification(tx, services, user, await latestSignUpPassword(tx, user.id));
}

/**
 * `npm run admin -- verify-email EMAIL`: the operator marks the user's email verified (as the
 * link would, without signing anyone in), audited with the CLI as the actor. False: no such user;
 * an email verified already stays as it was (true).
 */
export async function verifyEmailByOperator(
  services: Pick<Services, 'db' | 'config' | 'clock'>,
  email: string,
  actor: Actor,
): Promise<boolean> {
  const user = await findUserByEmail(services.db, email);
  if (!user) return false;
  await services.db.transaction().execute((tx) => markVerified(tx, services, user.id, null, actor));
  return true;
}
