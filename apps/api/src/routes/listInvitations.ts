import { listInvitations as list, renderInvitation } from '@sdx/domain/api';
import { tenantOf } from '../middleware/tenant';
import { route } from './route';

/** GET /v1/workspaces/{workspace_id}/invitations — pending ones, newest first, without tokens. */
export const listInvitations = route('listInvitations', {
  access: 'viewer',
  handler: async ({ deps: { services }, res }) => {
    res.json((await list(services.db, tenantOf(res).workspace.id)).map(renderInvitation));
  },
});
