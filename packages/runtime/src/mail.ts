import { MailSender, type Services } from '@sdx/domain/runtime';
import { createMailTransport, DevOutboxTransport } from '@sdx/mail';

/**
 * A process's mail sender: it sends the mail outbox (packages/domain/src/mail) on a timer. Every
 * API process and every worker runs one, so `npm start` and a stack without a worker deliver
 * too; the API's is also kicked by the routes that queued a mail, after their commit
 * (`deps.mailer?.kick()`). Its transport: SMTP_URL's server, or outside production without
 * SMTP_URL the local dev outbox (config.devMailDir, listed by GET /v1/dev/mail). Null when
 * neither: nothing is queued then. Whoever starts it closes it.
 */
export function startMailSender(services: Pick<Services, 'db' | 'config' | 'clock' | 'log'>, options: { intervalMs?: number } = {}): MailSender | null {
  const { config } = services;
  const transport = config.smtpUrl ? createMailTransport(config.smtpUrl) : config.devMailDir ? new DevOutboxTransport(config.devMailDir) : null;
  if (!transport) return null;
  return new MailSender({
    db: services.db,
    config,
    clock: services.clock,
    log: services.log,
    transport,
    intervalMs: options.intervalMs,
  });
}
