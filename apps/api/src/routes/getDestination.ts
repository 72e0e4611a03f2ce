import { getDestinationOrThrow, renderDestination } from '@sdx/domain/api';
import { tenantOf } from '../middleware/tenant';
import { route } from './route';

/** GET /v1/destinations/{destination_id} — unknown or another workspace's: 404 destination_not_found. */
export const getDestination = route('getDestination', {
  access: 'viewer',
  handler: async ({ deps: { services }, req, res }) => {
    res.json(renderDestination(await getDestinationOrThrow(services.db, tenantOf(res), String(req.params.destination_id))));
  },
});
