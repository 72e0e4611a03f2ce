import { getCredits, listUserWorkspaces, renderWorkspace, type Role } from '@sdx/domain/api';
import { principalOf } from '../middleware/auth';
import { tenantOf } from '../middleware/tenant';
import { route } from './route';

/**
 * GET /v1/account — the workspace the request acts on. A session caller gets its user, every
 * membership and its role in that workspace; an API key, its one workspace and its own role.
 */
export const getAccount = route('getAccount', {
  access: 'viewer',
  handler: async ({ deps: { services }, res }) => {
    const { workspace, keyId, role } = tenantOf(res);
    const principal = principalOf(res);
    const session = principal.kind === 'session' ? principal : null;
    res.json({
      organization_id: workspace.id,
      organization_name: workspace.name,
      monthly_quota: workspace.monthly_quota,
      rate_limit_per_minute: workspace.rate_limit_per_minute,
      max_result_limit: workspace.max_result_limit,
      max_active_jobs: workspace.max_active_jobs,
      authenticated_key_id: keyId,
      auth_type: session ? 'session' : 'api_key',
      role,
      user: session ? session.user : null,
      workspaces: session
        ? await listUserWorkspaces(services.db, session.user.id)
        : [renderWorkspace(workspace, (role ?? 'owner') as Role)],
      credits: await getCredits(services.db, workspace, services.clock.now()),
    });
  },
});
