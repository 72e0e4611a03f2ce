import { sql } from 'kysely';
import { type AppConfig, sendsMail } from '@sdx/config';
import type { Executor } from '@sdx/db';
import { newId } from '../ids';
import { sealerOf } from '../sealing';

/**
 * The mail outbox (extensions-2.md 2): a mail is a row written in the transaction of the change
 * that causes it, so it exists exactly when the change committed, and a crash loses none. The
 * body (text and HTML, whose links are secrets) is sealed at rest and dropped once sent.
 * send.ts sends the rows; delivery/mail-sender.ts runs it in the API and worker processes.
 */

/** A rendered mail to queue: its template's name (for the per-address caps), subject and both parts. */
export interface OutgoingMail {
  to: string;
  template: string;
  subject: string;
  text: string;
  html: string;
}

/** The sealed form of a mail's body: JSON `{text, html}`. */
export interface MailBody {
  text: string;
  html: string;
}

/** Whether this service sends mail at all (SMTP_URL, or outside production the dev outbox): without, nothing is queued. */
export function mailEnabled(config: Pick<AppConfig, 'smtpUrl' | 'devMailDir'>): boolean {
  return sendsMail(config);
}

/**
 * Writes the mail into the outbox in the caller's transaction (`db` should be it: a rollback
 * takes the mail with it). When the service sends no mail (no SMTP_URL and no dev outbox: in
 * production) nothing is written and the answer is false.
 */
export async function queueMail(
  db: Executor,
  config: Pick<AppConfig, 'smtpUrl' | 'devMailDir' | 'secretsKey' | 'secretsKeyPrevious'>,
  message: OutgoingMail,
): Promise<boolean> {
  if (!mailEnabled(config)) return false;
  const body: MailBody = { text: message.text, html: message.html };
  await db
    .insertInto('mail_outbox')
    .values({
      id: newId('msg'),
      recipient: message.to,
      template: message.template,
      subject: message.subject,
      body_sealed: sealerOf(config).seal(JSON.stringify(body)),
    })
    .execute();
  return true;
}

/**
 * Mails of these templates queued for the address within the last `withinMs` (whatever became
 * of them): the per-address caps on reset and verification mails count them.
 */
export async function recentMailCount(db: Executor, recipient: string, templates: string[], withinMs: number): Promise<number> {
  if (templates.length === 0) return 0;
  const row = await db
    .selectFrom('mail_outbox')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .where('recipient', '=', recipient)
    .where('template', 'in', templates)
    .where('created_at', '>', sql<Date>`now() - ${`${Math.max(0, Math.floor(withinMs))} milliseconds`}::interval`)
    .executeTakeFirstOrThrow();
  return Number(row.n);
}
