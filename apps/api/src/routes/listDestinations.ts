import type { RequestHandler } from 'express';
import { listDestinations as list, renderDestination } from '@sdx/domain/api';
import type { AppDeps } from '../deps';
import { tenantOf } from '../middleware/tenant';

/** GET /v1/destinations — newest first, never a secret. */
export const listDestinations = ({ services }: AppDeps): RequestHandler => async (_req, res) => {
  res.json((await list(services.db, tenantOf(res))).map(renderDestination));
};
