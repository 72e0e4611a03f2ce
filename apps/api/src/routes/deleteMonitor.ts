import type { RequestHandler } from 'express';
import { deleteMonitor as remove } from '@sdx/domain/api';
import type { ApiDeps } from '../deps';
import { tenantOf } from '../middleware/tenant';

/** DELETE /v1/monitors/{monitor_id} — 204, soft delete. */
export const deleteMonitor = ({ services }: ApiDeps): RequestHandler => async (req, res) => {
  await remove(services, tenantOf(res), String(req.params.monitor_id));
  res.status(204).end();
};
