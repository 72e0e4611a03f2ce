import { sql } from 'kysely';
import type { AppConfig } from '@sdx/config';
import type { Db, MailOutboxRow } from '@sdx/db';
import { sealerOf } from '../sealing';
import { type Clock, systemClock } from '../time';
import type { MailBody } from './outbox';

/**
 * Sending the mail outbox (outbox.ts). A pass claims due rows with `for update skip locked` and a
 * lease (`locked_until`), each claim counting as an attempt, then sends them one by one, in the
 * order they were queued, and records each outcome:
 *
 * - sent: status `sent`, `sent_at`, and the sealed body dropped (its links are secrets);
 * - refused or unreachable: pending again, `next_attempt_at` pushed back by MAIL_RETRY_DELAYS_MS,
 *   `last_error` kept; after MAIL_MAX_ATTEMPTS attempts the row is `failed` and its body dropped.
 *
 * Delivery is at least once: a process that dies between its claim and the outcome leaves the
 * row pending under a lease that lapses after MAIL_LEASE_MS, and the next pass sends it again
 * (the SMTP server may have taken it the first time). The lease outlasts the transport's
 * timeouts (packages/mail SMTP_TIMEOUTS) for a whole batch, so a slow send is not taken twice.
 */

/** What the domain needs of an SMTP client; packages/mail's MailTransport implements it. */
export interface MailTransport {
  send(message: { from: string; to: string; subject: string; text: string; html: string }): Promise<void>;
}

/** Rows one pass claims at most. */
export const MAIL_BATCH = 10;
/** How long a claim holds its rows: longer than MAIL_BATCH sends at the transport's timeouts. */
export const MAIL_LEASE_MS = 10 * 60_000;
/** The wait before the next attempt, by the number of attempts made (the last repeats). */
export const MAIL_RETRY_DELAYS_MS = [10_000, 60_000, 5 * 60_000, 30 * 60_000, 2 * 3600_000, 6 * 3600_000, 12 * 3600_000] as const;
/** Attempts before a mail is given up (status `failed`): about 21 hours of trying. */
export const MAIL_MAX_ATTEMPTS = 8;

/** The wait after `attempts` failed attempts. */
export function mailRetryDelay(attempts: number): number {
  return MAIL_RETRY_DELAYS_MS[Math.min(Math.max(attempts, 1), MAIL_RETRY_DELAYS_MS.length) - 1];
}

export interface MailPass {
  /** Rows claimed by the pass (a full batch: there may be more due). */
  claimed: number;
  sent: number;
  /** Pending again, for a later attempt. */
  retrying: number;
  /** Given up (MAIL_MAX_ATTEMPTS reached). */
  failed: number;
  /** The last refusal, for the log (never the body). */
  lastError: string | null;
}

/** Claims up to `limit` due rows under a lease, oldest due first; each claim is an attempt. */
export async function claimDueMail(db: Db, clock: Clock = systemClock, limit = MAIL_BATCH): Promise<MailOutboxRow[]> {
  const now = clock.now();
  const rows = await db
    .updateTable('mail_outbox')
    .set({ attempts: sql<number>`attempts + 1`, locked_until: new Date(now.getTime() + MAIL_LEASE_MS) })
    .where('id', 'in', (eb) =>
      eb
        .selectFrom('mail_outbox')
        .select('id')
        .where('status', '=', 'pending')
        .where('next_attempt_at', '<=', now)
        .where((w) => w.or([w('locked_until', 'is', null), w('locked_until', '<=', now)]))
        .orderBy('next_attempt_at')
        .orderBy('id')
        .limit(limit)
        .forUpdate()
        .skipLocked(),
    )
    .where('status', '=', 'pending')
    .returningAll()
    .execute();
  return rows.sort((a, b) => a.created_at.getTime() - b.created_at.getTime() || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
}

/** Sends the mail that is due (one batch); see the top of this file. */
export async function sendDueMail(
  db: Db,
  config: Pick<AppConfig, 'mailFrom' | 'secretsKey' | 'secretsKeyPrevious'>,
  transport: MailTransport,
  clock: Clock = systemClock,
): Promise<MailPass> {
  const rows = await claimDueMail(db, clock);
  const pass: MailPass = { claimed: rows.length, sent: 0, retrying: 0, failed: 0, lastError: null };
  for (const row of rows) {
    try {
      if (!row.body_sealed) throw new Error('the mail has no body');
      const body = JSON.parse(sealerOf(config).open(row.body_sealed)) as MailBody;
      await transport.send({ from: config.mailFrom, to: row.recipient, subject: row.subject, text: body.text, html: body.html });
    } catch (error) {
      const message = (error instanceof Error ? error.message : String(error)).slice(0, 500);
      pass.lastError = message;
      if (await markRetry(db, row, message, clock.now())) pass.failed += 1;
      else pass.retrying += 1;
      continue;
    }
    await markSent(db, row.id, clock.now());
    pass.sent += 1;
  }
  return pass;
}

async function markSent(db: Db, id: string, now: Date): Promise<void> {
  await db
    .updateTable('mail_outbox')
    .set({ status: 'sent', sent_at: now, body_sealed: null, locked_until: null, last_error: null })
    .where('id', '=', id)
    .where('status', '=', 'pending')
    .execute();
}

/** Schedules the next attempt, or gives the mail up after MAIL_MAX_ATTEMPTS (true). */
async function markRetry(db: Db, row: MailOutboxRow, error: string, now: Date): Promise<boolean> {
  const givenUp = row.attempts >= MAIL_MAX_ATTEMPTS;
  await db
    .updateTable('mail_outbox')
    .set(
      givenUp
        ? { status: 'failed', body_sealed: null, locked_until: null, last_error: error }
        : { next_attempt_at: new Date(now.getTime() + mailRetryDelay(row.attempts)), locked_until: null, last_error: error },
    )
    .where('id', '=', row.id)
    .where('status', '=', 'pending')
    .execute();
  return givenUp;
}
