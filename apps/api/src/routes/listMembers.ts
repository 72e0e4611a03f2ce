import { listMembers as list } from '@sdx/domain/api';
import { tenantOf } from '../middleware/tenant';
import { route } from './route';

/** GET /v1/workspaces/{workspace_id}/members — oldest first. */
export const listMembers = route('listMembers', {
  access: 'viewer',
  handler: async ({ deps: { services }, res }) => {
    res.json(await list(services.db, tenantOf(res).workspace.id));
  },
});
