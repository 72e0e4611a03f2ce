import type { RequestHandler } from 'express';
import { cancelSubscription as cancel } from '@sdx/domain/api';
import type { AppDeps } from '../deps';
import { actor } from '../middleware/client';
import { tenantOf } from '../middleware/tenant';

/** DELETE /v1/billing/subscription — the live subscription ends at the end of its period. */
export const cancelSubscription = ({ services, billing }: AppDeps): RequestHandler => async (req, res) => {
  res.json(await cancel(services, billing.stripe, tenantOf(res), actor(req, res)));
};
