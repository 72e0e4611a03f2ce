import type { RequestHandler } from 'express';
import { renderMonitor, resumeMonitor as resume } from '@sdx/domain/api';
import type { ApiDeps } from '../deps';
import { tenantOf } from '../middleware/tenant';

/** POST /v1/monitors/{monitor_id}/resume */
export const resumeMonitor = ({ services }: ApiDeps): RequestHandler => async (req, res) => {
  res.json(renderMonitor(await resume(services, tenantOf(res), String(req.params.monitor_id))));
};
