import { ApiError } from '../errors';
import type { Resources } from '../resources';
import { type PaymentGateway, paymentFailureOf } from '../payment-gateway';

/**
 * Whether billing can write: the payment gateway (`Resources.payments`) is there when
 * STRIPE_SECRET_KEY and STRIPE_WEBHOOK_SECRET are both set (packages/runtime); without it every
 * billing write answers 503 `billing_unavailable`, and reads, limits and caps work as before.
 */
export function requirePayments(services: Pick<Resources, 'payments'>): PaymentGateway {
  if (!services.payments) throw new ApiError('billing_unavailable', 'Payments are not configured on this service.');
  return services.payments;
}

/** A provider call of a request that failed: 503 `billing_unavailable` (nothing was charged), the cause kept for the log. */
export function billingUnavailable(error: unknown): ApiError {
  const apiError = new ApiError('billing_unavailable', 'The payment provider did not answer; nothing was charged. Try again shortly.');
  (apiError as { cause?: unknown }).cause = paymentFailureOf(error);
  return apiError;
}
