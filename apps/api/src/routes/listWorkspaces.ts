import { listUserWorkspaces, renderWorkspace, type Role } from '@sdx/domain/api';
import { principalOf } from '../middleware/auth';
import { tenantOf } from '../middleware/tenant';
import { route } from './route';

/** GET /v1/workspaces — a user's every workspace; for an API key, its one workspace. */
export const listWorkspaces = route('listWorkspaces', {
  access: 'viewer',
  // The user's own list: a workspace requiring two-factor sign-in does not refuse it.
  actsOnWorkspace: false,
  handler: async ({ deps: { services }, res }) => {
    const principal = principalOf(res);
    if (principal.kind === 'session') {
      res.json(await listUserWorkspaces(services.db, principal.user.id));
      return;
    }
    const tenant = tenantOf(res);
    res.json([renderWorkspace(tenant.workspace, tenant.role as Role)]);
  },
});
