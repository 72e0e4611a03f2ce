/**
 * A Stripe API error as Stripe answers it: the HTTP status and the body's `error` object
 * (`type`, `message`, and `code`, `param`, `decline_code`, `payment_intent`… where they apply).
 */
export interface StripeErrorBody {
  type: 'invalid_request_error' | 'card_error' | 'idempotency_error' | 'api_error';
  message: string;
  code?: string;
  param?: string;
  doc_url?: string;
  [key: string]: unknown;
}

export class StripeFailure extends Error {
  constructor(
    readonly status: number,
    readonly error: StripeErrorBody,
  ) {
    super(error.message);
    this.name = 'StripeFailure';
  }
}

export function docUrl(code: string): string {
  return `https://stripe.com/docs/error-codes/${code.replace(/_/g, '-')}`;
}

export function invalidRequest(message: string, param?: string, code?: string, status = 400): StripeFailure {
  return new StripeFailure(status, {
    type: 'invalid_request_error',
    message,
    ...(code ? { code, doc_url: docUrl(code) } : {}),
    ...(param ? { param } : {}),
  });
}

/** Stripe's names for its objects in "No such …" messages. */
const NAMES: Record<string, string> = {
  customer: 'customer',
  'checkout.session': 'checkout.session',
  payment_intent: 'payment_intent',
  payment_method: 'PaymentMethod',
  charge: 'charge',
  refund: 'refund',
};

/** An unknown ID: 404 when it is the resource of the URL, 400 when a parameter names it. */
export function resourceMissing(object: string, id: string, param = 'id', status = 404): StripeFailure {
  return invalidRequest(`No such ${NAMES[object] ?? object}: '${id}'`, param, 'resource_missing', status);
}
