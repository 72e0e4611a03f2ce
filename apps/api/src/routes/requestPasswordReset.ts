import type { RequestHandler } from 'express';
import { requestPasswordReset as request } from '@sdx/domain/api';
import type { AppDeps } from '../deps';
import { clientMeta } from '../middleware/client';

/** POST /v1/auth/password-reset — 202 whatever the email; 503 mail_unavailable without SMTP_URL. */
export const requestPasswordReset = ({ services, loginLimiter, mailer }: AppDeps): RequestHandler => async (req, res) => {
  const { email } = req.body as { email: string };
  await loginLimiter.mailRequest(clientMeta(req).ip ?? 'unknown');
  await request(services, email);
  mailer?.kick();
  res.status(202).json({ accepted: true });
};
