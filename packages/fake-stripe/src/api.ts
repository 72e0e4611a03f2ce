import qs from 'qs';
import { invalidRequest, StripeFailure } from './errors';
import { newId } from './ids';
import { type StripeObject } from './objects';
import { checkParams, findOperation } from './spec';
import { type Emitted, type RequestRef, type StripeState } from './state';

/**
 * Stripe's API (/v1) over the fake's state: the secret key checked, the route found in Stripe's
 * description, its parameters checked against it, Idempotency-Key honoured, and the answer or
 * error rendered as Stripe renders them.
 */
export interface StripeCall {
  method: string;
  path: string;
  params: Record<string, unknown>;
  idempotencyKey: string | null;
  status: number;
}

/** The `metadata` a call or an object carried (Stripe's metadata is a map of strings), {} without one. */
export function metadataOf(value: StripeCall | Record<string, unknown>): Record<string, string> {
  const holder: Record<string, unknown> = isCall(value) ? value.params : value;
  const metadata = holder.metadata;
  if (typeof metadata !== 'object' || metadata === null) return {};
  return Object.fromEntries(Object.entries(metadata).filter((entry): entry is [string, string] => typeof entry[1] === 'string'));
}

function isCall(value: StripeCall | Record<string, unknown>): value is StripeCall {
  return typeof value.method === 'string' && typeof value.path === 'string' && typeof value.params === 'object' && value.params !== null;
}

export interface ApiRequest {
  method: string;
  path: string;
  query: string;
  body: string;
  headers: Record<string, string | string[] | undefined>;
}

export interface ApiResponse {
  status: number;
  headers: Record<string, string>;
  body: unknown;
}

interface HandlerContext {
  params: Record<string, unknown>;
  path: Record<string, string>;
  request: RequestRef;
}

type Handler = (context: HandlerContext) => StripeObject;

interface Stored {
  fingerprint: string;
  status: number;
  body: unknown;
}

const PARSE = { depth: 20, arrayLimit: 1000, parameterLimit: 10_000 } as const;

function header(headers: ApiRequest['headers'], name: string): string | null {
  const value = headers[name];
  return Array.isArray(value) ? (value[0] ?? null) : (value ?? null);
}

/** The key of `Authorization: Bearer <key>` or of Basic auth (the key as user name). */
function apiKeyOf(authorization: string | null): string | null {
  if (!authorization) return null;
  const [scheme, value = ''] = authorization.split(' ', 2);
  if (scheme?.toLowerCase() === 'bearer') return value.trim();
  if (scheme?.toLowerCase() === 'basic') return Buffer.from(value, 'base64').toString('utf8').split(':')[0] ?? null;
  return null;
}

function redacted(key: string): string {
  return key.length > 12 ? `${key.slice(0, 8)}${'*'.repeat(Math.min(20, key.length - 12))}${key.slice(-4)}` : key;
}

export class StripeApi<E extends Emitted> {
  readonly calls: StripeCall[] = [];
  private readonly idempotent = new Map<string, Stored>();
  private readonly handlers: Record<string, Handler>;
  apiVersion: string;

  constructor(
    private readonly state: StripeState<E>,
    private readonly secretKey: string,
    defaultApiVersion: string,
  ) {
    this.apiVersion = defaultApiVersion;
    const expand = (params: Record<string, unknown>) => (Array.isArray(params.expand) ? (params.expand as string[]) : []);
    const books = () => {
      if (!state.subscriptions) throw invalidRequest('Subscriptions are not served by this fake.', undefined, undefined, 404);
      return state.subscriptions;
    };
    const retrieve =
      (object: string, param: string): Handler =>
      ({ params, path }) =>
        state.render(state.get(object, path[param]), expand(params));
    this.handlers = {
      PostCustomers: ({ params }) => state.render(state.createCustomer(params), expand(params)),
      GetCustomersCustomer: retrieve('customer', 'customer'),
      PostCheckoutSessions: ({ params }) => state.render(state.createCheckoutSession(params), expand(params)),
      GetCheckoutSessionsSession: retrieve('checkout.session', 'session'),
      PostPaymentIntents: ({ params, request }) => state.render(state.createPaymentIntent(params, request), expand(params)),
      GetPaymentIntentsIntent: retrieve('payment_intent', 'intent'),
      GetPaymentMethodsPaymentMethod: retrieve('payment_method', 'payment_method'),
      PostRefunds: ({ params, request }) => state.render(state.createRefund(params, request).refund, expand(params)),
      GetChargesCharge: retrieve('charge', 'charge'),
      // Monthly plans (subscriptions.ts).
      PostPrices: ({ params }) => state.render(books().createPrice(params), expand(params)),
      GetSubscriptionsSubscriptionExposedId: ({ params, path }) =>
        state.render(books().render(state.get('subscription', path.subscription_exposed_id)), expand(params)),
      PostSubscriptionsSubscriptionExposedId: ({ params, path }) =>
        state.render(books().render(books().update(path.subscription_exposed_id, params)), expand(params)),
      GetInvoicesInvoice: retrieve('invoice', 'invoice'),
      PostBillingPortalSessions: ({ params }) => state.render(books().createPortalSession(params), expand(params)),
    };
  }

