import type { RequestHandler } from 'express';
import { type MonitorPatch, renderMonitor, updateMonitor as update } from '@sdx/domain/api';
import type { ApiDeps } from '../deps';
import { tenantOf } from '../middleware/tenant';

/** PATCH /v1/monitors/{monitor_id} — the fields given replace the stored ones. */
export const updateMonitor = ({ services }: ApiDeps): RequestHandler => async (req, res) => {
  const monitor = await update(services, tenantOf(res), String(req.params.monitor_id), req.body as MonitorPatch);
  res.json(renderMonitor(monitor));
};
