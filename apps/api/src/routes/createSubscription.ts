import type { RequestHandler } from 'express';
import { createSubscription as create, type SubscriptionRequest } from '@sdx/domain/api';
import type { AppDeps } from '../deps';
import { actor } from '../middleware/client';
import { tenantOf } from '../middleware/tenant';

/** POST /v1/billing/subscription — 201 a Checkout Session for a new subscription, or 200 the live subscription changed to the plan. */
export const createSubscription = ({ services, billing }: AppDeps): RequestHandler => async (req, res) => {
  const answer = await create(services, billing.stripe, tenantOf(res), req.body as SubscriptionRequest, actor(req, res));
  res.status(answer.status).json(answer.body);
};
