import { deleteSchedule as remove } from '@sdx/domain/api';
import { tenantOf } from '../middleware/tenant';
import { route } from './route';

/** DELETE /v1/schedules/{schedule_id} — 204, soft delete. */
export const deleteSchedule = route('deleteSchedule', {
  access: 'member',
  handler: async ({ deps: { services }, req, res }) => {
    await remove(services, tenantOf(res), String(req.params.schedule_id));
    res.status(204).end();
  },
});
