import type { AppConfig } from '@sdx/config';
import type { MailTransport } from '@sdx/domain/runtime';
import { createMailTransport, DevOutboxTransport } from '@sdx/mail';

/**
 * The transport of a process's `mail` background task (catalog.ts): SMTP_URL's server, or
 * outside production without SMTP_URL the local dev outbox (config.devMailDir, listed by GET
 * /v1/dev/mail). Null when neither: nothing is queued then, and the task does not run.
 */
export function mailTransportOf(config: AppConfig): (MailTransport & { close?(): void }) | null {
  return config.smtpUrl ? createMailTransport(config.smtpUrl) : config.devMailDir ? new DevOutboxTransport(config.devMailDir) : null;
}
