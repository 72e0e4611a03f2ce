import { pauseSchedule as pause, renderScheduleView } from '@sdx/domain/api';
import { tenantOf } from '../middleware/tenant';
import { route } from './route';

/** POST /v1/schedules/{schedule_id}/pause */
export const pauseSchedule = route('pauseSchedule', {
  access: 'member',
  handler: async ({ deps: { services }, req, res }) => {
    const view = await pause(services, tenantOf(res), String(req.params.schedule_id));
    res.json(renderScheduleView(view));
  },
});
