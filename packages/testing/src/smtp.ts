import type { AddressInfo } from 'node:net';
import { simpleParser } from 'mailparser';
import { SMTPServer } from 'smtp-server';

/** One message the catcher received, parsed. */
export interface CaughtMail {
  /** The first envelope recipient (RCPT TO), as the client sent it. */
  to: string;
  /** Every envelope recipient. */
  recipients: string[];
  from: string;
  subject: string;
  /** The text part ('' when none). */
  text: string;
  /** The HTML part ('' when none). */
  html: string;
  /** The raw message (headers and encoded parts). */
  raw: string;
}

export interface SmtpCatcher {
  /** smtp://127.0.0.1:PORT, for SMTP_URL. */
  url: string;
  port: number;
  /** Messages received, in order of arrival. */
  messages: CaughtMail[];
  /**
   * Resolves with the first message (received already or to come) that the predicate accepts, or
   * that was sent to the address given instead; rejects after `timeoutMs`. A predicate that
   * ignores its argument is asked again at each arrival.
   */
  waitFor(match: ((mail: CaughtMail) => boolean) | string, timeoutMs?: number): Promise<CaughtMail>;
  /** Refuse (true: every transaction answers 451) or accept messages again. */
  refuse(on: boolean): void;
  close(): Promise<void>;
}

/**
 * A real SMTP server on a free loopback port (the smtp-server package: no authentication
 * required, no TLS), whose messages are parsed with mailparser. Tests point SMTP_URL at it:
 * `startTestStack({ env: { SMTP_URL: catcher.url, APP_URL: 'http://console.test' } })`.
 */
export async function startSmtpCatcher(options: { port?: number } = {}): Promise<SmtpCatcher> {
  const messages: CaughtMail[] = [];
  const waiters = new Set<(mail: CaughtMail) => void>();
  let refusing = false;
  const server = new SMTPServer({
    authOptional: true,
    disabledCommands: ['STARTTLS'],
    hideSTARTTLS: true,
    logger: false,
    size: 10 * 1024 * 1024,
    onMailFrom(_address, _session, callback) {
      if (refusing) {
        const error = Object.assign(new Error('Try again later (the catcher refuses mail)'), { responseCode: 451 });
        callback(error);
        return;
      }
      callback();
    },
    onData(stream, session, callback) {
      const chunks: Buffer[] = [];
      stream.on('data', (chunk: Buffer) => chunks.push(chunk));
      stream.on('error', callback);
      stream.on('end', () => {
        const raw = Buffer.concat(chunks);
        simpleParser(raw)
          .then((parsed) => {
            const recipients = session.envelope.rcptTo.map((r) => r.address);
            const mail: CaughtMail = {
              to: recipients[0] ?? '',
              recipients,
              from: session.envelope.mailFrom ? session.envelope.mailFrom.address : '',
              subject: parsed.subject ?? '',
              text: parsed.text ?? '',
              html: typeof parsed.html === 'string' ? parsed.html : '',
              raw: raw.toString('utf8'),
            };
            messages.push(mail);
            for (const waiter of [...waiters]) waiter(mail);
            callback();
          })
          .catch((err: Error) => callback(err));
      });
    },
  });
  server.on('error', () => undefined);
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? 0, '127.0.0.1', () => {
      server.off('error', reject);
      resolve();
    });
  });
  const port = (server.server.address() as AddressInfo).port;

  return {
    url: `smtp://127.0.0.1:${port}`,
    port,
    messages,
    waitFor(match, timeoutMs = 10_000) {
      const accept = typeof match === 'string' ? (mail: CaughtMail) => mail.to === match : match;
      const found = messages.find(accept);
      if (found) return Promise.resolve(found);
      return new Promise<CaughtMail>((resolve, reject) => {
        const timer = setTimeout(() => {
          waiters.delete(waiter);
          reject(
            new Error(
              `no matching mail within ${timeoutMs} ms (${messages.length} received: ${messages.map((m) => `${m.to}: ${m.subject}`).join('; ') || 'none'})`,
            ),
          );
        }, timeoutMs);
        const waiter = (mail: CaughtMail) => {
          if (!accept(mail)) return;
          clearTimeout(timer);
          waiters.delete(waiter);
          resolve(mail);
        };
        waiters.add(waiter);
      });
    },
    refuse(on) {
      refusing = on;
    },
    close() {
      return new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