  handle(request: ApiRequest): ApiResponse {
    const requestId = newId('req_', 14);
    const idempotencyKey = request.method === 'POST' ? header(request.headers, 'idempotency-key') : null;
    const version = header(request.headers, 'stripe-version');
    if (version) this.apiVersion = version;
    const headers: Record<string, string> = { 'Request-Id': requestId, 'Stripe-Version': this.apiVersion };
    if (idempotencyKey) headers['Idempotency-Key'] = idempotencyKey;
    let params: Record<string, unknown> = {};
    const answer = (status: number, body: unknown): ApiResponse => {
      this.calls.push({ method: request.method, path: request.path, params, idempotencyKey, status });
      return { status, headers, body };
    };
    const fail = (failure: StripeFailure) => answer(failure.status, { error: failure.error });

    const key = apiKeyOf(header(request.headers, 'authorization'));
    if (!key) {
      return fail(
        invalidRequest(
          "You did not provide an API key. You need to provide your API key in the Authorization header, using Bearer auth (e.g. 'Authorization: Bearer YOUR_SECRET_KEY').",
          undefined,
          undefined,
          401,
        ),
      );
    }
    if (key !== this.secretKey) return fail(invalidRequest(`Invalid API Key provided: ${redacted(key)}`, undefined, undefined, 401));

    const found = findOperation(request.method, request.path);
    const handler = found ? this.handlers[found.operation.operationId] : undefined;
    if (!found || !handler) {
      return fail(
        invalidRequest(
          `Unrecognized request URL (${request.method}: ${request.path}). Please see https://stripe.com/docs or we can help at https://support.stripe.com/.`,
          undefined,
          undefined,
          404,
        ),
      );
    }
    const contentType = header(request.headers, 'content-type') ?? '';
    if (request.method === 'POST' && request.body.length > 0 && !contentType.startsWith('application/x-www-form-urlencoded')) {
      return fail(
        invalidRequest(`Invalid request: Content-Type ${contentType} is not supported; send application/x-www-form-urlencoded parameters.`),
      );
    }
    params = qs.parse(request.method === 'GET' ? request.query : request.body, PARSE);

    const fingerprint = `${request.method} ${request.path} ${JSON.stringify(params)}`;
    if (idempotencyKey) {
      const stored = this.idempotent.get(idempotencyKey);
      if (stored && stored.fingerprint !== fingerprint) {
        return fail(
          new StripeFailure(400, {
            type: 'idempotency_error',
            message: `Keys for idempotent requests can only be used with the same parameters they were first used with. Try using a key other than '${idempotencyKey}' if you meant to execute a different request.`,
          }),
        );
      }
      if (stored) {
        headers['Idempotent-Replayed'] = 'true';
        return answer(stored.status, stored.body);
      }
    }

    const problem = checkParams(found.operation, params);
    if (problem) return fail(invalidRequest(problem.message, problem.param, problem.code));

    let response: ApiResponse;
    try {
      response = answer(200, handler({ params, path: found.pathParams, request: { id: requestId, idempotency_key: idempotencyKey } }));
    } catch (error) {
      if (!(error instanceof StripeFailure)) throw error;
      response = fail(error);
    }
    // As Stripe does, a request that passed validation is saved under its key, errors included.
    if (idempotencyKey) this.idempotent.set(idempotencyKey, { fingerprint, status: response.status, body: response.body });
    return response;
  }
}
