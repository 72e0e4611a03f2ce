import { getBilling as read } from '@sdx/domain/api';
import { tenantOf } from '../middleware/tenant';
import { route } from './route';

/** GET /v1/billing — packs, auto-recharge, limits and this month's spend; answers without Stripe too. */
export const getBilling = route('getBilling', {
  access: 'viewer',
  handler: async ({ deps: { services }, res }) => {
    res.json(await read(services, tenantOf(res)));
  },
});
