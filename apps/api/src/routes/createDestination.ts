import { createDestination as create, renderDestination } from '@sdx/domain/api';
import { actor } from '../middleware/client';
import { tenantOf } from '../middleware/tenant';
import { route } from './route';

/** POST /v1/destinations — 201 after the check write, never with the secret access key. */
export const createDestination = route('createDestination', {
  access: 'admin',
  handler: async ({ deps: { services }, req, res }, body) => {
    const row = await create(services, tenantOf(res), body, actor(req, res));
    res.status(201).json(renderDestination(row));
  },
});
