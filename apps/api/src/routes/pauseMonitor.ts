import type { RequestHandler } from 'express';
import { pauseMonitor as pause, renderMonitor } from '@sdx/domain/api';
import type { ApiDeps } from '../deps';
import { tenantOf } from '../middleware/tenant';

/** POST /v1/monitors/{monitor_id}/pause */
export const pauseMonitor = ({ services }: ApiDeps): RequestHandler => async (req, res) => {
  res.json(renderMonitor(await pause(services, tenantOf(res), String(req.params.monitor_id))));
};
