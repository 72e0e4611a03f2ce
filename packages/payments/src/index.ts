export { createStripeGateway, STRIPE_NETWORK_RETRIES, STRIPE_TIMEOUT_MS, StripeGateway, stripeHostOptions } from './stripe-gateway';
export { paymentEventOf, subscriptionOf } from './stripe-objects';
