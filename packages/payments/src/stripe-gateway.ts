import Stripe from 'stripe';
import type { AppConfig } from '@sdx/config';
import {
  type HostedCheckout,
  type PackCheckoutRequest,
  type PaymentEvent,
  PaymentFailed,
  type PaymentFailureKind,
  type PaymentGateway,
  type PricedItem,
  type ProviderSubscription,
  type SavedCard,
  type SavedCardCharge,
  type SubscriptionCheckoutRequest,
  type SubscriptionPriceChange,
} from '@sdx/domain/payments';
import { idOf, paymentEventOf, subscriptionOf } from './stripe-objects';

/**
 * The payment gateway over Stripe (extensions-2.md 1): the one place the `stripe` package is
 * used. Built once per process by packages/runtime from STRIPE_SECRET_KEY and
 * STRIPE_WEBHOOK_SECRET; STRIPE_API_BASE points every call elsewhere (a loopback fake in tests
 * and local development). Every failed call rejects with the domain's `PaymentFailed`, its kind
 * read from Stripe's error classes and status (the Stripe error kept as its cause).
 */

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

/** The gateway, or null unless both STRIPE_SECRET_KEY and STRIPE_WEBHOOK_SECRET are set. */
export function createStripeGateway(
  config: Pick<AppConfig, 'stripeSecretKey' | 'stripeWebhookSecret' | 'stripeApiBase'>,
): StripeGateway | null {
  if (!config.stripeSecretKey || !config.stripeWebhookSecret) return null;
  const stripe = new Stripe(config.stripeSecretKey, {
    ...stripeHostOptions(config.stripeApiBase),
    timeout: STRIPE_TIMEOUT_MS,
    maxNetworkRetries: STRIPE_NETWORK_RETRIES,
    telemetry: false,
  });
  return new StripeGateway(stripe, config.stripeWebhookSecret);
}

/** What to do about a failed Stripe call. */
function failureKindOf(error: unknown): PaymentFailureKind {
  if (error instanceof Stripe.errors.StripeCardError) return 'card';
  if (
    error instanceof Stripe.errors.StripeConnectionError ||
    error instanceof Stripe.errors.StripeAPIError ||
    error instanceof Stripe.errors.StripeRateLimitError
  )
    return 'transient';
  if (error instanceof Stripe.errors.StripeError) {
    const status = error.statusCode ?? 0;
    return status >= 500 || status === 409 || status === 0 ? 'transient' : 'refused';
  }
  return 'transient';
}

/** A Stripe call, its failure as a `PaymentFailed` (with the PaymentIntent a declined charge made). */
async function call<T>(run: () => Promise<T>): Promise<T> {
  try {
    return await run();
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    const intentId = error instanceof Stripe.errors.StripeError ? (error.payment_intent?.id ?? null) : null;
    throw new PaymentFailed(failureKindOf(error), message, intentId, { cause: error });
  }
}

function priceData(item: PricedItem) {
  return { currency: item.currency, unit_amount: item.amount, product_data: { name: item.name } };
}

export class StripeGateway implements PaymentGateway {
  constructor(
    readonly stripe: Stripe,
    private readonly webhookSecret: string,
  ) {}

  createCustomer(request: { workspaceId: string; idempotencyKey: string }): Promise<string> {
    return call(
      async () =>
        (
          await this.stripe.customers.create(
            { metadata: { workspace_id: request.workspaceId } },
            { idempotencyKey: request.idempotencyKey },
          )
        ).id,
    );
  }

  createPackCheckout(request: PackCheckoutRequest): Promise<HostedCheckout> {
    return call(async () => {
      const session = await this.stripe.checkout.sessions.create(
        {
          mode: 'payment',
          client_reference_id: request.workspaceId,
          customer: request.customerId,
          metadata: request.metadata,
          line_items: [{ price_data: priceData(request.item), quantity: 1 }],
          // The card is kept for auto-recharge's off-session charges; the PaymentIntent carries the metadata too.
          payment_intent_data: { setup_future_usage: 'off_session', metadata: request.metadata },
          success_url: request.successUrl,
          cancel_url: request.cancelUrl,
        },
        { idempotencyKey: request.idempotencyKey },
      );
      return { id: session.id, url: session.url ?? '' };
    });
  }

  createSubscriptionCheckout(request: SubscriptionCheckoutRequest): Promise<HostedCheckout> {
    return call(async () => {
      const session = await this.stripe.checkout.sessions.create(
        {
          mode: 'subscription',
          customer: request.customerId,
          line_items: [{ price_data: { ...priceData(request.item), recurring: { interval: 'month' } }, quantity: 1 }],
          subscription_data: { metadata: request.metadata },
          success_url: request.successUrl,
          cancel_url: request.cancelUrl,
        },
        { idempotencyKey: request.idempotencyKey },
      );
      return { id: session.id, url: session.url ?? '' };
    });
  }

  createMonthlyPrice(request: { item: PricedItem; metadata: Record<string, string>; idempotencyKey: string }): Promise<string> {
    return call(async () => {
      const price = await this.stripe.prices.create(
        { ...priceData(request.item), recurring: { interval: 'month' }, metadata: request.metadata },
        { idempotencyKey: request.idempotencyKey },
      );
      return price.id;
    });
  }

  subscription(id: string): Promise<ProviderSubscription> {
    return call(async () => subscriptionOf(await this.stripe.subscriptions.retrieve(id)));
  }

  changeSubscriptionPrice(id: string, change: SubscriptionPriceChange): Promise<ProviderSubscription> {
    return call(async () =>
      subscriptionOf(
        await this.stripe.subscriptions.update(
          id,
          { items: [{ id: change.itemId, price: change.priceId }], metadata: change.metadata, proration_behavior: change.proration },
          { idempotencyKey: change.idempotencyKey },
        ),
      ),
    );
  }

  cancelAtPeriodEnd(id: string, idempotencyKey: string): Promise<ProviderSubscription> {
    return call(async () => subscriptionOf(await this.stripe.subscriptions.update(id, { cancel_at_period_end: true }, { idempotencyKey })));
  }

  createPortalSession(request: { customerId: string; returnUrl: string }): Promise<string> {
    return call(
      async () => (await this.stripe.billingPortal.sessions.create({ customer: request.customerId, return_url: request.returnUrl })).url,
    );
  }

  chargeSavedCard(request: SavedCardCharge): Promise<{ id: string; status: string }> {
    return call(async () => {
      const intent = await this.stripe.paymentIntents.create(
        {
          amount: request.amount,
          currency: request.currency,
          customer: request.customerId,
          payment_method: request.paymentMethodId,
          confirm: true,
          off_session: true,
          metadata: request.metadata,
        },
        { idempotencyKey: request.idempotencyKey },
      );
      return { id: intent.id, status: intent.status };
    });
  }

  cardOfPayment(paymentIntentId: string): Promise<SavedCard | null> {
    return call(async () => {
      const intent = await this.stripe.paymentIntents.retrieve(paymentIntentId);
      const methodId = idOf(intent.payment_method);
      if (!methodId) return null;
      const method = await this.stripe.paymentMethods.retrieve(methodId);
      if (!method.card) return null;
      return { paymentMethodId: method.id, brand: method.card.brand, last4: method.card.last4 };
    });
  }

  verifyEvent(rawBody: Buffer, signature: string, toleranceSeconds: number): PaymentEvent {
    return paymentEventOf(this.stripe.webhooks.constructEvent(rawBody, signature, this.webhookSecret, toleranceSeconds));
  }
}
