import type { RequestHandler } from 'express';
import { listScheduleViews, renderScheduleView } from '@sdx/domain';
import type { ApiDeps } from '../deps';
import { tenantOf } from '../middleware/tenant';

/** GET /v1/schedules — schedules that are not deleted, newest first, with recent runs. */
export const listSchedules = ({ services }: ApiDeps): RequestHandler => async (req, res) => {
  const limit = Number(req.query.limit ?? 50);
  const views = await listScheduleViews(services.db, tenantOf(res), limit);
  res.json(views.map(renderScheduleView));
};
