import { updateWorkspace as update } from '@sdx/domain/api';
import { actor } from '../middleware/client';
import { tenantOf } from '../middleware/tenant';
import { route } from './route';

/**
 * PATCH /v1/workspaces/{workspace_id} — rename, and/or require two-factor sign-in of session
 * callers (owner; turning it on needs the caller's own two-factor sign-in, else 409
 * two_factor_required).
 */
export const updateWorkspace = route('updateWorkspace', {
  access: 'owner',
  handler: async ({ deps: { services }, req, res }, body) => {
    const { name, require_two_factor: requireTwoFactor } = body;
    res.json(await update(services, tenantOf(res), { name: name?.trim(), requireTwoFactor }, actor(req, res)));
  },
});
