import http from 'node:http';
import { type AddressInfo } from 'node:net';
import { StripeApi, type StripeCall } from './api';
import { closeDispute as closeDisputeOf, type DisputeOptions, openDispute } from './disputes';
import { StripeFailure } from './errors';
import { newId, unixNow } from './ids';
import { type Charge, type CheckoutSession, type PaymentIntent, type StripeObject } from './objects';
import { checkoutPage, dashboardPage, escapeHtml } from './pages';
import { stripeOperations } from './spec';
import { NO_REQUEST, type PayOptions, type RequestRef, StripeState } from './state';
import { type Invoice, type Subscription, SubscriptionBook } from './subscriptions';
import { type Delivery, signatureHeader, WebhookSender } from './webhooks';

export interface FakeStripeOptions {
  /** Port to listen on; 0 (the default) picks a free one. */
  port?: number;
  /** Interface to listen on (default 127.0.0.1). */
  host?: string;
  secretKey?: string;
  webhookSecret?: string;
  webhookUrl?: string | null;
  /** Waits before the 2nd, 3rd… delivery attempt of an event; its length + 1 attempts in all. */
  retryDelaysMs?: number[];
  /** How long a delivery attempt waits for the receiver's answer (default 10 s). */
  deliveryTimeoutMs?: number;
  /** The base URL put in Checkout Session URLs (default the fake's own URL). */
  publicUrl?: string;
  /** Where the fake reports requests and deliveries (default nowhere). */
  log?: (message: string) => void;
}

export type StripeEvent = {
  id: string;
  object: 'event';
  type: string;
  created: number;
  data: { object: Record<string, unknown> };
  [k: string]: unknown;
};

export interface FakeStripe {
  /** Base URL of the API, e.g. http://127.0.0.1:12111 (STRIPE_API_BASE). */
  readonly url: string;
  readonly secretKey: string;
  readonly webhookSecret: string;
  setWebhookUrl(url: string | null): void;
  readonly calls: StripeCall[];
  /** Every event emitted, in order. */
  readonly events: StripeEvent[];
  readonly deliveries: Delivery[];
  /** PaymentIntents created through POST /v1/payment_intents (not those of Checkout). */
  paymentIntentsCreated(): number;
  payCheckoutSession(sessionId: string, options?: PayOptions): Promise<StripeEvent[]>;
  refund(paymentIntentId: string, amount?: number): Promise<StripeEvent>;
  /** A dispute (chargeback) of the charge of a PaymentIntent (or a charge ID): its `charge.dispute.created` event (disputes.ts). */
  dispute(chargeOrIntentId: string, options?: DisputeOptions): Promise<StripeEvent>;
  /** Closes a dispute `won` or `lost`: its `charge.dispute.closed` event. */
  closeDispute(disputeId: string, status: 'won' | 'lost'): Promise<StripeEvent>;
  declinePaymentMethod(paymentMethodId: string): void;
  failNextPaymentIntents(n: number): void;
  /** Monthly plans (subscriptions.ts): moves a subscription to its next period (its renewal invoice, or its end when cancelled at period end); the events emitted. */
  advanceSubscription(subscriptionId: string): StripeEvent[];
  /** The next `n` subscription invoices fail (invoice.payment_failed, the subscription past due). */
  failNextInvoices(n: number): void;
  /** Pays an open invoice (a retry that succeeds); the events emitted. */
  payInvoice(invoiceId: string): StripeEvent[];
  /** Ends a subscription now (customer.subscription.deleted); the events emitted. */
  cancelSubscriptionNow(subscriptionId: string): StripeEvent[];
  /** A subscription or invoice as the fake holds it, or undefined. */
  subscription(id: string): Subscription | undefined;
  invoice(id: string): Invoice | undefined;
  /** An event of `type` about `object`, built (not emitted) — for tests crafting their own. */
  buildEvent(type: string, object: Record<string, unknown>): StripeEvent;
  /** The Stripe-Signature header for `payload` at `timestamp` (unix seconds; default now), signed with `secret` (default the fake's). */
  sign(payload: string, timestamp?: number, secret?: string): string;
  /** Emits an event: recorded and delivered (with retries) to the webhook URL. */
  emit(event: StripeEvent): void;
  /** Resolves when every emitted event has been delivered (2xx) or given up. */
  settled(): Promise<void>;
  close(): Promise<void>;
}

