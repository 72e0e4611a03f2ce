import type { RequestHandler } from 'express';
import { type BillingPortalRequest, createBillingPortal as create } from '@sdx/domain/api';
import type { AppDeps } from '../deps';
import { tenantOf } from '../middleware/tenant';

/** POST /v1/billing/portal — 201 with the Stripe billing portal session to send the member to. */
export const createBillingPortal = ({ services, billing }: AppDeps): RequestHandler => async (req, res) => {
  const body = req.body && typeof req.body === 'object' ? (req.body as BillingPortalRequest) : undefined;
  res.status(201).json(await create(services, billing.stripe, tenantOf(res), body));
};
