import type { RequestHandler } from 'express';
import { pauseSchedule as pause, renderScheduleView } from '@sdx/domain/api';
import type { ApiDeps } from '../deps';
import { tenantOf } from '../middleware/tenant';

/** POST /v1/schedules/{schedule_id}/pause */
export const pauseSchedule = ({ services }: ApiDeps): RequestHandler => async (req, res) => {
  const view = await pause(services, tenantOf(res), String(req.params.schedule_id));
  res.json(renderScheduleView(view));
};
