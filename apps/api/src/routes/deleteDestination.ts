import type { RequestHandler } from 'express';
import { deleteDestination as remove } from '@sdx/domain/api';
import type { AppDeps } from '../deps';
import { actor } from '../middleware/client';
import { tenantOf } from '../middleware/tenant';

/** DELETE /v1/destinations/{destination_id} — 204; pending deliveries to it fail. */
export const deleteDestination = ({ services }: AppDeps): RequestHandler => async (req, res) => {
  await remove(services, tenantOf(res), String(req.params.destination_id), actor(req, res));
  res.status(204).end();
};
