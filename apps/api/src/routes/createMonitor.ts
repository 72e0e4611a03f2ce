import type { RequestHandler } from 'express';
import type { components } from '@sdx/contract';
import { createMonitor as create, type MonitorInput, renderMonitor } from '@sdx/domain/api';
import type { ApiDeps } from '../deps';
import { tenantOf } from '../middleware/tenant';

/** POST /v1/monitors — 201 with the active monitor, its next_run_at and estimates. */
export const createMonitor = ({ services }: ApiDeps): RequestHandler => async (req, res) => {
  const body = req.body as components['schemas']['MonitorCreateRequest'];
  const monitor = await create(services, tenantOf(res), body as MonitorInput);
  res.status(201).json(renderMonitor(monitor));
};
