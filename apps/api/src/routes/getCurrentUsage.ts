import type { RequestHandler } from 'express';
import { getUsage } from '@sdx/domain/api';
import type { ApiDeps } from '../deps';
import { tenantOf } from '../middleware/tenant';

/** GET /v1/usage/current */
export const getCurrentUsage = ({ services }: ApiDeps): RequestHandler => async (_req, res) => {
  res.json(await getUsage(services.db, tenantOf(res).workspace, services.clock.now()));
};
