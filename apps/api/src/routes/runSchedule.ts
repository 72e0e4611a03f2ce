import { renderScheduleView, runScheduleNow } from '@sdx/domain/api';
import { tenantOf } from '../middleware/tenant';
import { route } from './route';

/** POST /v1/schedules/{schedule_id}/run — 202 with the schedule; runs[0] is the new manual occurrence. */
export const runSchedule = route('runSchedule', {
  access: 'member',
  handler: async ({ deps: { services }, req, res }) => {
    const view = await runScheduleNow(services, tenantOf(res), String(req.params.schedule_id));
    res.status(202).json(renderScheduleView(view));
  },
});
