import type { RequestHandler } from 'express';
import { getDestinationOrThrow, renderDestination } from '@sdx/domain/api';
import type { AppDeps } from '../deps';
import { tenantOf } from '../middleware/tenant';

/** GET /v1/destinations/{destination_id} — unknown or another workspace's: 404 destination_not_found. */
export const getDestination = ({ services }: AppDeps): RequestHandler => async (req, res) => {
  res.json(renderDestination(await getDestinationOrThrow(services.db, tenantOf(res), String(req.params.destination_id))));
};
