import { ApiError, revokeApiKey } from '@sdx/domain/api';
import { actor } from '../middleware/client';
import { tenantOf } from '../middleware/tenant';
import { route } from './route';

/**
 * DELETE /v1/keys/{key_id} — 204; the key fails on its next request, and so does everything made
 * with it, down the chain (a calling key made with it is spared: a rotation). Unknown or another
 * workspace's: 404.
 */
export const revokeKey = route('revokeKey', {
  access: 'admin',
  handler: async ({ deps: { services }, req, res }) => {
    const keyId = String(req.params.key_id);
    const tenant = tenantOf(res);
    if (!(await revokeApiKey(services.db, keyId, { workspaceId: tenant.workspace.id, actor: actor(req, res), sparing: tenant.keyId }))) {
      throw new ApiError('key_not_found', 'No such API key in this workspace.', { key_id: keyId });
    }
    res.status(204).end();
  },
});
