import type { Logger } from 'pino';
import type { AppConfig } from '@sdx/config';
import type { Db } from '@sdx/db';
import type { Clock } from '../time';
import { MAIL_REQUEST_BATCH, resolveMailRequests } from '../accounts/mail-requests';
import { MAIL_BATCH, type MailTransport, sendDueMail } from '../mail/send';

export interface MailBatchDeps {
  db: Db;
  /** The whole configuration: resolving a mail request renders its mail (APP_URL) and seals it. */
  config: AppConfig;
  clock: Clock;
  log: Logger;
  /** The SMTP client or the dev outbox (packages/mail). */
  transport: MailTransport;
}

/**
 * One batch of the mail outbox: the mail requests of resets and resends first resolved into
 * their mails (accounts/mail-requests.ts), then the due mail sent (send.ts `sendDueMail`);
 * true when either batch was full, so more may wait. Run by the `mail` background task
 * (packages/runtime/src/background/catalog.ts); any number of processes run it side by side,
 * as claims skip each other's rows.
 */
export async function sendMailBatch(deps: MailBatchDeps): Promise<boolean> {
  const { db, config, transport, clock, log } = deps;
  const requests = await resolveMailRequests(db, { config, clock });
  if (requests.failed) log.warn({ failed: requests.failed, err: requests.lastError }, 'mail requests not resolved; retrying shortly');
  const pass = await sendDueMail(db, config, transport, clock);
  if (pass.sent) log.debug({ sent: pass.sent }, 'mail sent');
  if (pass.retrying || pass.failed) log.warn({ retrying: pass.retrying, failed: pass.failed, err: pass.lastError }, 'mail not sent');
  return pass.claimed >= MAIL_BATCH || requests.resolved + requests.failed >= MAIL_REQUEST_BATCH;
}
