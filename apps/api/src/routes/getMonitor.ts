import type { RequestHandler } from 'express';
import { getMonitorOrThrow, renderMonitor } from '@sdx/domain/api';
import type { ApiDeps } from '../deps';
import { tenantOf } from '../middleware/tenant';

/** GET /v1/monitors/{monitor_id} */
export const getMonitor = ({ services }: ApiDeps): RequestHandler => async (req, res) => {
  res.json(renderMonitor(await getMonitorOrThrow(services.db, tenantOf(res), String(req.params.monitor_id))));
};
