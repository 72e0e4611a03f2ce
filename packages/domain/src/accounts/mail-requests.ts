import { sql } from 'kysely';
import type { AuthTokenPurpose, Db } from '@sdx/db';
import type { Services } from '../context';
import { newId } from '../ids';
import { mailEnabled } from '../mail/outbox';
import type { Clock } from '../time';
import { normalizeEmail } from '../identity/emails';
import { mailResetLink, requireMail } from './password-reset';
import { mailNewVerificationLink, type MailDeps } from './verification';

/**
 * Mail requests (extensions-3.md 1): `POST /v1/auth/password-reset` and `POST
 * /v1/auth/verify/resend` write one row naming the email, whatever it is, and answer; the mail
 * sender (delivery/mail-sender.ts, on its timer and when the route kicks it) then finds out whether an
 * account has the email and queues its mail (`mailResetLink`, `mailNewVerificationLink`), each
 * request in a transaction of its own. So a known and an unknown email take the same time to
 * answer: the lookups, the hour's cap and the token happen after the answer, in the background.
 */

/** A request that failed this many times is dropped (its mail would come too late to matter). */
export const MAIL_REQUEST_MAX_ATTEMPTS = 5;
/** Requests one pass resolves at most. */
export const MAIL_REQUEST_BATCH = 20;
const RETRY_MS = 10_000;

async function queueMailRequest(db: Db, kind: AuthTokenPurpose, email: string): Promise<void> {
  await db
    .insertInto('mail_requests')
    .values({ id: newId('mrq'), kind, email: normalizeEmail(email) })
    .execute();
}

/** POST /v1/auth/password-reset: 503 mail_unavailable without SMTP_URL; otherwise the request queued, the same for any email. */
export async function requestPasswordReset(services: Pick<Services, 'db' | 'config'>, email: string): Promise<void> {
  requireMail(services);
  await queueMailRequest(services.db, 'reset_password', email);
}

/** POST /v1/auth/verify/resend: the request queued (where mail is sent at all), the same for any email. */
export async function resendVerification(services: Pick<Services, 'db' | 'config'>, email: string): Promise<void> {
  if (!mailEnabled(services.config)) return;
  await queueMailRequest(services.db, 'verify_email', email);
}

export interface MailRequestPass {
  /** Requests resolved (a mail queued or not: an unknown email, a spent hour). */
  resolved: number;
  /** Requests that failed and wait for another attempt (or were dropped after the last). */
  failed: number;
  lastError: string | null;
}

/**
 * Resolves the due mail requests, oldest first, up to `limit`: each is taken (`for update skip
 * locked`, so several senders share the work), resolved into its mail and deleted in one
 * transaction. One that fails is pushed back by 10 s, and dropped after MAIL_REQUEST_MAX_ATTEMPTS.
 */
export async function resolveMailRequests(db: Db, deps: MailDeps, limit = MAIL_REQUEST_BATCH): Promise<MailRequestPass> {
  const pass: MailRequestPass = { resolved: 0, failed: 0, lastError: null };
  for (let i = 0; i < limit; i++) {
    let taken: { id: string; attempts: number } | null = null;
    try {
      const outcome = await db.transaction().execute(async (tx) => {
        const row = await tx
          .selectFrom('mail_requests')
          .selectAll()
          .where('next_attempt_at', '<=', deps.clock.now())
          .orderBy('next_attempt_at')
          .orderBy('id')
          .limit(1)
          .forUpdate()
          .skipLocked()
          .executeTakeFirst();
        if (!row) return 'none' as const;
        taken = { id: row.id, attempts: row.attempts };
        if (row.kind === 'reset_password') await mailResetLink(tx, deps, row.email);
        else await mailNewVerificationLink(tx, deps, row.email);
        await tx.deleteFrom('mail_requests').where('id', '=', row.id).execute();
        return 'resolved' as const;
      });
      if (outcome === 'none') break;
      pass.resolved += 1;
    } catch (error) {
      const failed = taken as { id: string; attempts: number } | null;
      if (!failed) throw error;
      pass.failed += 1;
      pass.lastError = (error instanceof Error ? error.message : String(error)).slice(0, 500);
      await pushBack(db, deps.clock, failed);
    }
  }
  return pass;
}

async function pushBack(db: Db, clock: Clock, row: { id: string; attempts: number }): Promise<void> {
  if (row.attempts + 1 >= MAIL_REQUEST_MAX_ATTEMPTS) {
    await db.deleteFrom('mail_requests').where('id', '=', row.id).execute();
    return;
  }
  await db
    .updateTable('mail_requests')
    .set({ attempts: sql<number>`attempts + 1`, next_attempt_at: new Date(clock.now().getTime() + RETRY_MS) })
    .where('id', '=', row.id)
    .execute();
}
