import { deleteDestination as remove } from '@sdx/domain/api';
import { actor } from '../middleware/client';
import { tenantOf } from '../middleware/tenant';
import { route } from './route';

/** DELETE /v1/destinations/{destination_id} — 204; pending deliveries to it fail. */
export const deleteDestination = route('deleteDestination', {
  access: 'admin',
  handler: async ({ deps: { services }, req, res }) => {
    await remove(services, tenantOf(res), String(req.params.destination_id), actor(req, res));
    res.status(204).end();
  },
});
