import type { RequestHandler } from 'express';
import { changePassword as change } from '@sdx/domain';
import type { AppDeps } from '../deps';
import { principalOf } from '../middleware/auth';
import { clientMeta } from '../middleware/client';

/**
 * POST /v1/auth/password — 204; every other session of the user ends. A wrong current password
 * is 401 invalid_credentials and counts as a failed sign-in for the user's email.
 */
export const changePassword = ({ services, loginLimiter }: AppDeps): RequestHandler => async (req, res) => {
  const principal = principalOf(res);
  if (principal.kind !== 'session') throw new Error('session route reached without a session');
  const { current_password: current, new_password: next } = req.body as { current_password: string; new_password: string };
  const email = principal.user.email ?? principal.user.id;
  const address = clientMeta(req).ip ?? 'unknown';
  await loginLimiter.attempt(email, address);
  await change(services, principal.user.id, principal.session.id, current, next);
  await loginLimiter.succeeded(email, address);
  res.status(204).end();
};
