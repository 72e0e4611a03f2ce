import type Stripe from 'stripe';
import type {
  ChargeDispute,
  ChargeRefund,
  CompletedCheckout,
  Metadata,
  PaymentEvent,
  PaymentOutcome,
  ProviderInvoice,
  ProviderSubscription,
} from '@sdx/domain/payments';

/**
 * Stripe's objects in the service's terms (payment-gateway.ts of the domain): expandable fields
 * read as IDs, Unix seconds as dates, and the places older and newer API versions keep a field
 * read alike (the period on the subscription or on its item; an invoice's subscription on itself
 * or under `parent.subscription_details`).
 */

/** The ID of an expandable field (a string, or the object when expanded). */
export function idOf(field: string | { id: string } | null | undefined): string | null {
  if (!field) return null;
  return typeof field === 'string' ? field : field.id;
}

function dateOf(seconds: number | null | undefined): Date | null {
  return typeof seconds === 'number' && seconds > 0 ? new Date(seconds * 1000) : null;
}

function metadataOf(metadata: Stripe.Metadata | null | undefined): Metadata {
  return { ...(metadata ?? {}) };
}

/** A subscription's status as the service keeps it. */
export function statusOf(stripeStatus: string): ProviderSubscription['status'] {
  if (stripeStatus === 'active' || stripeStatus === 'trialing') return 'active';
  if (stripeStatus === 'past_due' || stripeStatus === 'unpaid') return 'past_due';
  if (stripeStatus === 'canceled' || stripeStatus === 'incomplete_expired') return 'canceled';
  return 'incomplete';
}

export function subscriptionOf(subscription: Stripe.Subscription): ProviderSubscription {
  const item = subscription.items?.data?.[0];
  // The period is on the item in newer API versions, on the subscription in older ones.
  const legacyEnd = (subscription as unknown as { current_period_end?: number }).current_period_end;
  return {
    id: subscription.id,
    status: statusOf(subscription.status),
    itemId: item?.id ?? null,
    currentPeriodEnd: dateOf(item?.current_period_end ?? legacyEnd),
    cancelAtPeriodEnd: Boolean(subscription.cancel_at_period_end),
    metadata: metadataOf(subscription.metadata),
    createdAt: dateOf(subscription.created),
  };
}

function checkoutOf(session: Stripe.Checkout.Session): CompletedCheckout {
  return {
    id: session.id,
    mode: session.mode,
    paid: session.payment_status === 'paid',
    paymentIntentId: idOf(session.payment_intent),
    customerId: idOf(session.customer),
    subscriptionId: idOf(session.subscription),
    amount: session.amount_total ?? null,
    currency: session.currency ?? null,
    metadata: metadataOf(session.metadata),
    reference: session.client_reference_id ?? null,
    createdAt: dateOf(session.created),
  };
}

function paymentOf(intent: Stripe.PaymentIntent): PaymentOutcome {
  return {
    id: intent.id,
    amount: intent.amount,
    currency: intent.currency,
    metadata: metadataOf(intent.metadata),
    failureMessage: intent.last_payment_error?.message ?? null,
  };
}

function refundOf(charge: Stripe.Charge): ChargeRefund {
  return { paymentIntentId: idOf(charge.payment_intent), amountRefunded: charge.amount_refunded };
}

function disputeOf(dispute: Stripe.Dispute): ChargeDispute {
  return { id: dispute.id, paymentIntentId: idOf(dispute.payment_intent), status: dispute.status };
}

/** An invoice in either API version's shape. */
type InvoiceShape = Stripe.Invoice & {
  subscription?: string | { id: string } | null;
  subscription_details?: { metadata?: Metadata | null } | null;
  parent?: { subscription_details?: { subscription?: string | { id: string } | null; metadata?: Metadata | null } | null } | null;
};

function invoiceOf(invoice: InvoiceShape): ProviderInvoice {
  const line = invoice.lines?.data?.[0];
  return {
    id: invoice.id ?? null,
    // `subscription` in older API versions, `parent.subscription_details.subscription` in newer ones.
    subscriptionId: idOf(invoice.subscription ?? null) ?? idOf(invoice.parent?.subscription_details?.subscription ?? null),
    subscriptionMetadata: { ...(invoice.subscription_details?.metadata ?? {}), ...(invoice.parent?.subscription_details?.metadata ?? {}) },
    status: invoice.status ?? 'open',
    number: invoice.number ?? null,
    amountDue: invoice.amount_due ?? 0,
    amountPaid: invoice.amount_paid ?? 0,
    currency: (invoice.currency ?? 'usd').toLowerCase(),
    // The line's period is the subscription's month; the invoice's own is when its items were collected.
    periodStart: dateOf(line?.period?.start ?? invoice.period_start),
    periodEnd: dateOf(line?.period?.end ?? invoice.period_end),
    hostedUrl: invoice.hosted_invoice_url ?? null,
    createdAt: new Date(invoice.created * 1000),
  };
}

/** A verified event, by what it is about. */
export function paymentEventOf(event: Stripe.Event): PaymentEvent {
  const base = { id: event.id, type: String(event.type ?? '') };
  // A signed event is Stripe's; a field it lacks is read as absent, never as a fault of the signature.
  const object = (event.data?.object ?? {}) as Stripe.Event.Data['object'];
  if (base.type.startsWith('checkout.session.'))
    return { ...base, kind: 'checkout', checkout: checkoutOf(object as Stripe.Checkout.Session) };
  if (base.type.startsWith('payment_intent.')) return { ...base, kind: 'payment', payment: paymentOf(object as Stripe.PaymentIntent) };
  if (base.type === 'charge.refunded') return { ...base, kind: 'refund', refund: refundOf(object as Stripe.Charge) };
  if (base.type.startsWith('charge.dispute.')) return { ...base, kind: 'dispute', dispute: disputeOf(object as Stripe.Dispute) };
  if (base.type.startsWith('invoice.')) return { ...base, kind: 'invoice', invoice: invoiceOf(object as InvoiceShape) };
  if (base.type.startsWith('customer.subscription.'))
    return { ...base, kind: 'subscription', subscription: subscriptionOf(object as Stripe.Subscription) };
  return { ...base, kind: 'other' };
}
