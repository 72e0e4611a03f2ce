import nodemailer from 'nodemailer';
import type { Logger } from 'pino';

/** What the API mails. Without SMTP_URL there is no mailer and nothing is mailed. */
export interface Mailer {
  sendInvitation(message: { to: string; workspaceName: string; role: string; acceptUrl: string; token: string; expiresAt: Date }): Promise<void>;
  close(): void;
}

export function createMailer(smtpUrl: string | null, from: string, log: Logger): Mailer | null {
  if (!smtpUrl) return null;
  const transport = nodemailer.createTransport(smtpUrl);
  return {
    async sendInvitation({ to, workspaceName, role, acceptUrl, token, expiresAt }) {
      try {
        await transport.sendMail({
          from,
          to,
          subject: `You are invited to ${workspaceName}`,
          text: [
            `You are invited to join the workspace "${workspaceName}" as ${role}.`,
            '',
            `Accept it here: ${acceptUrl}`,
            `(or sign in and send POST /v1/invitations/accept with the token ${token})`,
            '',
            `The invitation expires at ${expiresAt.toISOString()}.`,
          ].join('\n'),
        });
      } catch (err) {
        // The invitation stands (its token was answered to the inviter); the mail is a convenience.
        log.warn({ err: (err as Error).message, to }, 'could not mail the invitation');
      }
    },
    close() {
      transport.close();
    },
  };
}
