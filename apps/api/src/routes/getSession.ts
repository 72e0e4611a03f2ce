import type { RequestHandler } from 'express';
import { defaultWorkspaceOf, listUserWorkspaces, sessionExpiresAt } from '@sdx/domain/api';
import type { AppDeps } from '../deps';
import { principalOf } from '../middleware/auth';

/** GET /v1/auth/session — the signed-in user, their workspaces, the CSRF token and when the session ends if unused. */
export const getSession = ({ services }: AppDeps): RequestHandler => async (_req, res) => {
  const principal = principalOf(res);
  if (principal.kind !== 'session') throw new Error('session route reached without a session');
  const workspaces = await listUserWorkspaces(services.db, principal.user.id);
  res.json({
    user: principal.user,
    workspaces,
    default_workspace_id: await defaultWorkspaceOf(services.db, principal.user.id, workspaces),
    csrf_token: principal.session.csrf_token,
    expires_at: sessionExpiresAt(principal.session).toISOString(),
  });
};
