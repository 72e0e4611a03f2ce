import type { RequestHandler } from 'express';
import { endSession } from '@sdx/domain/api';
import type { AppDeps } from '../deps';
import { principalOf } from '../middleware/auth';
import { clearSessionCookie } from '../middleware/session-cookie';

/** POST /v1/auth/logout — 204; the session ends on every process and the cookie is cleared. */
export const logOut = ({ services }: AppDeps): RequestHandler => async (_req, res) => {
  const principal = principalOf(res);
  if (principal.kind !== 'session') throw new Error('session route reached without a session');
  await endSession(services.db, principal.session.id);
  clearSessionCookie(res, services.config.nodeEnv === 'production');
  res.status(204).end();
};
