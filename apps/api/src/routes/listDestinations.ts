import { listDestinations as list, renderDestination } from '@sdx/domain/api';
import { tenantOf } from '../middleware/tenant';
import { route } from './route';

/** GET /v1/destinations — newest first, never a secret. */
export const listDestinations = route('listDestinations', {
  access: 'viewer',
  handler: async ({ deps: { services }, res }) => {
    res.json((await list(services.db, tenantOf(res))).map(renderDestination));
  },
});
