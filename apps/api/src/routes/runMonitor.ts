import type { RequestHandler } from 'express';
import { renderMonitorRun, runMonitorNow } from '@sdx/domain/api';
import type { ApiDeps } from '../deps';
import { tenantOf } from '../middleware/tenant';

/** POST /v1/monitors/{monitor_id}/run — 202 with the run (skipped_credits when it is not affordable as a whole). */
export const runMonitor = ({ services }: ApiDeps): RequestHandler => async (req, res) => {
  const run = await runMonitorNow(services, tenantOf(res), String(req.params.monitor_id));
  res.status(202).json(renderMonitorRun(run));
};
