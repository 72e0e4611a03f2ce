import { docUrl, invalidRequest, resourceMissing, StripeFailure } from './errors';
import { unixNow } from './ids';
import { formatAmount } from './money';
import {
  type Charge,
  chargeObject,
  type CheckoutSession,
  checkoutSessionObject,
  type Customer,
  customerObject,
  INSUFFICIENT_FUNDS,
  type LineItem,
  type LineItemInput,
  lineItemObject,
  type Metadata,
  metadataOf,
  type PaymentIntent,
  paymentIntentObject,
  type PaymentMethod,
  paymentMethodObject,
  type Refund,
  refundObject,
  type StripeObject,
} from './objects';
import { stripeSubset } from './spec';
import type { SubscriptionBook } from './subscriptions';

/** The API request an event came from (`null`s when the fake itself caused it). */
export interface RequestRef {
  id: string | null;
  idempotency_key: string | null;
}

export const NO_REQUEST: RequestRef = { id: null, idempotency_key: null };

export interface PayOptions {
  amountTotal?: number;
  currency?: string;
  async?: boolean;
  card?: { brand: string; last4: string };
}

export interface Emitted {
  id: string;
  type: string;
}

type Emit<E extends Emitted> = (type: string, object: StripeObject, request: RequestRef) => E;

interface IntentData {
  metadata: Metadata;
  setupFutureUsage: string | null;
  description: string | null;
}

const DEFAULT_CARD = { brand: 'visa', last4: '4242' };
const clone = <T>(value: T): T => structuredClone(value);
const text = (value: unknown): string | null => (typeof value === 'string' && value !== '' ? value : null);

/**
 * The fake's account: its objects by ID and what happens to them — checkout sessions paid,
 * off-session payments confirmed or declined, charges refunded — with the events each step emits.
 */
export class StripeState<E extends Emitted> {
  private readonly objects = new Map<string, StripeObject>();
  private readonly lineItems = new Map<string, LineItem[]>();
  private readonly intentData = new Map<string, IntentData>();
  private readonly declined = new Set<string>();
  private failNext = 0;
  intentsCreatedByApi = 0;
  /** Subscriptions (subscriptions.ts), set by the server; Checkout in subscription mode goes to it. */
  subscriptions: SubscriptionBook | null = null;
  private readonly subscriptionData = new Map<string, { metadata: Metadata; interval: string }>();

  constructor(
    private readonly publicUrl: () => string,
    /** Emits an event of the account (disputes.ts emits some too). */
    readonly emit: Emit<E>,
  ) {}

  /** Emits an event about `object` (the subscription book's steps). */
  emitEvent(type: string, object: StripeObject): E {
    return this.emit(type, object, NO_REQUEST);
  }

  get<T extends StripeObject>(object: string, id: string, param = 'id', status = 404): T {
    const found = this.objects.get(id);
    if (!found || found.object !== object) throw resourceMissing(object, id, param, status);
    return found as T;
  }

  all<T extends StripeObject>(object: string): T[] {
    return [...this.objects.values()].filter((o): o is T => o.object === object);
  }

  sessionLineItems(sessionId: string): LineItem[] {
    return this.lineItems.get(sessionId) ?? [];
  }

  declinePaymentMethod(id: string): void {
    this.declined.add(id);
  }

  failNextPaymentIntents(n: number): void {
    this.failNext = Math.max(0, Math.floor(n));
  }

  /** Stores an object of the account (disputes.ts makes some too). */
  put<T extends StripeObject>(object: T): T {
    this.objects.set(object.id, object);
    return object;
  }

  createCustomer(params: Record<string, unknown>): Customer {
    return this.put(customerObject(params, unixNow()));
  }

