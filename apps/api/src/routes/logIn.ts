import type { RequestHandler } from 'express';
import { ApiError, checkCredentials, signIn } from '@sdx/domain';
import type { AppDeps } from '../deps';
import { clientMeta } from '../middleware/client';
import { setSessionCookie } from '../middleware/session-cookie';

/**
 * POST /v1/auth/login — 200 with the user, their workspaces, the CSRF token and the session
 * cookie. A wrong password and an unknown email get the same 401 invalid_credentials after the
 * same password check; failures are limited per email and per client address.
 */
export const logIn = ({ services, loginLimiter }: AppDeps): RequestHandler => async (req, res) => {
  const { email, password } = req.body as { email: string; password: string };
  const meta = clientMeta(req);
  const address = meta.ip ?? 'unknown';
  await loginLimiter.attempt(email.trim(), address);
  const user = await checkCredentials(services.db, email, password);
  if (!user) throw new ApiError('invalid_credentials', 'The email or the password is wrong.');
  await loginLimiter.succeeded(email.trim(), address);
  const signed = await signIn(services, user, meta);
  setSessionCookie(res, signed.started.token, services.config.nodeEnv === 'production');
  res.json({ user: signed.user, workspaces: signed.workspaces, default_workspace_id: signed.defaultWorkspaceId, csrf_token: signed.started.session.csrf_token });
};
