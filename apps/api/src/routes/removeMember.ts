import { removeMember as remove } from '@sdx/domain/api';
import { caller } from '../middleware/client';
import { tenantOf } from '../middleware/tenant';
import { route } from './route';

/** DELETE /v1/workspaces/{workspace_id}/members/{user_id} — 204; members may remove themselves. */
export const removeMember = route('removeMember', {
  access: 'viewer',
  handler: async ({ deps: { services }, req, res }) => {
    await remove(services, tenantOf(res).workspace.id, String(req.params.user_id), caller(req, res));
    res.status(204).end();
  },
});
