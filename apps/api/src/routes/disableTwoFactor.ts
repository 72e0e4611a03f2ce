import type { RequestHandler } from 'express';
import { disableTwoFactor as disable } from '@sdx/domain/api';
import type { AppDeps } from '../deps';
import { principalOf } from '../middleware/auth';
import { clientMeta } from '../middleware/client';

/**
 * POST /v1/auth/2fa/disable — 204 after the password and a current code (or an unused recovery
 * code). A wrong password (401 invalid_credentials) or code (401 invalid_otp) counts as a failed
 * sign-in for the user's email.
 */
export const disableTwoFactor = ({ services, loginLimiter }: AppDeps): RequestHandler => async (req, res) => {
  const principal = principalOf(res);
  if (principal.kind !== 'session') throw new Error('session route reached without a session');
  const { password, code } = req.body as { password: string; code: string };
  const meta = clientMeta(req);
  const email = principal.user.email ?? principal.user.id;
  const address = meta.ip ?? 'unknown';
  await loginLimiter.attempt(email, address);
  await disable(services, principal.user.id, password, code, meta);
  await loginLimiter.succeeded(email, address);
  res.status(204).end();
};
