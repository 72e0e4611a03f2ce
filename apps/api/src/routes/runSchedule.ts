import type { RequestHandler } from 'express';
import { renderScheduleView, runScheduleNow } from '@sdx/domain/api';
import type { ApiDeps } from '../deps';
import { tenantOf } from '../middleware/tenant';

/** POST /v1/schedules/{schedule_id}/run — 202 with the schedule; runs[0] is the new manual occurrence. */
export const runSchedule = ({ services }: ApiDeps): RequestHandler => async (req, res) => {
  const view = await runScheduleNow(services, tenantOf(res), String(req.params.schedule_id));
  res.status(202).json(renderScheduleView(view));
};
