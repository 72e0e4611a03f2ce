import { defaultWorkspaceOf, listUserWorkspaces, sessionExpiresAt } from '@sdx/domain/api';
import { principalOf } from '../middleware/auth';
import { route } from './route';

/** GET /v1/auth/session — the signed-in user, their workspaces, the CSRF token and when the session ends if unused. */
export const getSession = route('getSession', {
  access: 'session',
  handler: async ({ deps: { services }, res }) => {
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
  },
});
