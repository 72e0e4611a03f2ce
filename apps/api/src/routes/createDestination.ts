import type { RequestHandler } from 'express';
import { createDestination as create, type DestinationInput, renderDestination } from '@sdx/domain/api';
import type { AppDeps } from '../deps';
import { actor } from '../middleware/client';
import { tenantOf } from '../middleware/tenant';

/** POST /v1/destinations — 201 after the check write, never with the secret access key. */
export const createDestination = ({ services }: AppDeps): RequestHandler => async (req, res) => {
  const row = await create(services, tenantOf(res), req.body as DestinationInput, actor(req, res));
  res.status(201).json(renderDestination(row));
};
