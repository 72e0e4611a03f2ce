import createClient, { type Client as FetchClient } from 'openapi-fetch';
import { errorFromResponse } from './errors';
import { nextFromLink, type RawPage } from './paging';
import { abortableSleep, createTransport, type Credentials, type RetryPolicy } from './transport';
import type { Paths } from './types';

export interface ClientOptions {
  /** A workspace API key (`sdx_live_...`). Sent as `Authorization: Bearer`, never in a URL. Optional for sign-up and sign-in. */
  apiKey?: string;
  /** The service's origin (default `http://localhost:3000`, what `npm start` serves). */
  baseUrl?: string;
  /** A fetch to use instead of the global one (it is called with one Request). */
  fetch?: (input: Request) => Promise<Response>;
  /** Retries after the first attempt of a call (default 2; 0 turns retries off). */
  maxRetries?: number;
  /** How long to wait for each answer to start, in ms (default 60000). Downloads and event streams may run longer once started. */
  timeoutMs?: number;
  /** `X-Workspace-ID` on every call: the workspace a session caller acts on. */
  workspaceId?: string;
  /** Backoff tuning: first and largest ceiling of the full-jitter wait, and the longest Retry-After waited for. */
  retry?: Partial<Omit<RetryPolicy, 'maxRetries'>>;
  /** Browsers: `include` sends the session cookie to another origin. */
  credentials?: 'omit' | 'same-origin' | 'include';
  /** Headers added to every request. */
  headers?: Record<string, string>;
}

export const DEFAULT_BASE_URL = 'http://localhost:3000';

/** What every resource group shares: the typed HTTP client and the caller's credentials. */
export class Core {
  readonly http: FetchClient<Paths>;
  readonly credentials: Credentials;
  readonly baseUrl: string;

  constructor(options: ClientOptions) {
    this.baseUrl = (options.baseUrl ?? DEFAULT_BASE_URL).replace(/\/+$/, '');
    this.credentials = { apiKey: options.apiKey, workspaceId: options.workspaceId };
    const baseFetch = options.fetch ?? ((input: Request) => globalThis.fetch(input));
    const transport = createTransport({
      fetch: baseFetch,
      credentials: this.credentials,
      timeoutMs: options.timeoutMs ?? 60_000,
      headers: options.headers,
      retry: {
        maxRetries: options.maxRetries ?? 2,
        baseDelayMs: options.retry?.baseDelayMs ?? 500,
        maxDelayMs: options.retry?.maxDelayMs ?? 8_000,
        maxRetryAfterMs: options.retry?.maxRetryAfterMs ?? 60_000,
      },
    });
    this.http = createClient<Paths>({
      baseUrl: this.baseUrl,
      fetch: transport,
      ...(options.credentials ? { credentials: options.credentials } : {}),
    });
  }

  sleep(ms: number, signal?: AbortSignal): Promise<void> {
    return abortableSleep(ms, signal);
  }
}

type Result = { data?: unknown; error?: unknown; response: Response };

/** The data of a successful answer; any other answer is thrown as its typed error. */
export async function unwrap<R extends Result>(pending: Promise<R>): Promise<{ data: Exclude<R['data'], undefined>; response: Response }> {
  const result = await pending;
  if (!result.response.ok) throw errorFromResponse(result.response.status, result.error, result.response.headers);
  return { data: result.data as Exclude<R['data'], undefined>, response: result.response };
}

/** A page of a list paged by its Link header. */
export async function linkedPage<T>(pending: Promise<{ data?: T[]; error?: unknown; response: Response }>): Promise<RawPage<T>> {
  const { data, response } = await unwrap(pending);
  return { data, nextQuery: nextFromLink(response.headers.get('link')) };
}

/** A page of a list paged by `starting_after` without a Link header: full page, ask for more after the last ID. */
export async function startingAfterPage<T extends { id: string }>(
  pending: Promise<{ data?: T[]; error?: unknown; response: Response }>,
  limit: number,
): Promise<RawPage<T>> {
  const { data, response } = await unwrap(pending);
  const linked = nextFromLink(response.headers.get('link'));
  if (linked) return { data, nextQuery: linked };
  const last = data[data.length - 1];
  return { data, nextQuery: last && data.length >= limit ? { starting_after: last.id } : null };
}

/** A fresh Idempotency-Key. */
export function newIdempotencyKey(): string {
  const c = globalThis.crypto;
  if (typeof c?.randomUUID === 'function') return c.randomUUID();
  const bytes = c.getRandomValues(new Uint8Array(16));
  return Array.from(bytes, (b) => b.toString(16).padStart(2, '0')).join('');
}
