import { invalidRequest, resourceMissing } from './errors';
import { newId, unixNow } from './ids';
import { formatAmount } from './money';
import { type CheckoutSession, type LineItem, type Metadata, metadataOf, type StripeObject } from './objects';
import { escapeHtml } from './pages';

/**
 * Monthly subscriptions in the fake (extensions-3.md 2): Prices, Subscriptions with one item,
 * their Invoices, billing portal sessions, and time moved on by `advance` (a subscription's next
 * period, as Stripe's test clocks do). Each step emits the events a real account sends, in the
 * same order:
 * - a subscription Checkout paid: customer.subscription.created, invoice.created,
 *   invoice.finalized, invoice.paid, invoice.payment_succeeded, checkout.session.completed;
 * - a price change with `always_invoice`: customer.subscription.updated, then the proration
 *   invoice's invoice.created, invoice.finalized, invoice.paid (or invoice.payment_failed),
 *   invoice.payment_succeeded; with `none`, or `cancel_at_period_end`: customer.subscription.updated;
 * - the next period: customer.subscription.updated, invoice.created, invoice.finalized,
 *   invoice.paid, invoice.payment_succeeded — or invoice.payment_failed and the subscription
 *   past due (failNextInvoices); a subscription cancelled at period end ends instead:
 *   customer.subscription.deleted;
 * - an open invoice paid later (payInvoice): invoice.paid, invoice.payment_succeeded,
 *   customer.subscription.updated (active again).
 * Invoices take the shape of the API version the client last sent: from 2025-03-31 (basil) the
 * subscription is `parent.subscription_details.subscription` and the period is on the item;
 * before, `subscription`, `subscription_details` and the period on the subscription.
 */
export type EmitFn = (type: string, object: StripeObject) => void;

interface Store {
  put<T extends StripeObject>(object: T): T;
  get<T extends StripeObject>(object: string, id: string, param?: string, status?: number): T;
  all<T extends StripeObject>(object: string): T[];
}

export interface Price extends StripeObject {
  object: 'price';
  currency: string;
  unit_amount: number;
  product: string;
  recurring: { interval: string; interval_count: number } | null;
  metadata: Metadata;
}

export interface Subscription extends StripeObject {
  object: 'subscription';
  customer: string;
  status: 'active' | 'past_due' | 'canceled';
  cancel_at_period_end: boolean;
  metadata: Metadata;
  items: { object: 'list'; data: SubscriptionItem[]; has_more: false; url: string };
  latest_invoice: string | null;
  current_period_start: number;
  current_period_end: number;
}

export interface SubscriptionItem extends StripeObject {
  object: 'subscription_item';
  price: Price;
  current_period_start: number;
  current_period_end: number;
}

export interface Invoice extends StripeObject {
  object: 'invoice';
  status: 'draft' | 'open' | 'paid' | 'void';
  amount_due: number;
  amount_paid: number;
  currency: string;
  created: number;
  number: string;
  hosted_invoice_url: string;
}

export interface PortalSession extends StripeObject {
  object: 'billing_portal.session';
  customer: string;
  return_url: string | null;
  url: string;
}

/** One calendar month later, in unix seconds (as a monthly interval bills). */
export function nextMonth(unix: number): number {
  const date = new Date(unix * 1000);
  date.setUTCMonth(date.getUTCMonth() + 1);
  return Math.floor(date.getTime() / 1000);
}

export class SubscriptionBook {
  private failNext = 0;
  private invoiceCount = 0;

  constructor(
    private readonly store: Store,
    private readonly emit: EmitFn,
    private readonly publicUrl: () => string,
    private readonly apiVersion: () => string,
  ) {}

  /** From 2025-03-31 (basil) an invoice names its subscription under `parent`. */
  private basil(): boolean {
    return this.apiVersion().slice(0, 10) >= '2025-03-31';
  }

  failNextInvoices(n: number): void {
    this.failNext = Math.max(0, Math.floor(n));
  }

