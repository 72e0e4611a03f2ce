import got, { type Got, type Response } from 'got';
import { ProviderError, type QuotaReading } from '../types';
import { parseJsonExact } from './json';

/** Per-upstream HTTP settings. The base URL defaults to the real host; tests point it at a fake. */
export interface HttpSettings {
  baseUrl: string;
  /** Per-attempt timeout of one request (default 15 s). */
  timeoutMs?: number;
  /** got retries for network failures only (default 2). Status codes are never retried here. */
  retryLimit?: number;
  /** Delay before the first network retry, doubled each time (default 500 ms). */
  retryDelayMs?: number;
}

export interface HttpRequest {
  method?: 'GET' | 'POST';
  /** Path below the base URL, starting with '/'. */
  path: string;
  query?: Record<string, string | number | boolean | undefined>;
  json?: Record<string, unknown>;
  form?: Record<string, string>;
  headers?: Record<string, string>;
  signal: AbortSignal;
}

export interface HttpResponse {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  /** Parsed JSON body (64-bit integers as strings), or null when the body is not JSON. */
  body: unknown;
}

/** The error thrown when the request's signal aborts (the job was cancelled): name AbortError, as the sandbox's. */
export function abortError(signal: AbortSignal): Error {
  const reason: unknown = signal.reason;
  if (reason instanceof Error && reason.name === 'AbortError') return reason;
  const error = new Error('The operation was aborted', { cause: reason });
  error.name = 'AbortError';
  return error;
}

/** Replace every secret occurring in `text` (tokens an upstream might echo back). */
export function redact(text: string, secrets: readonly string[]): string {
  let out = text;
  for (const secret of secrets) {
    if (secret.length >= 4) out = out.split(secret).join('[redacted]');
  }
  return out;
}

/** How an upstream's quota is read: its cost counted per request, or what is left read from its answers. */
export interface HttpMeter {
  /** What the quota counts, e.g. `units a day` (docs and GET /v1/platforms). */
  unit: string;
  /** The quota a request costs, counted when any answer comes (YouTube charges failed calls too). */
  cost?(req: HttpRequest): number;
  /** The quota left as an answer states it, or null when it does not. */
  remaining?(res: HttpResponse): number | null;
  /** The quota of a period, where it is published rather than stated in answers. */
  limit?: number;
}

const NETWORK_CODES = ['ETIMEDOUT', 'ECONNRESET', 'EADDRINUSE', 'ECONNREFUSED', 'EPIPE', 'ENOTFOUND', 'ENETUNREACH', 'EAI_AGAIN'];

/**
 * A got client for one upstream. Credentials travel in headers only (never in URLs), so neither
 * got's error messages nor request logs can carry them. HTTP errors are not thrown by got: the
 * adapter classifies every response from its body. Network errors and timeouts are retried by got
 * a bounded number of times, then become a retryable `upstream_unavailable`.
 */
export class UpstreamHttp {
  private readonly client: Got;
  private readonly base: string;
  /** Quota spent per attempt (keyed by the attempt's signal, so attempts running at once stay apart). */
  private readonly spent = new WeakMap<AbortSignal, number>();
  private readonly left = new WeakMap<AbortSignal, number>();

  constructor(
    readonly upstream: string,
    settings: HttpSettings,
    private readonly secrets: () => readonly string[],
    private readonly meter?: HttpMeter,
  ) {
    this.base = settings.baseUrl.replace(/\/+$/, '');
    const retryDelayMs = settings.retryDelayMs ?? 500;
    this.client = got.extend({
      timeout: { request: settings.timeoutMs ?? 15_000 },
      retry: {
        limit: settings.retryLimit ?? 2,
        methods: ['GET', 'POST'],
        statusCodes: [],
        errorCodes: NETWORK_CODES,
        calculateDelay: ({ attemptCount, computedValue }) => (computedValue === 0 ? 0 : retryDelayMs * 2 ** (attemptCount - 1)),
      },
      throwHttpErrors: false,
      followRedirect: false,
      responseType: 'text',
      headers: { 'user-agent': 'sdx-providers/1.0', accept: 'application/json' },
    });
  }

