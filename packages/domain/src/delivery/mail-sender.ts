import type { Logger } from 'pino';
import type { AppConfig } from '@sdx/config';
import type { Db } from '@sdx/db';
import type { Clock } from '../time';
import { Pump } from '../pump';
import { MAIL_REQUEST_BATCH, resolveMailRequests } from '../accounts/mail-requests';
import { MAIL_BATCH, type MailTransport, sendDueMail } from '../mail/send';

/** A mail sender looks at the outbox this often (and at once when kicked). */
export const MAIL_POLL_INTERVAL_MS = 2_000;

export interface MailSenderOptions {
  db: Db;
  /** The whole configuration: resolving a mail request renders its mail (APP_URL) and seals it. */
  config: AppConfig;
  clock: Clock;
  log: Logger;
  /** The SMTP client (packages/mail), closed with the sender when it has `close`. */
  transport: MailTransport & { close?(): void };
  intervalMs?: number;
}

/**
 * Sends the mail outbox of a process (send.ts `sendDueMail`): on a timer, and at once when
 * `kick` is called (a route calls it after the commit that queued a mail, so the mail leaves
 * without waiting for the timer). Each pass first resolves the mail requests of resets and
 * resends into their mails (accounts/mail-requests.ts), then sends. Passes run one at a time, until no full batch is left; any
 * number of senders (API and worker processes) may run side by side, as claims skip each
 * other's rows.
 */
export class MailSender {
  private readonly pump: Pump;

  constructor(private readonly options: MailSenderOptions) {
    this.pump = new Pump(() => this.batch(), options.intervalMs ?? MAIL_POLL_INTERVAL_MS, (err) =>
      options.log.warn({ err: err.message }, 'mail outbox pass failed; retrying shortly'),
    );
  }

  /** Looks at the outbox now (or right after the pass in progress). */
  kick(): void {
    this.pump.kick();
  }

  /** Resolves once the pass in progress (if any) has ended. */
  async idle(): Promise<void> {
    await this.pump.idle();
  }

  /** Stops the timer, lets the pass in progress finish, closes the transport. */
  async close(): Promise<void> {
    await this.pump.close();
    this.options.transport.close?.();
  }

  /** One batch of due mail sent; true when it was full. */
  private async batch(): Promise<boolean> {
    const { db, config, transport, clock, log } = this.options;
    const requests = await resolveMailRequests(db, { config, clock });
    if (requests.failed) log.warn({ failed: requests.failed, err: requests.lastError }, 'mail requests not resolved; retrying shortly');
    const pass = await sendDueMail(db, config, transport, clock);
    if (pass.sent) log.debug({ sent: pass.sent }, 'mail sent');
    if (pass.retrying || pass.failed) log.warn({ retrying: pass.retrying, failed: pass.failed, err: pass.lastError }, 'mail not sent');
    return pass.claimed >= MAIL_BATCH || requests.resolved + requests.failed >= MAIL_REQUEST_BATCH;
  }
}
