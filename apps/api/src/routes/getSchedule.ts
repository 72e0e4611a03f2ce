import { getScheduleView, renderScheduleView } from '@sdx/domain/api';
import { tenantOf } from '../middleware/tenant';
import { route } from './route';

/** GET /v1/schedules/{schedule_id} */
export const getSchedule = route('getSchedule', {
  access: 'viewer',
  handler: async ({ deps: { services }, req, res }) => {
    const view = await getScheduleView(services.db, tenantOf(res), String(req.params.schedule_id));
    res.json(renderScheduleView(view));
  },
});
