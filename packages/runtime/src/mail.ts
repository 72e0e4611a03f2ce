import { MailSender, type Services } from '@sdx/domain';
import { createMailTransport } from '@sdx/mail';

/**
 * A process's mail sender: it sends the mail outbox (packages/domain/src/mail) on a timer. Every
 * API process and every worker runs one, so `npm start` and a stack without a worker deliver
 * too; the API's is also kicked by the routes that queued a mail, after their commit
 * (`deps.mailer?.kick()`). Null without SMTP_URL: nothing is queued then. Whoever starts it
 * closes it.
 */
export function startMailSender(services: Pick<Services, 'db' | 'config' | 'clock' | 'log'>, options: { intervalMs?: number } = {}): MailSender | null {
  const { config } = services;
  if (!config.smtpUrl) return null;
  return new MailSender({
    db: services.db,
    config,
    clock: services.clock,
    log: services.log,
    transport: createMailTransport(config.smtpUrl),
    intervalMs: options.intervalMs,
  });
}
