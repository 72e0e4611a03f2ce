import type { RequestHandler } from 'express';
import { deleteSchedule as remove } from '@sdx/domain/api';
import type { ApiDeps } from '../deps';
import { tenantOf } from '../middleware/tenant';

/** DELETE /v1/schedules/{schedule_id} — 204, soft delete. */
export const deleteSchedule = ({ services }: ApiDeps): RequestHandler => async (req, res) => {
  await remove(services, tenantOf(res), String(req.params.schedule_id));
  res.status(204).end();
};
