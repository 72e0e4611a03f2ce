import { updateAutoRecharge as update } from '@sdx/domain/api';
import { actor } from '../middleware/client';
import { tenantOf } from '../middleware/tenant';
import { route } from './route';

/** PUT /v1/billing/auto-recharge — the settings now, with the saved card. */
export const updateAutoRecharge = route('updateAutoRecharge', {
  access: 'admin',
  handler: async ({ deps: { services }, req, res }, body) => {
    res.json(await update(services, tenantOf(res), body, actor(req, res)));
  },
});