/** The API version of `stripe` v20; events follow the Stripe-Version the client last sent. */
export const DEFAULT_API_VERSION = '2026-02-25.clover';
export const DEFAULT_SECRET_KEY = 'sk_test_fake';
export const DEFAULT_WEBHOOK_SECRET = 'whsec_fake_0123456789abcdefghijklmnopqrstuv';
export const DEFAULT_RETRY_DELAYS_MS = [200, 1000, 3000];
const MAX_BODY = 1024 * 1024;

/** What `step` returns, as a promise, as Stripe's API answers: a refusal it throws is a rejection. */
function answered<T>(step: () => T): Promise<T> {
  return new Promise((resolve) => resolve(step()));
}

class FakeStripeServer implements FakeStripe {
  url = '';
  readonly events: StripeEvent[] = [];
  readonly deliveries: Delivery[] = [];
  readonly secretKey: string;
  readonly webhookSecret: string;
  private webhookUrl: string | null;
  private publicUrl: string | undefined;
  private readonly state: StripeState<StripeEvent>;
  private readonly api: StripeApi<StripeEvent>;
  private readonly sender: WebhookSender;
  private readonly book: SubscriptionBook;
  private readonly log: (message: string) => void;
  readonly server: http.Server;

  constructor(options: FakeStripeOptions) {
    this.secretKey = options.secretKey ?? DEFAULT_SECRET_KEY;
    this.webhookSecret = options.webhookSecret ?? DEFAULT_WEBHOOK_SECRET;
    this.webhookUrl = options.webhookUrl ?? null;
    this.publicUrl = options.publicUrl?.replace(/\/+$/, '');
    this.log = options.log ?? (() => undefined);
    this.state = new StripeState<StripeEvent>(
      () => this.publicUrl ?? this.url,
      (type, object, request) => {
        const event = this.eventOf(type, object, request);
        this.emit(event);
        return event;
      },
    );
    this.api = new StripeApi(this.state, this.secretKey, DEFAULT_API_VERSION);
    this.book = new SubscriptionBook(
      this.state,
      (type, object) => void this.state.emitEvent(type, object),
      () => this.publicUrl ?? this.url,
      () => this.api.apiVersion,
    );
    this.state.subscriptions = this.book;
    this.sender = new WebhookSender({
      secret: this.webhookSecret,
      retryDelaysMs: options.retryDelaysMs ?? DEFAULT_RETRY_DELAYS_MS,
      timeoutMs: options.deliveryTimeoutMs ?? 10_000,
      deliveries: this.deliveries,
      log: this.log,
    });
    this.server = http.createServer((req, res) => void this.serve(req, res));
  }

  get calls(): StripeCall[] {
    return this.api.calls;
  }

  setWebhookUrl(url: string | null): void {
    this.webhookUrl = url;
  }

  paymentIntentsCreated(): number {
    return this.state.intentsCreatedByApi;
  }

  payCheckoutSession(sessionId: string, options: PayOptions = {}): Promise<StripeEvent[]> {
    return answered(() => this.emittedBy(() => this.state.payCheckoutSession(sessionId, options)));
  }

  /** The events `step` emitted (it returns them, or the subscription book emitted them as it went). */
  private emittedBy(step: () => unknown): StripeEvent[] {
    const before = this.events.length;
    const returned = step();
    return Array.isArray(returned) && returned.length > 0 ? (returned as StripeEvent[]) : this.events.slice(before);
  }

  advanceSubscription(subscriptionId: string): StripeEvent[] {
    return this.emittedBy(() => this.book.advance(subscriptionId));
  }

  failNextInvoices(n: number): void {
    this.book.failNextInvoices(n);
  }

  payInvoice(invoiceId: string): StripeEvent[] {
    return this.emittedBy(() => this.book.payInvoice(invoiceId));
  }

  cancelSubscriptionNow(subscriptionId: string): StripeEvent[] {
    return this.emittedBy(() => this.book.cancelNow(subscriptionId));
  }

  subscription(id: string): Subscription | undefined {
    return this.state.all<Subscription>('subscription').find((s) => s.id === id);
  }

  invoice(id: string): Invoice | undefined {
    return this.state.all<Invoice>('invoice').find((i) => i.id === id);
  }

