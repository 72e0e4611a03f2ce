import type { RequestHandler } from 'express';
import { getScheduleView, renderScheduleView } from '@sdx/domain/api';
import type { ApiDeps } from '../deps';
import { tenantOf } from '../middleware/tenant';

/** GET /v1/schedules/{schedule_id} */
export const getSchedule = ({ services }: ApiDeps): RequestHandler => async (req, res) => {
  const view = await getScheduleView(services.db, tenantOf(res), String(req.params.schedule_id));
  res.json(renderScheduleView(view));
};
