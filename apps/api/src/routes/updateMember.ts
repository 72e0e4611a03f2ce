import { changeMemberRole } from '@sdx/domain/api';
import { caller } from '../middleware/client';
import { tenantOf } from '../middleware/tenant';
import { route } from './route';

/** PATCH /v1/workspaces/{workspace_id}/members/{user_id} — change a member's role. */
export const updateMember = route('updateMember', {
  access: 'admin',
  handler: async ({ deps: { services }, req, res }, body) => {
    const { role } = body;
    res.json(await changeMemberRole(services, tenantOf(res).workspace.id, String(req.params.user_id), role, caller(req, res)));
  },
});
