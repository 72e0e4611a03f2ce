import type { RequestHandler } from 'express';
import { renderScheduleView, resumeSchedule as resume } from '@sdx/domain/api';
import type { ApiDeps } from '../deps';
import { tenantOf } from '../middleware/tenant';

/** POST /v1/schedules/{schedule_id}/resume */
export const resumeSchedule = ({ services }: ApiDeps): RequestHandler => async (req, res) => {
  const view = await resume(services, tenantOf(res), String(req.params.schedule_id));
  res.json(renderScheduleView(view));
};
