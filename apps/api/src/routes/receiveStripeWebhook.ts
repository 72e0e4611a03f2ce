import { receiveStripeEvent } from '@sdx/domain/api';
import { route } from './route';

/**
 * POST /v1/billing/stripe/webhook — Stripe's signed events. The body arrives as the exact bytes
 * sent (declared `rawBody` below), which the signature covers. A handled payment may
 * have queued mail to the workspace's owners and admins: the sender is kicked after the commit.
 */
export const receiveStripeWebhook = route('receiveStripeWebhook', {
  access: 'public',
  // Stripe signs the exact bytes it sent: read raw, checked here rather than by the validator.
  rawBody: true,
  handler: async ({ deps: { services, mailer }, req, res }, raw) => {
    const receipt = await receiveStripeEvent(services, Buffer.isBuffer(raw) ? raw : Buffer.alloc(0), req.get('stripe-signature'));
    if (receipt.outcome === 'handled') mailer?.kick();
    res.json(receipt);
  },
});
