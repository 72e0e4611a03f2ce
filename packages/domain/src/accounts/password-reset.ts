import type { Tx } from '@sdx/db';
import { sendsMail } from '@sdx/config';
import { passwordResetLink, passwordResetMail } from '@sdx/mail';
import { type Actor, recordAudit } from '../audit/audit';
import type { Services } from '../context';
import { ApiError } from '../errors';
import { queueMail } from '../mail/outbox';
import { revokeKeysOf } from '../workspaces/api-keys';
import { issueToken, redeemToken, retireTokens, TOKEN_TTL_MS } from './auth-tokens';
import { findUserByEmail } from '../identity/emails';
import { hashPassword } from './passwords';
import { endOtherSessions } from './sessions';
import { type MailDeps, markVerified, mayMail } from './verification';

/**
 * Password reset by mail (extensions-2.md 2, extensions-3.md 1): a single-use link valid one
 * hour; using it sets the password, ends every session of the user and revokes every OAuth
 * grant they gave (and, asked, every key they made). Needs mail: SMTP_URL, or outside production
 * the local dev outbox (503 mail_unavailable in production without SMTP_URL). The request itself
 * only queues a mail request (accounts/mail-requests.ts), so a known and an unknown email answer
 * after the same work; `mailResetLink` runs in the sender.
 */

export function requireMail(services: Pick<Services, 'config'>): void {
  if (!sendsMail(services.config)) {
    throw new ApiError(
      'mail_unavailable',
      'This service sends no mail, so it cannot reset passwords; ask its operator (who can print a reset link with `npm run admin -- reset-password EMAIL`).',
    );
  }
}

/** A reset link to the email when an account has it (at most 5 an hour), in the mail sender's transaction; nothing otherwise. */
export async function mailResetLink(tx: Tx, services: MailDeps, email: string): Promise<void> {
  const user = await findUserByEmail(tx, email);
  if (!user) return;
  if (!(await mayMail(tx, user.email, 'reset_password'))) return;
  const token = await issueToken(tx, user.id, 'reset_password', services.clock.now());
  await queueMail(tx, services.config, {
    to: user.email,
    template: 'reset_password',
    ...passwordResetMail({ appUrl: services.config.appUrl, token }),
  });
}

export interface PasswordResetOptions {
  /** Also revoke every API key the user made, in every workspace (and the keys and grants made with them). */
  revokeKeys?: boolean;
  ip?: string | null;
}

/**
 * POST /v1/auth/password-reset/confirm: the token's user gets the new password, every session
 * of theirs ends, every OAuth grant they gave is revoked (with whatever was made with it), with
 * `revokeKeys` every key they made too, and every other reset link dies; the email counts as
 * verified (the link reached it). All in one transaction, each revocation audited. A used,
 * expired or unknown token: 410 reset_token_invalid.
 */
export async function confirmPasswordReset(
  services: Services,
  token: string,
  newPassword: string,
  options: PasswordResetOptions = {},
): Promise<void> {
  const passwordHash = await hashPassword(newPassword);
  const ip = options.ip ?? null;
  const done = await services.db.transaction().execute(async (tx) => {
    const now = services.clock.now();
    const redeemed = await redeemToken(tx, token, 'reset_password', now);
    if (!redeemed) return false;
    const { userId } = redeemed;
    await tx.updateTable('users').set({ password_hash: passwordHash, updated_at: now }).where('id', '=', userId).execute();
    await retireTokens(tx, userId, 'reset_password', now);
    const ended = await endOtherSessions(tx, userId, null);
    const actor = { type: 'user' as const, id: userId, ip };
    const revoked = await revokeKeysOf(tx, { userId, kinds: options.revokeKeys ? undefined : ['oauth'], reason: 'password_reset', actor });
    await markVerified(tx, services, userId, ip);
    const personal = await tx.selectFrom('workspaces').select('id').where('personal_user_id', '=', userId).executeTakeFirst();
    if (personal) {
      await recordAudit(tx, {
        workspaceId: personal.id,
        action: 'user.password_reset',
        actor,
        targetType: 'user',
        targetId: userId,
        data: { sessions_ended: ended, keys_revoked: revoked.length, revoke_keys: options.revokeKeys === true },
      });
    }
    return true;
  });
  if (!done) throw new ApiError('reset_token_invalid', 'This reset link was used already, has expired or is unknown; ask for a new one.');
}

/**
 * `npm run admin -- reset-password EMAIL`: a one-time reset link for the user, handed to the
 * operator instead of mailed (for a service without mail, or a user whose mail does not
 * arrive). The same token as a mailed one: valid one hour, once. Audited in the user's personal
 * workspace (`user.password_reset_link_issued`, the CLI as the actor). Null: no such user.
 */
export async function issuePasswordResetLink(
  services: Pick<Services, 'db' | 'config' | 'clock'>,
  email: string,
  actor: Actor,
): Promise<{ link: string; expiresAt: Date } | null> {
  const user = await findUserByEmail(services.db, email);
  if (!user) return null;
  return services.db.transaction().execute(async (tx) => {
    const now = services.clock.now();
    const token = await issueToken(tx, user.id, 'reset_password', now);
    const personal = await tx.selectFrom('workspaces').select('id').where('personal_user_id', '=', user.id).executeTakeFirst();
    if (personal) {
      await recordAudit(tx, {
        workspaceId: personal.id,
        action: 'user.password_reset_link_issued',
        actor,
        targetType: 'user',
        targetId: user.id,
        data: {},
      });
    }
    return {
      link: passwordResetLink({ appUrl: services.config.appUrl, token }),
      expiresAt: new Date(now.getTime() + TOKEN_TTL_MS.reset_password),
    };
  });
}