  createCheckoutSession(params: Record<string, unknown>): CheckoutSession {
    if (params.mode === undefined) throw invalidRequest('Missing required param: mode.', 'mode', 'parameter_missing');
    if (params.mode !== 'payment' && !(params.mode === 'subscription' && this.subscriptions)) {
      throw invalidRequest(
        `This fake of Stripe creates Checkout Sessions in payment or subscription mode only, not ${typeof params.mode === 'string' ? params.mode : JSON.stringify(params.mode)}.`,
        'mode',
      );
    }
    const customer = typeof params.customer === 'string' ? this.get<Customer>('customer', params.customer, 'customer', 400) : null;
    const items = params.line_items;
    if (!Array.isArray(items) || items.length === 0) {
      throw invalidRequest('You must provide at least one line item in `payment` mode.', 'line_items', 'parameter_missing');
    }
    if (params.mode === 'subscription') this.subscriptions!.checkSubscriptionLineItems(items);
    const inputs = items.map((raw: unknown, i): LineItemInput => {
      const item = (typeof raw === 'object' && raw !== null ? raw : {}) as Record<string, unknown>;
      const at = `line_items[${i}]`;
      if (typeof item.price === 'string') throw invalidRequest(`No such price: '${item.price}'`, `${at}[price]`, 'resource_missing');
      const data = item.price_data as Record<string, unknown> | undefined;
      if (!data) throw invalidRequest(`Missing required param: ${at}[price_data].`, `${at}[price_data]`, 'parameter_missing');
      if (typeof data.product === 'string')
        throw invalidRequest(`No such product: '${data.product}'`, `${at}[price_data][product]`, 'resource_missing');
      if (!data.product_data)
        throw invalidRequest(
          `Missing required param: ${at}[price_data][product_data].`,
          `${at}[price_data][product_data]`,
          'parameter_missing',
        );
      const unitAmount =
        typeof data.unit_amount === 'number'
          ? data.unit_amount
          : data.unit_amount_decimal !== undefined
            ? Math.round(Number(data.unit_amount_decimal))
            : undefined;
      if (unitAmount === undefined || Number.isNaN(unitAmount)) {
        throw invalidRequest(
          `Missing required param: ${at}[price_data][unit_amount].`,
          `${at}[price_data][unit_amount]`,
          'parameter_missing',
        );
      }
      if (typeof item.quantity !== 'number')
        throw invalidRequest(`Missing required param: ${at}[quantity].`, `${at}[quantity]`, 'parameter_missing');
      return {
        name: String((data.product_data as Record<string, unknown>).name),
        currency: String(data.currency).toLowerCase(),
        unitAmount,
        quantity: item.quantity,
      };
    });
    const currency = inputs[0].currency;
    if (inputs.some((input) => input.currency !== currency))
      throw invalidRequest('All line items must use the same currency.', 'line_items');
    const created = unixNow();
    const amountTotal = inputs.reduce((sum, input) => sum + input.unitAmount * input.quantity, 0);
    const session = this.put(checkoutSessionObject({ params, amountTotal, currency, customer, created, publicUrl: this.publicUrl() }));
    this.lineItems.set(
      session.id,
      inputs.map((input) => lineItemObject(input, created)),
    );
    if (params.mode === 'subscription') {
      const data = (params.subscription_data ?? {}) as Record<string, unknown>;
      const first = (items[0] as Record<string, unknown>).price_data as Record<string, unknown>;
      this.subscriptionData.set(session.id, {
        metadata: metadataOf(data.metadata),
        interval: String((first.recurring as Record<string, unknown>).interval),
      });
    }
    const intentData = (params.payment_intent_data ?? {}) as Record<string, unknown>;
    this.intentData.set(session.id, {
      metadata: metadataOf(intentData.metadata),
      setupFutureUsage: text(intentData.setup_future_usage),
      description: text(intentData.description),
    });
    return session;
  }

