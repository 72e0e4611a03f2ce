/**
 * A fake Stripe for tests and local development, built from Stripe's OpenAPI description
 * (spec/stripe-subset.json): the API calls the service makes through the `stripe` package, with
 * their parameters checked as Stripe checks them; webhook events signed as Stripe signs them and
 * delivered with retries; a hosted Checkout page with Pay, Cancel and Refund; a dashboard at `/`.
 * `npm run stripe:fake` runs one (scripts/stripe-fake.ts).
 */
export {
  startFakeStripe,
  DEFAULT_API_VERSION,
  DEFAULT_RETRY_DELAYS_MS,
  DEFAULT_SECRET_KEY,
  DEFAULT_WEBHOOK_SECRET,
  type FakeStripe,
  type FakeStripeOptions,
  type StripeEvent,
} from './server';
export { metadataOf, type StripeCall } from './api';
export type { Delivery } from './webhooks';
export type { PayOptions } from './state';
export type { Dispute, DisputeOptions } from './disputes';
export { signatureHeader } from './webhooks';
export type { Invoice as FakeInvoice, Subscription as FakeSubscription, Price as FakePrice } from './subscriptions';
export { objectProblems, stripeSubset, stripeOperations } from './spec';
export { OPERATIONS, extractSubset } from './extract';