  /** POST /v1/prices: a Price with `product` or `product_data`, one-time or recurring. */
  createPrice(params: Record<string, unknown>): Price {
    const productData = params.product_data as Record<string, unknown> | undefined;
    if (typeof params.product !== 'string' && !productData)
      throw invalidRequest('Missing required param: product.', 'product', 'parameter_missing');
    if (typeof params.unit_amount !== 'number')
      throw invalidRequest('Missing required param: unit_amount.', 'unit_amount', 'parameter_missing');
    const recurring = params.recurring as Record<string, unknown> | undefined;
    return this.store.put(
      this.priceObject({
        currency: String(params.currency).toLowerCase(),
        unitAmount: params.unit_amount,
        product: typeof params.product === 'string' ? params.product : newId('prod_', 14),
        interval: recurring ? String(recurring.interval) : null,
        metadata: metadataOf(params.metadata),
      }),
    );
  }

  private priceObject(input: {
    currency: string;
    unitAmount: number;
    product: string;
    interval: string | null;
    metadata: Metadata;
  }): Price {
    return {
      id: newId('price_'),
      object: 'price',
      active: true,
      billing_scheme: 'per_unit',
      created: unixNow(),
      currency: input.currency,
      custom_unit_amount: null,
      livemode: false,
      lookup_key: null,
      metadata: input.metadata,
      nickname: null,
      product: input.product,
      recurring: input.interval
        ? ({
            aggregate_usage: null,
            interval: input.interval,
            interval_count: 1,
            meter: null,
            trial_period_days: null,
            usage_type: 'licensed',
          } as Price['recurring'])
        : null,
      tax_behavior: 'unspecified',
      tiers_mode: null,
      transform_quantity: null,
      type: input.interval ? 'recurring' : 'one_time',
      unit_amount: input.unitAmount,
      unit_amount_decimal: String(input.unitAmount),
    };
  }

  /** A subscription Checkout Session's line items are checked as Stripe does: each recurring. */
  checkSubscriptionLineItems(items: unknown[]): void {
    items.forEach((raw, i) => {
      const data = ((raw as Record<string, unknown>)?.price_data ?? {}) as Record<string, unknown>;
      if (!data.recurring)
        throw invalidRequest(
          `You must specify ${`line_items[${i}][price_data][recurring]`} in \`subscription\` mode.`,
          `line_items[${i}][price_data][recurring]`,
          'parameter_missing',
        );
    });
  }

  /** Pays a subscription Checkout Session: the subscription, its first invoice paid, and the events in Stripe's order. */
  payCheckout(session: CheckoutSession, lineItems: LineItem[], subscriptionMetadata: Metadata, intervalOf: string): void {
    const item = lineItems[0];
    const amount = item.amount_total ?? session.amount_total;
    const price = this.store.put(
      this.priceObject({ currency: session.currency, unitAmount: amount, product: newId('prod_', 14), interval: intervalOf, metadata: {} }),
    );
    const now = unixNow();
    const subscription = this.store.put(this.subscriptionObject(session.customer ?? newId('cus_', 14), price, subscriptionMetadata, now));
    this.emit('customer.subscription.created', this.render(subscription));
    const invoice = this.invoice(subscription, amount, 'subscription_create', now, now, subscription.current_period_end);
    this.collect(invoice, subscription, false);
    session.status = 'complete';
    session.payment_status = 'paid';
    session.subscription = subscription.id;
    session.invoice = invoice.id;
    this.emit('checkout.session.completed', session);
  }

  private subscriptionObject(customer: string, price: Price, metadata: Metadata, now: number): Subscription {
    const id = newId('sub_');
    const end = nextMonth(now);
    const item: SubscriptionItem = {
      id: newId('si_', 14),
      object: 'subscription_item',
      created: now,
      current_period_start: now,
      current_period_end: end,
      metadata: {},
      price,
      quantity: 1,
      subscription: id,
      tax_rates: [],
    };
    return {
      id,
      object: 'subscription',
      application: null,
      automatic_tax: { enabled: false, liability: null },
      billing_cycle_anchor: now,
      cancel_at: null,
      cancel_at_period_end: false,
      canceled_at: null,
      collection_method: 'charge_automatically',
      created: now,
      currency: price.currency,
      current_period_start: now,
      current_period_end: end,
      customer,
      default_payment_method: null,
      ended_at: null,
      items: { object: 'list', data: [item], has_more: false, url: `/v1/subscription_items?subscription=${id}` },
      latest_invoice: null,
      livemode: false,
      metadata,
      start_date: now,
      status: 'active',
    };
  }

  /** The subscription as the API renders it for the client's version (the period on the item only, from basil on). */
  render(subscription: Subscription): StripeObject {
    const copy = structuredClone(subscription) as Record<string, unknown>;
    if (this.basil()) {
      delete copy.current_period_start;
      delete copy.current_period_end;
    }
    return copy as StripeObject;
  }

