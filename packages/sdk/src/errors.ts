/**
 * The errors a call can throw. Every answer of the service that is not a success becomes an
 * `ApiError` (or one of its subclasses); a request that got no answer becomes a
 * `ConnectionError`. Both extend `SdxError`, so one `instanceof` catches everything the SDK throws
 * on purpose.
 */

export class SdxError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = new.target.name;
  }
}

/** The body's `detail`: an object with `error` and `message` for service errors, a list for 422 validation errors. */
export type ErrorDetail = ({ error: string; message: string } & Record<string, unknown>) | ValidationIssue[] | string | null;

export interface ValidationIssue {
  loc: Array<string | number>;
  msg: string;
  type: string;
  input?: unknown;
  ctx?: Record<string, unknown>;
}

/** The service answered with an error status. */
export class ApiError extends SdxError {
  /** HTTP status. */
  readonly status: number;
  /** `detail.error` of a service error; `validation_error` for a 422 whose detail lists fields; `http_<status>` when the body says nothing. */
  readonly code: string;
  /** The body's `detail` as sent. */
  readonly detail: ErrorDetail;
  /** `X-Request-ID` of the answer: quote it to support. */
  readonly requestId: string | null;

  constructor(status: number, code: string, detail: ErrorDetail, requestId: string | null, message?: string) {
    super(message ?? describe(status, code, detail));
    this.status = status;
    this.code = code;
    this.detail = detail;
    this.requestId = requestId;
  }

  /** The validation issues of a 422 `validation_error` (empty for other errors). */
  get issues(): ValidationIssue[] {
    return Array.isArray(this.detail) ? this.detail : [];
  }
}

/** 429: the per-minute rate limit, the active-job cap or the heavy-read bound. */
export class RateLimitError extends ApiError {
  /** Seconds the service asked to wait (`Retry-After`), or null when it did not say. */
  readonly retryAfter: number | null;

  constructor(status: number, code: string, detail: ErrorDetail, requestId: string | null, retryAfter: number | null) {
    super(status, code, detail, requestId);
    this.retryAfter = retryAfter;
  }
}

/** 402 `insufficient_credits`. */
export class InsufficientCreditsError extends ApiError {
  /** Credits available to reserve now. */
  readonly available: number;
  /** Credits the request needed to reserve. */
  readonly required: number;
  /** Credits already held by the workspace's active reservations. */
  readonly reserved: number;

  constructor(status: number, detail: ErrorDetail, requestId: string | null) {
    super(status, 'insufficient_credits', detail, requestId);
    const fields: Record<string, unknown> = isObject(detail) ? detail : {};
    this.available = numberOr(fields.available, 0);
    this.required = numberOr(fields.required, 0);
    this.reserved = numberOr(fields.reserved, 0);
  }
}

/** No answer: the connection failed or was cut, or the answer did not start within `timeoutMs`. */
export class ConnectionError extends SdxError {}

/** The answer did not start within the client's `timeoutMs`. */
export class TimeoutError extends ConnectionError {}

/** `webhooks.verify`: the body or its headers are not a valid, recent, signed delivery. */
export class WebhookVerificationError extends SdxError {}

/** Builds the typed error of an answer whose status is not a success. */
export function errorFromResponse(status: number, body: unknown, headers: Headers): ApiError {
  const requestId = headers.get('x-request-id');
  const detail: ErrorDetail =
    isObject(body) && 'detail' in body ? (body.detail as ErrorDetail) : typeof body === 'string' && body !== '' ? body : null;
  const code =
    isObject(detail) && typeof detail.error === 'string' ? detail.error : Array.isArray(detail) ? 'validation_error' : `http_${status}`;
  if (status === 429) return new RateLimitError(status, code, detail, requestId, parseRetryAfter(headers.get('retry-after')));
  if (status === 402 && code === 'insufficient_credits') return new InsufficientCreditsError(status, detail, requestId);
  return new ApiError(status, code, detail, requestId);
}

/** `Retry-After` in seconds: a number of seconds or an HTTP date; null when absent or unreadable. */
export function parseRetryAfter(value: string | null, now = Date.now()): number | null {
  if (value === null || value.trim() === '') return null;
  if (/^\d+(\.\d+)?$/.test(value.trim())) return Number(value.trim());
  const at = Date.parse(value);
  return Number.isNaN(at) ? null : Math.max(0, (at - now) / 1000);
}

function describe(status: number, code: string, detail: ErrorDetail): string {
  if (isObject(detail) && typeof detail.message === 'string') return `${status} ${code}: ${detail.message}`;
  if (Array.isArray(detail)) {
    const issues = detail.map((issue) => `${(issue.loc ?? []).join('.')}: ${issue.msg}`).join('; ');
    return `${status} ${code}: ${issues}`;
  }
  if (typeof detail === 'string') return `${status} ${code}: ${detail}`;
  return `${status} ${code}`;
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function numberOr(value: unknown, fallback: number): number {
  return typeof value === 'number' ? value : fallback;
}
