import type { RequestHandler } from 'express';
import { type AutoRechargeRequest, updateAutoRecharge as update } from '@sdx/domain/api';
import type { AppDeps } from '../deps';
import { actor } from '../middleware/client';
import { tenantOf } from '../middleware/tenant';

/** PUT /v1/billing/auto-recharge — the settings now, with the saved card. */
export const updateAutoRecharge = ({ services, billing }: AppDeps): RequestHandler => async (req, res) => {
  res.json(await update(services, billing.stripe, tenantOf(res), req.body as AutoRechargeRequest, actor(req, res)));
};
