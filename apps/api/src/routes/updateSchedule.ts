import { renderScheduleView, updateSchedule as update } from '@sdx/domain/api';
import { tenantOf } from '../middleware/tenant';
import { scheduleInput } from './createSchedule';
import { route } from './route';

/** PUT /v1/schedules/{schedule_id} — full replacement of recipe and recurrence. */
export const updateSchedule = route('updateSchedule', {
  access: 'member',
  handler: async ({ deps: { services }, req, res }, body) => {
    const view = await update(services, tenantOf(res), String(req.params.schedule_id), scheduleInput(body));
    res.json(renderScheduleView(view));
  },
});
