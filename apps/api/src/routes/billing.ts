import type { RouteDef } from '../app';
import { cancelSubscription } from './cancelSubscription';
import { createBillingPortal } from './createBillingPortal';
import { createCheckout } from './createCheckout';
import { createSubscription } from './createSubscription';
import { listInvoices } from './listInvoices';
import { getBilling } from './getBilling';
import { listPayments } from './listPayments';
import { receiveStripeWebhook } from './receiveStripeWebhook';
import { updateAutoRecharge } from './updateAutoRecharge';
import { updateBillingLimits } from './updateBillingLimits';

/** Routes of billing (extensions-2.md 1). Stripe's webhook reads its body raw (app.ts RAW_BODY_ROUTES). */
export const billingRoutes: RouteDef[] = [
  { method: 'get', path: '/v1/billing', handler: getBilling },
  { method: 'post', path: '/v1/billing/checkout', handler: createCheckout },
  { method: 'post', path: '/v1/billing/subscription', handler: createSubscription },
  { method: 'delete', path: '/v1/billing/subscription', handler: cancelSubscription },
  { method: 'post', path: '/v1/billing/portal', handler: createBillingPortal },
  { method: 'get', path: '/v1/billing/invoices', handler: listInvoices },
  { method: 'post', path: '/v1/billing/stripe/webhook', handler: receiveStripeWebhook },
  { method: 'get', path: '/v1/billing/payments', handler: listPayments },
  { method: 'put', path: '/v1/billing/auto-recharge', handler: updateAutoRecharge },
  { method: 'put', path: '/v1/billing/limits', handler: updateBillingLimits },
];
