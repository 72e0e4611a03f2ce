import nodemailer, { type Transporter } from 'nodemailer';

/** One message as the outbox hands it over: a text and an HTML part. */
export interface MailMessage {
  from: string;
  to: string;
  subject: string;
  text: string;
  html: string;
}

/** Bounds on one SMTP exchange, so that a server that hangs cannot hold a send past its lease. */
export const SMTP_TIMEOUTS = { connectionTimeout: 10_000, greetingTimeout: 10_000, socketTimeout: 30_000 } as const;

/**
 * An SMTP client over nodemailer, from SMTP_URL (`smtp://user:pass@host:587`, `smtps://…` for
 * TLS from the start; see nodemailer's URL options). Each send opens its own connection: mail
 * is rare, and a pool would hold connections open for nothing. A refused or failed send throws;
 * the outbox (packages/domain/src/mail/send.ts) retries it.
 */
export class MailTransport {
  private readonly transporter: Transporter;

  constructor(smtpUrl: string) {
    this.transporter = nodemailer.createTransport({ url: smtpUrl, ...SMTP_TIMEOUTS });
  }

  async send(message: MailMessage): Promise<void> {
    await this.transporter.sendMail({ ...message, disableFileAccess: true, disableUrlAccess: true });
  }

  close(): void {
    this.transporter.close();
  }
}

/** The transport of SMTP_URL. */
export function createMailTransport(smtpUrl: string): MailTransport {
  return new MailTransport(smtpUrl);
}
