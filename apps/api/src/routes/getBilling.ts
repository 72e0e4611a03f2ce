import type { RequestHandler } from 'express';
import { getBilling as read } from '@sdx/domain/api';
import type { AppDeps } from '../deps';
import { tenantOf } from '../middleware/tenant';

/** GET /v1/billing — packs, auto-recharge, limits and this month's spend; answers without Stripe too. */
export const getBilling = ({ services }: AppDeps): RequestHandler => async (_req, res) => {
  res.json(await read(services, tenantOf(res)));
};
