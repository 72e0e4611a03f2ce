import { ConnectionError, parseRetryAfter, TimeoutError } from './errors';

/**
 * The fetch every call goes through (openapi-fetch is given it): credentials in headers, a
 * timeout for the answer to start, and safe retries.
 *
 * What is retried, at most `maxRetries` times, with exponential backoff and full jitter
 * (a random wait between 0 and min(maxDelayMs, baseDelayMs * 2^attempt)), and never less than
 * the service's `Retry-After`:
 * - 429 and 503 answers of reads, of deletes and updates, and of creates that carry an
 *   Idempotency-Key (the service replays the work a key already made, so a retried create never
 *   makes a second job);
 * - connection failures and timeouts of the same requests;
 * - for other writes (POSTs without a key), only what proves nothing was written: a refused
 *   connection, a 429, and a 503 `rate_limiter_unavailable`.
 * Nothing else is retried: a 4xx answer (validation included) is the caller's to fix.
 */

export interface RetryPolicy {
  /** Retries after the first attempt (default 2). */
  maxRetries: number;
  /** First backoff ceiling in ms (default 500); doubles each attempt. */
  baseDelayMs: number;
  /** Largest backoff ceiling in ms (default 8000). */
  maxDelayMs: number;
  /** A Retry-After longer than this (ms, default 60000) is not waited for: the error is thrown. */
  maxRetryAfterMs: number;
}

export interface Credentials {
  apiKey?: string;
  workspaceId?: string;
  /** Session cookie (`sdx_session=...`) caught from a sign-in answer, outside browsers. */
  sessionCookie?: string;
  /** The session's CSRF token, sent on writes of a session caller. */
  csrfToken?: string;
}

export interface TransportOptions {
  fetch: (input: Request) => Promise<Response>;
  retry: RetryPolicy;
  /** How long to wait for an answer to start, per attempt (ms). */
  timeoutMs: number;
  credentials: Credentials;
  /** Extra headers on every request (e.g. a User-Agent outside browsers). */
  headers?: Record<string, string>;
  /** For tests: the random source of the jitter and the clock of the waits. */
  random?: () => number;
  sleep?: (ms: number, signal?: AbortSignal | null) => Promise<void>;
}

const IDEMPOTENT_METHODS = new Set(['GET', 'HEAD', 'OPTIONS', 'PUT', 'DELETE']);
/** Methods a session caller sends without its CSRF token. */
const READ_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);
/** The session cookie's names: `__Host-sdx_session` in production, `sdx_session` elsewhere. */
const SESSION_COOKIES = new Set(['sdx_session', '__Host-sdx_session']);

export function createTransport(options: TransportOptions): (input: Request, init?: RequestInit) => Promise<Response> {
  const random = options.random ?? Math.random;
  const sleep = options.sleep ?? abortableSleep;
  const { retry } = options;

  return async function send(input: Request): Promise<Response> {
    const request = withCredentials(input, options.credentials, options.headers);
    const replayable = IDEMPOTENT_METHODS.has(request.method) || request.headers.has('idempotency-key');
    for (let attempt = 0; ; attempt++) {
      const last = attempt >= retry.maxRetries;
      let response: Response;
      try {
        response = await attemptOnce(options.fetch, request.clone(), options.timeoutMs);
      } catch (error) {
        if (request.signal?.aborted) throw request.signal.reason ?? error;
        const failure =
          error instanceof ConnectionError
            ? error
            : new ConnectionError(`could not reach ${request.url}: ${describeCause(error)}`, { cause: error });
        if (last || !(replayable || refusedBeforeSending(error))) throw failure;
        await sleep(backoff(retry, attempt, null, random), request.signal);
        continue;
      }
      catchSession(response, options.credentials);
      if (last || (response.status !== 429 && response.status !== 503)) return response;
      const retryAfter = parseRetryAfter(response.headers.get('retry-after'));
      if (retryAfter !== null && retryAfter * 1000 > retry.maxRetryAfterMs) return response;
      if (!replayable && !(await nothingWritten(response))) return response;
      await response.body?.cancel().catch(() => undefined);
      await sleep(backoff(retry, attempt, retryAfter, random), request.signal);
    }
  };
}

