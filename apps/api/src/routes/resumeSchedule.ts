import { renderScheduleView, resumeSchedule as resume } from '@sdx/domain/api';
import { tenantOf } from '../middleware/tenant';
import { route } from './route';

/** POST /v1/schedules/{schedule_id}/resume */
export const resumeSchedule = route('resumeSchedule', {
  access: 'member',
  handler: async ({ deps: { services }, req, res }) => {
    const view = await resume(services, tenantOf(res), String(req.params.schedule_id));
    res.json(renderScheduleView(view));
  },
});
