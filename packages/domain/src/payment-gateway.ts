import type { SubscriptionStatus } from '@sdx/db';

/**
 * The payment provider as billing sees it (extensions-2.md 1, extensions-3.md 1 and 2): the calls
 * billing makes and the signed events it receives, in the service's terms. Implemented over
 * Stripe by `StripeGateway` (packages/payments), which alone knows the `stripe` package, Stripe's
 * object shapes and its API versions; packages/runtime builds it when STRIPE_SECRET_KEY and
 * STRIPE_WEBHOOK_SECRET are set and passes it as `Resources.payments` (absent, every billing
 * write answers 503 `billing_unavailable`). This file imports no other file of the domain:
 * resources.ts depends on it.
 *
 * Every write takes an idempotency key: calls with the same key make one object and answer it
 * each time (the provider keeps keys 24 hours). A call that fails rejects with `PaymentFailed`,
 * whose `kind` says what to do about it. Amounts are in the currency's minor unit, currencies
 * lower case.
 */
export interface PaymentGateway {
  /** A customer for the workspace (named in its metadata); its ID. */
  createCustomer(request: { workspaceId: string; idempotencyKey: string }): Promise<string>;
  /**
   * A hosted checkout of one pack, paid once. The card it is paid with is kept for off-session
   * charges (auto-recharge); `metadata` is carried by the checkout and by its payment.
   */
  createPackCheckout(request: PackCheckoutRequest): Promise<HostedCheckout>;
  /** A hosted checkout that starts a monthly subscription; `metadata` is carried by the subscription it makes. */
  createSubscriptionCheckout(request: SubscriptionCheckoutRequest): Promise<HostedCheckout>;
  /** A monthly price of a plan, to change a subscription to; its ID. */
  createMonthlyPrice(request: { item: PricedItem; metadata: Metadata; idempotencyKey: string }): Promise<string>;
  /** A subscription as the provider has it now. */
  subscription(id: string): Promise<ProviderSubscription>;
  /** The subscription's item priced at `priceId` from now on, its metadata updated, the difference prorated as `proration` says. */
  changeSubscriptionPrice(id: string, change: SubscriptionPriceChange): Promise<ProviderSubscription>;
  /** The subscription set to end at the end of its period. */
  cancelAtPeriodEnd(id: string, idempotencyKey: string): Promise<ProviderSubscription>;
  /** A session of the provider's portal, where the customer manages cards and invoices; its URL. */
  createPortalSession(request: { customerId: string; returnUrl: string }): Promise<string>;
  /**
   * An off-session charge of a saved card, confirmed at once. The outcome also arrives as a
   * `payment` event (with `metadata`), which is what grants; a declined card rejects with a
   * `PaymentFailed` of kind `card`.
   */
  chargeSavedCard(request: SavedCardCharge): Promise<{ id: string; status: string }>;
  /** The card a payment was paid with, when it was a card. */
  cardOfPayment(paymentIntentId: string): Promise<SavedCard | null>;
  /**
   * A webhook event, its signature checked on the exact bytes received: throws when the
   * signature is missing, wrong, or older than `toleranceSeconds`.
   */
  verifyEvent(rawBody: Buffer, signature: string, toleranceSeconds: number): PaymentEvent;
}

export type Metadata = Record<string, string>;

/** What a buyer sees on the provider's pages and invoices, and its price. */
export interface PricedItem {
  name: string;
  amount: number;
  currency: string;
}

export interface PackCheckoutRequest {
  customerId: string;
  /** The buying workspace, the checkout's reference. */
  workspaceId: string;
  item: PricedItem;
  metadata: Metadata;
  successUrl: string;
  cancelUrl: string;
  idempotencyKey: string;
}

export interface SubscriptionCheckoutRequest {
  customerId: string;
  /** Billed monthly. */
  item: PricedItem;
  metadata: Metadata;
  successUrl: string;
  cancelUrl: string;
  idempotencyKey: string;
}

export interface HostedCheckout {
  id: string;
  /** Where to send the buyer. */
  url: string;
}

/** `always_invoice`: the difference prorated and invoiced at once; `none`: nothing prorated. */
export type Proration = 'always_invoice' | 'none';

