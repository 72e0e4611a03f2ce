import type { RequestHandler } from 'express';
import { type CheckoutRequest, createCheckout as create } from '@sdx/domain/api';
import type { AppDeps } from '../deps';
import { actor } from '../middleware/client';
import { tenantOf } from '../middleware/tenant';

/** POST /v1/billing/checkout — 201 with the Stripe Checkout Session to send the buyer to. */
export const createCheckout = ({ services, billing }: AppDeps): RequestHandler => async (req, res) => {
  res.status(201).json(await create(services, billing.stripe, tenantOf(res), req.body as CheckoutRequest, actor(req, res)));
};
