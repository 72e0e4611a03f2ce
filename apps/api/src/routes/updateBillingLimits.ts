import type { RequestHandler } from 'express';
import { type BillingLimits, updateBillingLimits as update } from '@sdx/domain/api';
import type { AppDeps } from '../deps';
import { actor } from '../middleware/client';
import { tenantOf } from '../middleware/tenant';

/** PUT /v1/billing/limits — the spend cap and low-credits alert now; works without Stripe. */
export const updateBillingLimits = ({ services }: AppDeps): RequestHandler => async (req, res) => {
  res.json(await update(services, tenantOf(res), req.body as BillingLimits, actor(req, res)));
};
