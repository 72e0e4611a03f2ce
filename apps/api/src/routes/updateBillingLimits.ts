import { updateBillingLimits as update } from '@sdx/domain/api';
import { actor } from '../middleware/client';
import { tenantOf } from '../middleware/tenant';
import { route } from './route';

/** PUT /v1/billing/limits — the spend cap and low-credits alert now; works without Stripe. */
export const updateBillingLimits = route('updateBillingLimits', {
  access: 'admin',
  handler: async ({ deps: { services }, req, res }, body) => {
    res.json(await update(services, tenantOf(res), body, actor(req, res)));
  },
});