  private invoice(subscription: Subscription, amount: number, reason: string, created: number, start: number, end: number): Invoice {
    this.invoiceCount += 1;
    const id = newId('in_');
    const price = subscription.items.data[0].price;
    const parent = {
      type: 'subscription_details',
      quote_details: null,
      subscription_details: { metadata: { ...subscription.metadata }, subscription: subscription.id },
    };
    const invoice: Invoice = {
      id,
      object: 'invoice',
      amount_due: amount,
      amount_paid: 0,
      amount_remaining: amount,
      attempt_count: 0,
      attempted: false,
      billing_reason: reason,
      collection_method: 'charge_automatically',
      created,
      currency: price.currency,
      customer: subscription.customer,
      hosted_invoice_url: `${this.publicUrl()}/invoices/${id}`,
      invoice_pdf: `${this.publicUrl()}/invoices/${id}/pdf`,
      lines: {
        object: 'list',
        data: [
          {
            id: newId('il_'),
            object: 'line_item',
            amount,
            currency: price.currency,
            description: `1 × plan (at ${formatAmount(price.unit_amount, price.currency)} / month)`,
            period: { start, end },
            quantity: 1,
          },
        ],
        has_more: false,
        url: `/v1/invoices/${id}/lines`,
      },
      livemode: false,
      metadata: {},
      number: `FAKE${String(this.invoiceCount).padStart(6, '0')}`,
      paid: false,
      period_end: start,
      period_start: start,
      status: 'open',
      status_transitions: { finalized_at: created, marked_uncollectible_at: null, paid_at: null, voided_at: null },
      subtotal: amount,
      total: amount,
      ...(this.basil() ? { parent } : { subscription: subscription.id, subscription_details: { metadata: { ...subscription.metadata } } }),
    };
    subscription.latest_invoice = id;
    return this.store.put(invoice);
  }

  /** An invoice's collection: paid, or failed (failNextInvoices) with its subscription past due. */
  private collect(invoice: Invoice, subscription: Subscription, announceSubscription: boolean): void {
    this.emit('invoice.created', { ...invoice, status: 'draft' });
    this.emit('invoice.finalized', invoice);
    invoice.attempted = true;
    invoice.attempt_count = (invoice.attempt_count as number) + 1;
    if (this.failNext > 0) {
      this.failNext -= 1;
      this.emit('invoice.payment_failed', invoice);
      subscription.status = 'past_due';
      this.emit('customer.subscription.updated', this.render(subscription));
      return;
    }
    this.markPaid(invoice);
    this.emit('invoice.paid', invoice);
    this.emit('invoice.payment_succeeded', invoice);
    if (announceSubscription) this.emit('customer.subscription.updated', this.render(subscription));
  }

  private markPaid(invoice: Invoice): void {
    invoice.status = 'paid';
    invoice.paid = true;
    invoice.amount_paid = invoice.amount_due;
    invoice.amount_remaining = 0;
    (invoice.status_transitions as Record<string, unknown>).paid_at = unixNow();
  }

  /** POST /v1/subscriptions/{id}: items (a new price), metadata, proration_behavior, cancel_at_period_end. */
  update(id: string, params: Record<string, unknown>): Subscription {
    const subscription = this.store.get<Subscription>('subscription', id);
    if (subscription.status === 'canceled')
      throw invalidRequest('A canceled subscription can only update its cancellation_details and metadata.', undefined, 'resource_missing');
    const items = Array.isArray(params.items) ? (params.items as Record<string, unknown>[]) : [];
    let newPrice: Price | null = null;
    for (const [i, input] of items.entries()) {
      const item = subscription.items.data.find((it) => it.id === input.id);
      if (!item) throw invalidRequest(`No such subscription item: '${String(input.id)}'`, `items[${i}][id]`, 'resource_missing');
      if (typeof input.price === 'string') newPrice = this.store.get<Price>('price', input.price, `items[${i}][price]`, 400);
    }
    if (params.metadata !== undefined) subscription.metadata = metadataOf(params.metadata, subscription.metadata);
    if (params.cancel_at_period_end !== undefined) {
      subscription.cancel_at_period_end = params.cancel_at_period_end === true;
      subscription.cancel_at = subscription.cancel_at_period_end ? subscription.current_period_end : null;
    }
    const item = subscription.items.data[0];
    const oldPrice = item.price;
    if (newPrice) item.price = newPrice;
    this.emit('customer.subscription.updated', this.render(subscription));
    const proration = params.proration_behavior ?? 'create_prorations';
    if (newPrice && newPrice.id !== oldPrice.id && proration === 'always_invoice') {
      const now = unixNow();
      const left =
        Math.max(0, subscription.current_period_end - now) /
        Math.max(1, subscription.current_period_end - subscription.current_period_start);
      const difference = Math.round((newPrice.unit_amount - oldPrice.unit_amount) * left);
      if (difference > 0)
        this.collect(
          this.invoice(subscription, difference, 'subscription_update', now, now, subscription.current_period_end),
          subscription,
          false,
        );
    }
    return subscription;
  }

