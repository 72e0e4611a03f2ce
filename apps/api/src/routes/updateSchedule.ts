import type { RequestHandler } from 'express';
import { renderScheduleView, updateSchedule as update } from '@sdx/domain/api';
import type { ApiDeps } from '../deps';
import { tenantOf } from '../middleware/tenant';
import { scheduleInput } from './createSchedule';

/** PUT /v1/schedules/{schedule_id} — full replacement of recipe and recurrence. */
export const updateSchedule = ({ services }: ApiDeps): RequestHandler => async (req, res) => {
  const view = await update(services, tenantOf(res), String(req.params.schedule_id), scheduleInput(req));
  res.json(renderScheduleView(view));
};
