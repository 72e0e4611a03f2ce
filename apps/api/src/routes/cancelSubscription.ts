import { cancelSubscription as cancel } from '@sdx/domain/api';
import { actor } from '../middleware/client';
import { tenantOf } from '../middleware/tenant';
import { route } from './route';

/** DELETE /v1/billing/subscription — the live subscription ends at the end of its period. */
export const cancelSubscription = route('cancelSubscription', {
  access: 'admin',
  handler: async ({ deps: { services }, req, res }) => {
    res.json(await cancel(services, tenantOf(res), actor(req, res)));
  },
});