/** Full jitter, and at least the service's Retry-After. */
export function backoff(
  policy: RetryPolicy,
  attempt: number,
  retryAfterSeconds: number | null,
  random: () => number = Math.random,
): number {
  const ceiling = Math.min(policy.maxDelayMs, policy.baseDelayMs * 2 ** attempt);
  const jitter = random() * ceiling;
  return retryAfterSeconds === null ? jitter : Math.max(retryAfterSeconds * 1000, jitter);
}

async function attemptOnce(fetchImpl: (input: Request) => Promise<Response>, request: Request, timeoutMs: number): Promise<Response> {
  const controller = new AbortController();
  const callerSignal = request.signal;
  const onAbort = () => controller.abort(callerSignal.reason);
  if (callerSignal) {
    if (callerSignal.aborted) controller.abort(callerSignal.reason);
    else callerSignal.addEventListener('abort', onAbort, { once: true });
  }
  let timedOut = false;
  const timer = setTimeout(() => {
    timedOut = true;
    controller.abort(new TimeoutError(`no answer from ${request.url} within ${timeoutMs} ms`));
  }, timeoutMs);
  try {
    // The caller's signal keeps reaching the body (downloads, event streams) after the answer starts.
    return await fetchImpl(new Request(request, { signal: controller.signal }));
  } catch (error) {
    if (timedOut) throw new TimeoutError(`no answer from ${request.url} within ${timeoutMs} ms`, { cause: error });
    throw error;
  } finally {
    clearTimeout(timer);
  }
}

function withCredentials(input: Request, credentials: Credentials, extra: Record<string, string> | undefined): Request {
  const headers = new Headers(input.headers);
  for (const [name, value] of Object.entries(extra ?? {})) if (!headers.has(name)) headers.set(name, value);
  if (credentials.apiKey) headers.set('Authorization', `Bearer ${credentials.apiKey}`);
  if (credentials.workspaceId && !headers.has('x-workspace-id')) headers.set('X-Workspace-ID', credentials.workspaceId);
  if (credentials.sessionCookie && !credentials.apiKey) headers.set('Cookie', credentials.sessionCookie);
  if (credentials.csrfToken && !credentials.apiKey && !READ_METHODS.has(input.method)) headers.set('X-CSRF-Token', credentials.csrfToken);
  return new Request(input, { headers });
}

/** Outside browsers the session cookie is kept by the client; a browser keeps it itself. */
function catchSession(response: Response, credentials: Credentials): void {
  const getSetCookie = (response.headers as Headers & { getSetCookie?: () => string[] }).getSetCookie;
  const cookies = typeof getSetCookie === 'function' ? getSetCookie.call(response.headers) : [];
  for (const cookie of cookies) {
    const [pair] = cookie.split(';');
    const [name, ...value] = pair.split('=');
    const cookieName = name?.trim() ?? '';
    if (!SESSION_COOKIES.has(cookieName)) continue;
    const token = value.join('=').trim();
    credentials.sessionCookie = token === '' ? undefined : `${cookieName}=${token}`;
  }
}

/** A write without a key is retried only when the service says it wrote nothing. */
async function nothingWritten(response: Response): Promise<boolean> {
  if (response.status === 429) return true;
  const body = (await response
    .clone()
    .json()
    .catch(() => null)) as { detail?: { error?: unknown } } | null;
  return body?.detail?.error === 'rate_limiter_unavailable';
}

/** A refused connection never reached the service, so any request may be sent again. */
function refusedBeforeSending(error: unknown): boolean {
  const codes: unknown[] = [];
  const cause = (error as { cause?: { code?: unknown; errors?: Array<{ code?: unknown }> } })?.cause;
  if (cause) {
    codes.push(cause.code);
    for (const inner of cause.errors ?? []) codes.push(inner.code);
  }
  return codes.some((code) => code === 'ECONNREFUSED' || code === 'ENOTFOUND' || code === 'EAI_AGAIN');
}

function describeCause(error: unknown): string {
  const cause = (error as { cause?: { code?: string; message?: string } })?.cause;
  if (cause?.code) return cause.code;
  if (cause?.message) return cause.message;
  return error instanceof Error ? error.message : String(error);
}

export function abortableSleep(ms: number, signal?: AbortSignal | null): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) {
      reject(signal.reason);
      return;
    }
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal!.reason);
    };
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}