  async request(req: HttpRequest): Promise<HttpResponse> {
    const { signal } = req;
    if (signal.aborted) throw abortError(signal);
    const searchParams: Record<string, string | number | boolean> = {};
    for (const [k, v] of Object.entries(req.query ?? {})) if (v !== undefined) searchParams[k] = v;
    const promise = this.client(this.base + req.path, {
      method: req.method ?? 'GET',
      searchParams,
      headers: req.headers,
      ...(req.json !== undefined ? { json: req.json } : {}),
      ...(req.form !== undefined ? { form: req.form } : {}),
    });
    // got 11 has no AbortSignal option: cancel the request when the job is cancelled.
    const onAbort = (): void => promise.cancel();
    signal.addEventListener('abort', onAbort, { once: true });
    let response: Response<string>;
    try {
      response = await promise;
    } catch (error) {
      if (signal.aborted) throw abortError(signal);
      const code = (error as { code?: string }).code ?? 'ERR_NETWORK';
      const timedOut = (error as { name?: string }).name === 'TimeoutError';
      throw ProviderError.unavailable(`${this.upstream} ${timedOut ? 'timed out' : `network error (${code})`}`, null, {
        upstream: this.upstream,
        network_error: code,
      });
    } finally {
      signal.removeEventListener('abort', onAbort);
    }
    let body: unknown = null;
    const text = response.body;
    if (text && text.length > 0) {
      try {
        body = parseJsonExact(text);
      } catch {
        body = null;
      }
    }
    const answer = { status: response.statusCode, headers: response.headers, body };
    if (this.meter) this.measure(req, answer);
    return answer;
  }

  private measure(req: HttpRequest, answer: HttpResponse): void {
    const cost = this.meter?.cost?.(req) ?? 0;
    if (cost > 0) this.spent.set(req.signal, (this.spent.get(req.signal) ?? 0) + cost);
    const remaining = this.meter?.remaining?.(answer);
    if (remaining !== null && remaining !== undefined && Number.isFinite(remaining)) this.left.set(req.signal, remaining);
  }

  /** The quota the attempt of `signal` used and was told is left; null when this upstream has no meter. */
  quota(signal: AbortSignal): QuotaReading | null {
    if (!this.meter) return null;
    return {
      unit: this.meter.unit,
      used: this.spent.get(signal) ?? 0,
      remaining: this.left.get(signal) ?? null,
      limit: this.meter.limit ?? null,
    };
  }

  /** A message safe to keep: upstream text (or the JSON of what it sent instead) with any secret removed and its length bounded. */
  safe(text: unknown): string {
    const plain = typeof text === 'string' ? text : text === null || text === undefined ? '' : (JSON.stringify(text) ?? '');
    return redact(plain, this.secrets()).slice(0, 300);
  }
}

export function header(headers: HttpResponse['headers'], name: string): string | undefined {
  const v = headers[name.toLowerCase()];
  return Array.isArray(v) ? v[0] : v;
}

/** Retry-After as milliseconds (seconds or an HTTP date), or null. */
export function retryAfterMs(headers: HttpResponse['headers'], now: number = Date.now()): number | null {
  const v = header(headers, 'retry-after');
  if (!v) return null;
  if (/^\d+(\.\d+)?$/.test(v.trim())) return Math.round(Number(v) * 1000);
  const at = Date.parse(v);
  return Number.isNaN(at) ? null : Math.max(0, at - now);
}

/** A JSON object or an empty one. */
export function obj(value: unknown): Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value) ? (value as Record<string, unknown>) : {};
}

export function arr(value: unknown): unknown[] {
  return Array.isArray(value) ? value : [];
}