  refund(paymentIntentId: string, amount?: number): Promise<StripeEvent> {
    return answered(
      () => this.state.createRefund({ payment_intent: paymentIntentId, ...(amount === undefined ? {} : { amount }) }, NO_REQUEST).event,
    );
  }

  dispute(chargeOrIntentId: string, options: DisputeOptions = {}): Promise<StripeEvent> {
    return answered(() => openDispute(this.state, chargeOrIntentId, options, NO_REQUEST).event);
  }

  closeDispute(disputeId: string, status: 'won' | 'lost'): Promise<StripeEvent> {
    return answered(() => closeDisputeOf(this.state, disputeId, status, NO_REQUEST).event);
  }

  declinePaymentMethod(paymentMethodId: string): void {
    this.state.declinePaymentMethod(paymentMethodId);
  }

  failNextPaymentIntents(n: number): void {
    this.state.failNextPaymentIntents(n);
  }

  buildEvent(type: string, object: Record<string, unknown>): StripeEvent {
    return this.eventOf(type, object, NO_REQUEST);
  }

  private eventOf(type: string, object: Record<string, unknown> | StripeObject, request: RequestRef): StripeEvent {
    return {
      id: newId('evt_'),
      object: 'event',
      api_version: this.api.apiVersion,
      created: unixNow(),
      data: { object: structuredClone(object) },
      livemode: false,
      pending_webhooks: this.webhookUrl ? 1 : 0,
      request: { ...request },
      type,
    };
  }

  sign(payload: string, timestamp = unixNow(), secret = this.webhookSecret): string {
    return signatureHeader(payload, secret, timestamp);
  }

  emit(event: StripeEvent): void {
    this.events.push(event);
    this.log(`event ${event.id} ${event.type}`);
    if (this.webhookUrl) this.sender.send(event.id, JSON.stringify(event, null, 2), this.webhookUrl);
  }

  settled(): Promise<void> {
    return this.sender.settled();
  }

  async listen(host: string, port: number): Promise<void> {
    stripeOperations(); // compiles the parameter checks before the first request
    await new Promise<void>((resolve, reject) => {
      this.server.once('error', reject);
      this.server.listen(port, host, () => resolve());
    });
    const address = this.server.address() as AddressInfo;
    const shown = host === '0.0.0.0' || host === '::' ? '127.0.0.1' : host.includes(':') ? `[${host}]` : host;
    this.url = `http://${shown}:${address.port}`;
  }

  async close(): Promise<void> {
    this.sender.close();
    await new Promise<void>((resolve) => {
      this.server.close(() => resolve());
      this.server.closeAllConnections();
    });
  }

  private async serve(req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
    try {
      const body = await readBody(req);
      const url = new URL(req.url ?? '/', 'http://fake');
      const method = req.method ?? 'GET';
      if (url.pathname.startsWith('/v1/')) {
        const answer = this.api.handle({ method, path: url.pathname, query: url.search.slice(1), body, headers: req.headers });
        this.log(`${method} ${url.pathname} → ${answer.status}`);
        res.writeHead(answer.status, { ...answer.headers, 'Content-Type': 'application/json' });
        res.end(JSON.stringify(answer.body, null, 2));
        return;
      }
      this.page(method, url.pathname, res);
    } catch (error) {
      this.log(`error: ${error instanceof Error ? error.stack : String(error)}`);
      if (res.headersSent) return void res.end();
      if (error instanceof BodyTooLarge) {
        res.writeHead(413, { 'Content-Type': 'application/json' });
        res.end(JSON.stringify({ error: { type: 'invalid_request_error', message: 'Request body too large.' } }));
        return;
      }
      res.writeHead(500, { 'Content-Type': 'application/json' });
      res.end(JSON.stringify({ error: { type: 'api_error', message: 'The fake Stripe failed to answer this request.' } }));
    }
  }

