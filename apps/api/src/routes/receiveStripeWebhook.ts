import type { RequestHandler } from 'express';
import { receiveStripeEvent } from '@sdx/domain/api';
import type { AppDeps } from '../deps';

/**
 * POST /v1/billing/stripe/webhook — Stripe's signed events. The body arrives as the exact bytes
 * sent (app.ts reads this route's body raw), which the signature covers. A handled payment may
 * have queued mail to the workspace's owners and admins: the sender is kicked after the commit.
 */
export const receiveStripeWebhook = ({ services, billing, mailer }: AppDeps): RequestHandler => async (req, res) => {
  const raw = Buffer.isBuffer(req.body) ? req.body : Buffer.alloc(0);
  const receipt = await receiveStripeEvent(services, billing.stripe, raw, req.get('stripe-signature'));
  if (receipt.outcome === 'handled') mailer?.kick();
  res.json(receipt);
};
