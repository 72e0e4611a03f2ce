import { deleteMonitor as remove } from '@sdx/domain/api';
import { tenantOf } from '../middleware/tenant';
import { route } from './route';

/** DELETE /v1/monitors/{monitor_id} — 204, soft delete. */
export const deleteMonitor = route('deleteMonitor', {
  access: 'member',
  handler: async ({ deps: { services }, req, res }) => {
    await remove(services, tenantOf(res), String(req.params.monitor_id));
    res.status(204).end();
  },
});
