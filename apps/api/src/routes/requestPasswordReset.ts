import { requestPasswordReset as request } from '@sdx/domain/api';
import { clientMeta } from '../middleware/client';
import { route } from './route';

/** POST /v1/auth/password-reset — 202 whatever the email; 503 mail_unavailable without SMTP_URL. */
export const requestPasswordReset = route('requestPasswordReset', {
  access: 'public',
  handler: async ({ deps: { services, loginLimiter, mailer }, req, res }, body) => {
    const { email } = body;
    await loginLimiter.mailRequest(clientMeta(req).ip ?? 'unknown');
    await request(services, email);
    mailer?.kick();
    res.status(202).json({ accepted: true });
  },
});
