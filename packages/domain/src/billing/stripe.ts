import Stripe from 'stripe';
import type { AppConfig } from '@sdx/config';
import { ApiError } from '../errors';

/**
 * The Stripe client of a process (extensions-2.md 1), built once from the configuration where
 * the process is wired (packages/runtime/src/billing.ts) and passed down. STRIPE_API_BASE points
 * every call elsewhere (a loopback fake in tests and local development). No billing write
 * happens without STRIPE_SECRET_KEY and STRIPE_WEBHOOK_SECRET: `requireBilling` answers 503
 * `billing_unavailable` then.
 */
export type { Stripe };

/** How long one Stripe call may take, and how many times the package retries it (with the same Idempotency-Key). */
export const STRIPE_TIMEOUT_MS = 15_000;
export const STRIPE_NETWORK_RETRIES = 2;

/** Where STRIPE_API_BASE sends the calls, as the package's options take it. */
export function stripeHostOptions(apiBase: string | null): Pick<Stripe.StripeConfig, 'host' | 'port' | 'protocol'> {
  if (!apiBase) return {};
  const url = new URL(apiBase);
  const protocol = url.protocol === 'http:' ? 'http' : 'https';
  return { host: url.hostname, port: url.port || (protocol === 'http' ? 80 : 443), protocol };
}

/** The client, or null when STRIPE_SECRET_KEY is not set. */
export function createStripeClient(config: Pick<AppConfig, 'stripeSecretKey' | 'stripeApiBase'>): Stripe | null {
  if (!config.stripeSecretKey) return null;
  return new Stripe(config.stripeSecretKey, {
    ...stripeHostOptions(config.stripeApiBase),
    timeout: STRIPE_TIMEOUT_MS,
    maxNetworkRetries: STRIPE_NETWORK_RETRIES,
    telemetry: false,
  });
}

/** What billing writes need: the client and the webhook secret. */
export interface StripeBilling {
  stripe: Stripe;
  webhookSecret: string;
}

/** The Stripe client and webhook secret, or 503 `billing_unavailable` when either is missing. */
export function requireBilling(stripe: Stripe | null, config: Pick<AppConfig, 'stripeWebhookSecret'>): StripeBilling {
  if (!stripe || !config.stripeWebhookSecret) throw new ApiError('billing_unavailable', 'Payments are not configured on this service.');
  return { stripe, webhookSecret: config.stripeWebhookSecret };
}

/** A Stripe call that failed, by what to do about it. */
export type StripeFailure =
  /** The card was declined (or needs its holder): the charge failed for good. */
  | { kind: 'card'; message: string }
  /** Stripe could not be reached, timed out, was overloaded or failed: try again later. */
  | { kind: 'transient'; message: string }
  /** Stripe refused the request itself (a configuration or code fault): trying again will not help. */
  | { kind: 'refused'; message: string };

export function stripeFailureOf(error: unknown): StripeFailure {
  const message = error instanceof Error ? error.message : String(error);
  if (error instanceof Stripe.errors.StripeCardError) return { kind: 'card', message };
  if (
    error instanceof Stripe.errors.StripeConnectionError ||
    error instanceof Stripe.errors.StripeAPIError ||
    error instanceof Stripe.errors.StripeRateLimitError
  ) {
    return { kind: 'transient', message };
  }
  if (error instanceof Stripe.errors.StripeError) {
    const status = error.statusCode ?? 0;
    return { kind: status >= 500 || status === 409 || status === 0 ? 'transient' : 'refused', message };
  }
  return { kind: 'transient', message };
}

/** A Stripe call of a request that failed: 503 `billing_unavailable` (nothing was charged), the cause kept for the log. */
export function billingUnavailable(error: unknown): ApiError {
  const failure = stripeFailureOf(error);
  const apiError = new ApiError('billing_unavailable', 'The payment provider did not answer; nothing was charged. Try again shortly.');
  (apiError as { cause?: unknown }).cause = failure;
  return apiError;
}

/** The ID of an expandable Stripe field (a string, or the object when expanded). */
export function idOf(field: string | { id: string } | null | undefined): string | null {
  if (!field) return null;
  return typeof field === 'string' ? field : field.id;
}
