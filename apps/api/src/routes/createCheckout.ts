import { createCheckout as create } from '@sdx/domain/api';
import { actor } from '../middleware/client';
import { tenantOf } from '../middleware/tenant';
import { route } from './route';

/** POST /v1/billing/checkout — 201 with the Stripe Checkout Session to send the buyer to. */
export const createCheckout = route('createCheckout', {
  access: 'admin',
  handler: async ({ deps: { services }, req, res }, body) => {
    res.status(201).json(await create(services, tenantOf(res), body, actor(req, res)));
  },
});