  private page(method: string, pathname: string, res: http.ServerResponse): void {
    const html = (status: number, text: string) => {
      res.writeHead(status, { 'Content-Type': 'text/html; charset=utf-8' });
      res.end(text);
    };
    const redirect = (location: string) => {
      res.writeHead(303, { Location: location });
      res.end();
    };
    const session = /^\/checkout\/([^/]+)(?:\/(pay|refund))?$/.exec(pathname);
    const intent = /^\/payment_intents\/([^/]+)\/refund$/.exec(pathname);
    const subscriptionPage = /^\/(portal|invoices|subscriptions)\/([^/]+)(?:\/(pay|advance|cancel))?$/.exec(pathname);
    try {
      if (method === 'GET' && pathname === '/') return html(200, this.dashboard());
      if (subscriptionPage) {
        const [, kind, rawId, action] = subscriptionPage;
        const id = decodeURIComponent(rawId);
        if (method === 'GET' && kind === 'portal' && !action) return html(200, this.book.portalPage(id));
        if (method === 'GET' && kind === 'invoices' && !action) return html(200, this.book.invoicePage(id));
        if (method === 'POST' && kind === 'invoices' && action === 'pay') {
          this.book.payInvoice(id);
          return redirect(`/invoices/${encodeURIComponent(id)}`);
        }
        if (method === 'POST' && kind === 'subscriptions' && action === 'advance') {
          this.book.advance(id);
          return redirect('/');
        }
        if (method === 'POST' && kind === 'subscriptions' && action === 'cancel') {
          this.book.cancelNow(id);
          return redirect('/');
        }
      }
      if (session && method === 'GET' && !session[2]) return html(200, this.checkout(decodeURIComponent(session[1])));
      if (session && method === 'POST' && session[2] === 'pay') {
        const id = decodeURIComponent(session[1]);
        const current = this.state.get<CheckoutSession>('checkout.session', id);
        if (current.status === 'open') this.state.payCheckoutSession(id);
        if (current.mode === 'subscription') return redirect(current.success_url.replace('{CHECKOUT_SESSION_ID}', id));
        return redirect(current.success_url.replace('{CHECKOUT_SESSION_ID}', id));
      }
      if (session && method === 'POST' && session[2] === 'refund') {
        const id = decodeURIComponent(session[1]);
        const current = this.state.get<CheckoutSession>('checkout.session', id);
        if (current.payment_intent) this.refundQuietly(current.payment_intent);
        return redirect(`/checkout/${encodeURIComponent(id)}`);
      }
      if (intent && method === 'POST') {
        this.refundQuietly(decodeURIComponent(intent[1]));
        return redirect('/');
      }
      html(404, `<!doctype html><title>Not found</title><p>Nothing at ${escapeHtml(pathname)}.</p>`);
    } catch (error) {
      if (!(error instanceof StripeFailure)) throw error;
      html(error.status, `<!doctype html><title>Fake Stripe</title><p>${escapeHtml(error.message)}</p><p><a href="/">Dashboard</a></p>`);
    }
  }

  /** A refund from a page: one that has nothing left to refund just shows the page again. */
  private refundQuietly(paymentIntentId: string): void {
    try {
      this.state.createRefund({ payment_intent: paymentIntentId }, NO_REQUEST);
    } catch (error) {
      if (!(error instanceof StripeFailure) || error.status === 404) throw error;
    }
  }

  private checkout(id: string): string {
    const session = this.state.get<CheckoutSession>('checkout.session', id);
    const intent = session.payment_intent ? this.state.get<PaymentIntent>('payment_intent', session.payment_intent) : null;
    const charge = intent?.latest_charge ? this.state.get<Charge>('charge', intent.latest_charge) : null;
    return checkoutPage({ session, lineItems: this.state.sessionLineItems(id), charge });
  }

  private dashboard(): string {
    const charges = new Map(this.state.all<Charge>('charge').map((c) => [c.id, c]));
    return dashboardPage({
      url: this.url,
      webhookUrl: this.webhookUrl,
      sessions: this.state.all<CheckoutSession>('checkout.session').reverse(),
      intents: this.state.all<PaymentIntent>('payment_intent').reverse(),
      charges,
      events: this.events,
      deliveries: this.deliveries,
    }).replace('<h2>Events</h2>', `${this.book.dashboardSection()}\n<h2>Events</h2>`);
  }
}

class BodyTooLarge extends Error {}

function readBody(req: http.IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size > MAX_BODY) {
        reject(new BodyTooLarge());
        req.destroy();
        return;
      }
      chunks.push(chunk);
    });
    req.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    req.on('error', reject);
  });
}

/** Starts a fake Stripe (API, hosted Checkout pages, webhooks) and resolves once it listens. */
export async function startFakeStripe(options: FakeStripeOptions = {}): Promise<FakeStripe> {
  const fake = new FakeStripeServer(options);
  await fake.listen(options.host ?? '127.0.0.1', options.port ?? 0);
  return fake;
}