  /** Moves a subscription to its next period: its renewal invoice, or its end when cancelled at period end. */
  advance(id: string): Subscription {
    const subscription = this.store.get<Subscription>('subscription', id);
    if (subscription.status === 'canceled') throw invalidRequest(`Subscription ${id} has ended.`, undefined, 'subscription_canceled');
    const start = subscription.current_period_end;
    if (subscription.cancel_at_period_end) {
      subscription.status = 'canceled';
      subscription.ended_at = start;
      subscription.canceled_at = start;
      this.emit('customer.subscription.deleted', this.render(subscription));
      return subscription;
    }
    const end = nextMonth(start);
    subscription.current_period_start = start;
    subscription.current_period_end = end;
    const item = subscription.items.data[0];
    item.current_period_start = start;
    item.current_period_end = end;
    this.emit('customer.subscription.updated', this.render(subscription));
    this.collect(this.invoice(subscription, item.price.unit_amount, 'subscription_cycle', start, start, end), subscription, false);
    return subscription;
  }

  /** Pays an open invoice (a retry that succeeds, or the customer paying it on its page): the subscription is active again. */
  payInvoice(id: string): Invoice {
    const invoice = this.store.get<Invoice>('invoice', id);
    if (invoice.status !== 'open') throw invalidRequest(`Invoice ${id} is ${invoice.status}, not open.`, undefined, 'invoice_not_open');
    this.markPaid(invoice);
    this.emit('invoice.paid', invoice);
    this.emit('invoice.payment_succeeded', invoice);
    const subscriptionId = this.subscriptionIdOf(invoice);
    const subscription = subscriptionId ? this.store.get<Subscription>('subscription', subscriptionId) : null;
    if (subscription && subscription.status === 'past_due') {
      subscription.status = 'active';
      this.emit('customer.subscription.updated', this.render(subscription));
    }
    return invoice;
  }

  private subscriptionIdOf(invoice: Invoice): string | null {
    const parent = invoice.parent as { subscription_details?: { subscription?: string } } | undefined;
    return (invoice.subscription as string | undefined) ?? parent?.subscription_details?.subscription ?? null;
  }

  /** Ends a subscription now (as the dashboard's "Cancel immediately"). */
  cancelNow(id: string): Subscription {
    const subscription = this.store.get<Subscription>('subscription', id);
    if (subscription.status === 'canceled') return subscription;
    subscription.status = 'canceled';
    subscription.ended_at = subscription.canceled_at = unixNow();
    this.emit('customer.subscription.deleted', this.render(subscription));
    return subscription;
  }

  /** POST /v1/billing_portal/sessions. */
  createPortalSession(params: Record<string, unknown>): PortalSession {
    if (typeof params.customer !== 'string') throw invalidRequest('Missing required param: customer.', 'customer', 'parameter_missing');
    this.store.get('customer', params.customer, 'customer', 400);
    const id = newId('bps_');
    return this.store.put<PortalSession>({
      id,
      object: 'billing_portal.session',
      configuration: 'bpc_fake',
      created: unixNow(),
      customer: params.customer,
      flow: null,
      livemode: false,
      locale: null,
      on_behalf_of: null,
      return_url: typeof params.return_url === 'string' ? params.return_url : null,
      url: `${this.publicUrl()}/portal/${id}`,
    });
  }