  /** Pays an open session as its hosted page would, and returns the events that emitted. */
  payCheckoutSession(sessionId: string, options: PayOptions = {}, request: RequestRef = NO_REQUEST): E[] {
    const session = this.get<CheckoutSession>('checkout.session', sessionId);
    if (session.status !== 'open')
      throw invalidRequest(`Checkout Session ${sessionId} is ${session.status}, not open.`, undefined, 'checkout_session_not_open', 409);
    const subscription = this.subscriptionData.get(sessionId);
    if (subscription && this.subscriptions) {
      // Its events are emitted by the book (the server collects them).
      this.subscriptions.payCheckout(session, this.sessionLineItems(sessionId), subscription.metadata, subscription.interval);
      return [];
    }
    if (options.amountTotal !== undefined) session.amount_total = session.amount_subtotal = options.amountTotal;
    if (options.currency !== undefined) session.currency = options.currency.toLowerCase();
    const data = this.intentData.get(sessionId)!;
    const created = unixNow();
    const saved = data.setupFutureUsage !== null && session.customer !== null;
    const method = this.put(paymentMethodObject(options.card ?? DEFAULT_CARD, saved ? session.customer : null, created));
    const intent = this.put(
      paymentIntentObject({
        amount: session.amount_total,
        currency: session.currency,
        customer: session.customer,
        paymentMethod: method.id,
        metadata: { ...data.metadata },
        setupFutureUsage: data.setupFutureUsage,
        description: data.description,
        created,
      }),
    );
    const charge = this.put(chargeObject(intent, method, options.async ? 'pending' : 'succeeded', created));
    intent.latest_charge = charge.id;
    session.status = 'complete';
    session.payment_intent = intent.id;
    session.customer_details ??= { address: null, email: 'customer@example.com', name: null, phone: null, tax_exempt: 'none', tax_ids: [] };
    if (!options.async) {
      this.succeed(intent, charge);
      session.payment_status = 'paid';
      return [this.emit('checkout.session.completed', session, request), ...this.succeeded(intent, charge, request)];
    }
    intent.status = 'processing';
    const events = [this.emit('checkout.session.completed', session, request)];
    this.succeed(intent, charge);
    session.payment_status = 'paid';
    return [...events, ...this.succeeded(intent, charge, request), this.emit('checkout.session.async_payment_succeeded', session, request)];
  }

  private succeed(intent: PaymentIntent, charge: Charge): void {
    intent.status = 'succeeded';
    intent.amount_received = intent.amount;
    charge.status = 'succeeded';
    charge.paid = true;
    charge.captured = true;
    charge.amount_captured = charge.amount;
    charge.balance_transaction ??= `txn_${charge.id.slice(3)}`;
  }

  private succeeded(intent: PaymentIntent, charge: Charge, request: RequestRef): E[] {
    return [this.emit('payment_intent.succeeded', intent, request), this.emit('charge.succeeded', charge, request)];
  }

  /** POST /v1/payment_intents: created, and with confirm=true paid at once or declined (402). */
  createPaymentIntent(params: Record<string, unknown>, request: RequestRef): PaymentIntent {
    const customer = typeof params.customer === 'string' ? this.get<Customer>('customer', params.customer, 'customer', 400) : null;
    const method =
      typeof params.payment_method === 'string'
        ? this.get<PaymentMethod>('payment_method', params.payment_method, 'payment_method', 400)
        : null;
    const amount = params.amount as number;
    const currency = String(params.currency).toLowerCase();
    if (!Number.isInteger(amount) || amount < 1) throw invalidRequest('This value must be greater than or equal to 1.', 'amount');
    if (currency === 'usd' && amount < 50) throw invalidRequest('Amount must be at least $0.50 usd', 'amount', 'amount_too_small');
    const confirm = params.confirm === true;
    if (params.off_session !== undefined && params.off_session !== false && !confirm) {
      throw invalidRequest('You can only pass `off_session` when `confirm=true`.', 'off_session');
    }
    if (confirm && !method) {
      throw invalidRequest(
        "You cannot confirm this PaymentIntent because it's missing a payment method.",
        'payment_method',
        'payment_intent_unexpected_state',
      );
    }
    if (method && customer && method.customer !== null && method.customer !== customer.id) {
      throw invalidRequest(`The provided PaymentMethod ${method.id} belongs to another Customer.`, 'payment_method');
    }
    const created = unixNow();
    const intent = this.put(
      paymentIntentObject({
        amount,
        currency,
        customer: customer?.id ?? null,
        paymentMethod: method?.id ?? null,
        metadata: metadataOf(params.metadata),
        setupFutureUsage: text(params.setup_future_usage),
        description: text(params.description),
        created,
      }),
    );
    this.intentsCreatedByApi += 1;
    if (!confirm || !method) return intent;

    const decline = this.declined.has(method.id) || this.failNext > 0 ? INSUFFICIENT_FUNDS : null;
    if (this.failNext > 0) this.failNext -= 1;
    if (decline) {
      const charge = this.put(chargeObject(intent, method, decline, created));
      intent.status = 'requires_payment_method';
      intent.latest_charge = charge.id;
      intent.payment_method = null;
      const error = {
        charge: charge.id,
        code: decline.code,
        decline_code: decline.declineCode,
        doc_url: docUrl(decline.code),
        message: decline.message,
        payment_method: clone(method),
        type: 'card_error' as const,
      };
      intent.last_payment_error = error;
      this.emit('payment_intent.payment_failed', intent, request);
      throw new StripeFailure(402, { ...clone(error), payment_intent: clone(intent) });
    }
    const charge = this.put(chargeObject(intent, method, 'succeeded', created));
    intent.latest_charge = charge.id;
    this.succeed(intent, charge);
    if (intent.setup_future_usage !== null && customer) method.customer = customer.id;
    this.succeeded(intent, charge, request);
    return intent;
  }

