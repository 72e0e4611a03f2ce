import { resendVerification as resend } from '@sdx/domain/api';
import { clientMeta } from '../middleware/client';
import { route } from './route';

/** POST /v1/auth/verify/resend — 202 whatever the email; a new link when it waits for verification. */
export const resendVerification = route('resendVerification', {
  access: 'public',
  handler: async ({ deps: { services, loginLimiter, mailer }, req, res }, body) => {
    const { email } = body;
    await loginLimiter.mailRequest(clientMeta(req).ip ?? 'unknown');
    await resend(services, email);
    mailer?.kick();
    res.status(202).json({ accepted: true });
  },
});
