import { createBillingPortal as create } from '@sdx/domain/api';
import { tenantOf } from '../middleware/tenant';
import { route } from './route';

/** POST /v1/billing/portal — 201 with the Stripe billing portal session to send the member to. */
export const createBillingPortal = route('createBillingPortal', {
  access: 'admin',
  handler: async ({ deps: { services }, res }, body) => {
    res.status(201).json(await create(services, tenantOf(res), body && typeof body === 'object' ? body : undefined));
  },
});