  /** POST /v1/refunds: by default the whole unrefunded rest of the charge. */
  createRefund(params: Record<string, unknown>, request: RequestRef): { refund: Refund; event: E } {
    let charge: Charge;
    if (typeof params.charge === 'string') charge = this.get<Charge>('charge', params.charge, 'charge', 400);
    else if (typeof params.payment_intent === 'string') {
      const intent = this.get<PaymentIntent>('payment_intent', params.payment_intent, 'payment_intent', 400);
      if (intent.status !== 'succeeded' || !intent.latest_charge) {
        throw invalidRequest(
          `This PaymentIntent (${intent.id}) does not have a successful charge to refund.`,
          'payment_intent',
          'charge_not_refundable',
        );
      }
      charge = this.get<Charge>('charge', intent.latest_charge);
    } else
      throw invalidRequest(
        'One of the following params should be provided for this request: payment_intent or charge.',
        'payment_intent',
        'parameter_missing',
      );
    if (charge.status !== 'succeeded')
      throw invalidRequest(`Charge ${charge.id} has not succeeded; there is nothing to refund.`, 'charge', 'charge_not_refundable');
    const remaining = charge.amount - charge.amount_refunded;
    if (remaining <= 0) throw invalidRequest(`Charge ${charge.id} has already been refunded.`, 'charge', 'charge_already_refunded');
    const amount = params.amount === undefined ? remaining : (params.amount as number);
    if (!Number.isInteger(amount) || amount < 1) throw invalidRequest('Refund amount must be a positive integer.', 'amount');
    if (amount > remaining) {
      throw invalidRequest(
        `Refund amount (${formatAmount(amount, charge.currency)}) is greater than unrefunded amount on charge (${formatAmount(remaining, charge.currency)})`,
        'amount',
      );
    }
    const refund = this.put(refundObject(charge, amount, params, unixNow()));
    charge.amount_refunded += amount;
    charge.refunded = charge.amount_refunded >= charge.amount;
    return { refund, event: this.emit('charge.refunded', charge, request) };
  }

  /**
   * A copy of `object` as the API renders it with `expand`: IDs of expandable fields replaced by
   * their objects (dotted paths go deeper), and a Checkout Session's `line_items` included.
   */
  render(object: StripeObject, expand: string[] = []): StripeObject {
    const copy = clone(object);
    for (const path of expand) this.expandPath(copy, path.split('.'), path);
    return copy;
  }

  private expandPath(target: StripeObject, [field, ...rest]: string[], path: string): void {
    if (target.object === 'checkout.session' && field === 'line_items') {
      const data = this.sessionLineItems(target.id).map((item) => clone(item) as StripeObject);
      target.line_items = { object: 'list', data, has_more: false, url: `/v1/checkout/sessions/${target.id}/line_items` };
      if (rest.length > 0) for (const item of data) this.expandPath(item, rest, path);
      return;
    }
    const schema = stripeSubset().components.schemas[target.object];
    const property = (schema?.properties as Record<string, Record<string, unknown>> | undefined)?.[field];
    if (!property?.['x-expansionResources']) {
      const inline = (schema?.['x-expandableFields'] as string[] | undefined)?.includes(field) && rest.length === 0;
      if (inline) return;
      throw invalidRequest(`This property cannot be expanded (${path}).`, 'expand');
    }
    const value = target[field];
    const found = typeof value === 'string' ? this.objects.get(value) : undefined;
    if (found) target[field] = clone(found);
    const next = target[field];
    if (rest.length > 0 && next !== null && typeof next === 'object') this.expandPath(next as StripeObject, rest, path);
  }
}
