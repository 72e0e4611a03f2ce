import type { RequestHandler } from 'express';
import { resendVerification as resend } from '@sdx/domain/api';
import type { AppDeps } from '../deps';
import { clientMeta } from '../middleware/client';

/** POST /v1/auth/verify/resend — 202 whatever the email; a new link when it waits for verification. */
export const resendVerification = ({ services, loginLimiter, mailer }: AppDeps): RequestHandler => async (req, res) => {
  const { email } = req.body as { email: string };
  await loginLimiter.mailRequest(clientMeta(req).ip ?? 'unknown');
  await resend(services, email);
  mailer?.kick();
  res.status(202).json({ accepted: true });
};