  /** The portal page: the customer's subscriptions and invoices, and the way back. */
  portalPage(id: string): string {
    const session = this.store.get<PortalSession>('billing_portal.session', id);
    const subscriptions = this.store.all<Subscription>('subscription').filter((s) => s.customer === session.customer);
    const ids = new Set(subscriptions.map((s) => s.id));
    const invoices = this.store.all<Invoice>('invoice').filter((i) => ids.has(this.subscriptionIdOf(i) ?? ''));
    const rows = subscriptions
      .map(
        (s) =>
          `<tr><td><code>${escapeHtml(s.id)}</code></td><td>${escapeHtml(s.status)}</td><td>${escapeHtml(s.metadata.plan_id ?? '')}</td><td>${new Date(s.current_period_end * 1000).toISOString()}</td><td>${s.cancel_at_period_end ? 'cancels at period end' : ''}</td></tr>`,
      )
      .join('');
    const invoiceRows = invoices
      .map(
        (i) =>
          `<tr><td><a href="/invoices/${escapeHtml(i.id)}">${escapeHtml(i.number)}</a></td><td>${escapeHtml(i.status)}</td><td>${escapeHtml(formatAmount(i.amount_due, i.currency))}</td></tr>`,
      )
      .join('');
    const back = session.return_url ? `<p><a href="${escapeHtml(session.return_url)}">Return</a></p>` : '';
    return `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Billing portal (fake Stripe)</title></head><body><h1>Billing portal</h1>
<h2>Subscriptions</h2><table><tr><th>ID</th><th>Status</th><th>Plan</th><th>Period end</th><th></th></tr>${rows}</table>
<h2>Invoices</h2><table><tr><th>Number</th><th>Status</th><th>Amount</th></tr>${invoiceRows}</table>${back}</body></html>`;
  }

  /** An invoice's hosted page. */
  invoicePage(id: string): string {
    const invoice = this.store.get<Invoice>('invoice', id);
    const pay =
      invoice.status === 'open'
        ? `<form method="post" action="/invoices/${escapeHtml(id)}/pay"><button type="submit">Pay</button></form>`
        : '';
    return `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Invoice ${escapeHtml(invoice.number)}</title></head><body><h1>Invoice ${escapeHtml(invoice.number)}</h1><p>${escapeHtml(invoice.status)} · ${escapeHtml(formatAmount(invoice.amount_due, invoice.currency))}</p>${pay}</body></html>`;
  }

  /** The dashboard's section: subscriptions with Next period and Cancel now. */
  dashboardSection(): string {
    const rows = this.store
      .all<Subscription>('subscription')
      .reverse()
      .map((s) => {
        const live = s.status !== 'canceled';
        const actions = live
          ? `<form method="post" action="/subscriptions/${escapeHtml(s.id)}/advance"><button type="submit">Next period</button></form><form method="post" action="/subscriptions/${escapeHtml(s.id)}/cancel"><button type="submit" class="secondary">Cancel now</button></form>`
          : '';
        const price = s.items.data[0].price;
        return `<tr><td><code>${escapeHtml(s.id)}</code></td><td>${escapeHtml(s.status)}</td><td>${escapeHtml(s.metadata.plan_id ?? '')}</td><td>${escapeHtml(formatAmount(price.unit_amount, price.currency))}</td><td>${new Date(s.current_period_end * 1000).toISOString()}${s.cancel_at_period_end ? ' (cancels)' : ''}</td><td>${actions}</td></tr>`;
      })
      .join('');
    const invoices = this.store
      .all<Invoice>('invoice')
      .reverse()
      .slice(0, 50)
      .map(
        (i) =>
          `<tr><td><a href="/invoices/${escapeHtml(i.id)}">${escapeHtml(i.number)}</a></td><td>${escapeHtml(i.status)}</td><td>${escapeHtml(String(i.billing_reason))}</td><td>${escapeHtml(formatAmount(i.amount_due, i.currency))}</td></tr>`,
      )
      .join('');
    return `<h2>Subscriptions</h2><table><tr><th>ID</th><th>Status</th><th>Plan</th><th>Price</th><th>Period end</th><th></th></tr>${rows}</table>
<h2>Invoices</h2><table><tr><th>Number</th><th>Status</th><th>Reason</th><th>Amount</th></tr>${invoices}</table>`;
  }

  /** Throws Stripe's 404 for an unknown subscription (for the pages). */
  exists(id: string): void {
    const found = this.store.all<Subscription>('subscription').some((s) => s.id === id);
    if (!found) throw resourceMissing('subscription', id, 'id', 404);
  }
}
