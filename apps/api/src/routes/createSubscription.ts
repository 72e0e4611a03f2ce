import { createSubscription as create } from '@sdx/domain/api';
import { actor } from '../middleware/client';
import { tenantOf } from '../middleware/tenant';
import { route } from './route';

/** POST /v1/billing/subscription — 201 a Checkout Session for a new subscription, or 200 the live subscription changed to the plan. */
export const createSubscription = route('createSubscription', {
  access: 'admin',
  handler: async ({ deps: { services }, req, res }, body) => {
    const answer = await create(services, tenantOf(res), body, actor(req, res));
    res.status(answer.status).json(answer.body);
  },
});
