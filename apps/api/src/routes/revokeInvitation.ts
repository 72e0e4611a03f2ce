import { revokeInvitation as revoke } from '@sdx/domain/api';
import { actor } from '../middleware/client';
import { tenantOf } from '../middleware/tenant';
import { route } from './route';

/** DELETE /v1/workspaces/{workspace_id}/invitations/{invitation_id} — 204. */
export const revokeInvitation = route('revokeInvitation', {
  access: 'admin',
  handler: async ({ deps: { services }, req, res }) => {
    await revoke(services, tenantOf(res).workspace.id, String(req.params.invitation_id), actor(req, res));
    res.status(204).end();
  },
});