export interface SubscriptionPriceChange {
  itemId: string;
  priceId: string;
  metadata: Metadata;
  proration: Proration;
  idempotencyKey: string;
}

export interface SavedCardCharge {
  amount: number;
  currency: string;
  customerId: string;
  paymentMethodId: string;
  metadata: Metadata;
  idempotencyKey: string;
}

export interface SavedCard {
  paymentMethodId: string;
  brand: string;
  last4: string;
}

/** A subscription, its status as the service keeps it. */
export interface ProviderSubscription {
  id: string;
  status: SubscriptionStatus;
  /** Its one item (a plan change replaces that item's price). */
  itemId: string | null;
  currentPeriodEnd: Date | null;
  cancelAtPeriodEnd: boolean;
  metadata: Metadata;
  createdAt: Date | null;
}

/** A checkout that completed (or whose delayed payment succeeded). */
export interface CompletedCheckout {
  id: string;
  mode: 'payment' | 'subscription' | 'setup';
  /** Whether the money was received (a delayed method completes unpaid, then succeeds). */
  paid: boolean;
  paymentIntentId: string | null;
  customerId: string | null;
  subscriptionId: string | null;
  amount: number | null;
  currency: string | null;
  metadata: Metadata;
  /** The workspace the checkout was made for (`workspaceId` of the request). */
  reference: string | null;
  createdAt: Date | null;
}

/** A payment that succeeded or failed (an off-session charge's outcome). */
export interface PaymentOutcome {
  id: string;
  amount: number;
  currency: string;
  metadata: Metadata;
  /** Why it failed, in words for the card holder. */
  failureMessage: string | null;
}

/** A charge's refunds: the amount refunded so far, in all. */
export interface ChargeRefund {
  paymentIntentId: string | null;
  amountRefunded: number;
}

export interface ChargeDispute {
  id: string;
  paymentIntentId: string | null;
  /** `won` and `lost` close it. */
  status: string;
}

/** An invoice of a subscription. */
export interface ProviderInvoice {
  id: string | null;
  subscriptionId: string | null;
  /** The subscription's metadata when the invoice was made. */
  subscriptionMetadata: Metadata;
  status: string;
  number: string | null;
  amountDue: number;
  amountPaid: number;
  currency: string;
  periodStart: Date | null;
  periodEnd: Date | null;
  hostedUrl: string | null;
  createdAt: Date;
}

/**
 * A webhook event: its ID (each is handled once), its type as the provider names it (kept in
 * stripe_events), and what it is about, by `kind`.
 */
export type PaymentEvent = { id: string; type: string } & (
  | { kind: 'checkout'; checkout: CompletedCheckout }
  | { kind: 'payment'; payment: PaymentOutcome }
  | { kind: 'refund'; refund: ChargeRefund }
  | { kind: 'dispute'; dispute: ChargeDispute }
  | { kind: 'invoice'; invoice: ProviderInvoice }
  | { kind: 'subscription'; subscription: ProviderSubscription }
  | { kind: 'other' }
);

/**
 * A provider call that failed, by what to do about it: `card`, the card was declined (or needs
 * its holder), the charge failed for good; `transient`, the provider could not be reached,
 * timed out, was overloaded or failed: try again later; `refused`, the provider refused the
 * request itself (a configuration or code fault): trying again will not help.
 */
export type PaymentFailureKind = 'card' | 'transient' | 'refused';

export class PaymentFailed extends Error {
  constructor(
    readonly kind: PaymentFailureKind,
    message: string,
    /** The payment a declined charge made, when there is one. */
    readonly paymentIntentId: string | null = null,
    options?: { cause?: unknown },
  ) {
    super(message, options);
    this.name = 'PaymentFailed';
  }
}

/** A failed provider call as logged and acted on; anything but a `PaymentFailed` counts as transient. */
export function paymentFailureOf(error: unknown): { kind: PaymentFailureKind; message: string } {
  const message = error instanceof Error ? error.message : String(error);
  return { kind: error instanceof PaymentFailed ? error.kind : 'transient', message };
}
