/**
 * Shared client of the Meta Graph API (Ad Library, Facebook Pages, Instagram Graph API).
 * References: https://developers.facebook.com/docs/graph-api/guides/error-handling (error body,
 * codes 1, 2 transient; 4, 17, 32, 613, 80000-80014 throttling; 190 token; 10 and 200-299
 * permission; 100 parameter; 100/33 missing object) and
 * https://developers.facebook.com/docs/graph-api/overview/rate-limiting
 * (X-App-Usage, X-Business-Use-Case-Usage with estimated_time_to_regain_access in minutes).
 * The token travels in the Authorization header, never in the URL.
 */
import type { ProviderError } from '../types';
import { between, classifyBy, type ErrorRule } from './classify';
import { UpstreamHttp, arr, header, obj, retryAfterMs, type HttpResponse, type HttpSettings } from './http';
import { num, str } from './items';

/** The current Graph API version (facebook-nodejs-business-sdk's VERSION; each version lives about two years). */
export const GRAPH_VERSION = 'v26.0';
export const GRAPH_DEFAULT_BASE_URL = `https://graph.facebook.com/${GRAPH_VERSION}`;

export interface GraphConfig extends Partial<HttpSettings> {
  accessToken: string;
  now?: () => number;
}

type Json = Record<string, unknown>;

/** Default wait for Graph throttling without a regain estimate ("long backoff"). */
export const GRAPH_THROTTLE_DEFAULT_MS = 10 * 60_000;

interface GraphFacts {
  status: number;
  code: number;
  subcode: number | null;
  transient: boolean;
  message: string;
  headers: HttpResponse['headers'];
  now: number;
}

const throttleWait = (f: GraphFacts): number =>
  businessUseCaseRegainMs(f.headers) ?? retryAfterMs(f.headers, f.now) ?? GRAPH_THROTTLE_DEFAULT_MS;

/**
 * Graph API errors (developers.facebook.com/docs/graph-api/guides/error-handling). Code 100
 * subcode 33 ("does not exist, cannot be loaded due to missing permissions, or does not support
 * this operation") is Graph's answer about one node: a post deleted or never there, or one the
 * token may not read. It is the target's, not the credentials': the job fails as
 * target_not_found and the source's health does not count it. A credentials failure is told
 * apart by its code: 190/102 (the token is invalid or expired), 10 and 200-299 (the app lacks a
 * permission), HTTP 401: those are upstream_auth, and only those count toward marking a source
 * down (docs/decisions.md). A name that names nothing answers 803 (pages) or 110/2207013
 * (Instagram business_discovery).
 */
export const GRAPH_ERRORS: ErrorRule<GraphFacts>[] = [
  {
    status: '400, 403',
    upstream: 'codes 4, 17, 32, 613, 80000-80014 (throttling)',
    code: 'rate_limited',
    retryable: true,
    wait: 'max estimated_time_to_regain_access of X-Business-Use-Case-Usage, else Retry-After, else 10 min',
    when: (f) => [4, 17, 32, 613].includes(f.code) || between(f.code, 80000, 80014),
    waitMs: throttleWait,
  },
  {
    status: 'any, 5xx',
    upstream: 'codes 1, 2, 341 or is_transient',
    code: 'upstream_unavailable',
    retryable: true,
    wait: 'regain time or Retry-After if sent',
    when: (f) => [1, 2, 341].includes(f.code) || f.transient || f.status >= 500,
    waitMs: (f) => businessUseCaseRegainMs(f.headers) ?? retryAfterMs(f.headers, f.now),
  },
  {
    status: '400, 401',
    upstream: 'code 190, 102 (token invalid or expired)',
    code: 'upstream_auth',
    retryable: false,
    wait: '',
    when: (f) => f.code === 190 || f.code === 102 || f.status === 401,
  },
  {
    status: '400, 403',
    upstream: 'code 10, 200-299 (permission denied)',
    code: 'upstream_auth',
    retryable: false,
    wait: '',
    when: (f) => f.code === 10 || between(f.code, 200, 299),
  },
  {
    status: '400, 404',
    upstream:
      'code 100 subcode 33 (no such node, or one the token may not read); 803 (no such alias); 110 / subcode 2207013 (no such Instagram user)',
    code: 'target_not_found',
    retryable: false,
    wait: '',
    when: (f) => (f.code === 100 && f.subcode === 33) || f.code === 803 || f.code === 110 || f.subcode === 2207013,
  },
  {
    status: '400',
    upstream: 'code 100 for a field or parameter the node does not have',
    code: 'internal_error',
    retryable: false,
    wait: '',
    when: (f) => f.code === 100 && /nonexisting field|unknown field|invalid fields/i.test(f.message),
  },
  {
    status: '400',
    upstream: 'code 100 (invalid parameter)',
    code: 'invalid_target',
    retryable: false,
    wait: '',
    when: (f) => f.code === 100 || f.status === 400,
  },
  { status: '404', upstream: 'any', code: 'target_not_found', retryable: false, wait: '', when: (f) => f.status === 404 },
  { status: 'any', upstream: 'anything else', code: 'internal_error', retryable: false, wait: '', when: () => true },
];

/** The longest estimated_time_to_regain_access (minutes) of X-Business-Use-Case-Usage, in ms. */
export function businessUseCaseRegainMs(headers: HttpResponse['headers']): number | null {
  const raw = header(headers, 'x-business-use-case-usage');
  if (!raw) return null;
  try {
    let minutes: number | null = null;
    for (const entries of Object.values(obj(JSON.parse(raw)))) {
      for (const e of arr(entries)) {
        const m = num(obj(e).estimated_time_to_regain_access);
        if (m !== null && (minutes === null || m > minutes)) minutes = m;
      }
    }
    return minutes === null ? null : minutes * 60_000;
  } catch {
    return null;
  }
}

export class GraphClient {
  readonly http: UpstreamHttp;
  private readonly now: () => number;

  constructor(
    readonly upstream: string,
    private readonly config: GraphConfig,
  ) {
    this.http = new UpstreamHttp(upstream, { ...config, baseUrl: config.baseUrl ?? GRAPH_DEFAULT_BASE_URL }, () => [config.accessToken]);
    this.now = config.now ?? Date.now;
  }

  classify(res: HttpResponse): ProviderError {
    const error = obj(obj(res.body).error);
    const facts: GraphFacts = {
      status: res.status,
      code: num(error.code) ?? 0,
      subcode: num(error.error_subcode),
      transient: error.is_transient === true,
      message: str(error.message) ?? '',
      headers: res.headers,
      now: this.now(),
    };
    const message = this.http.safe(error.message ?? `HTTP ${res.status}`);
    const context = {
      upstream: this.upstream,
      status: res.status,
      error_code: facts.code,
      error_subcode: facts.subcode,
      fbtrace_id: str(error.fbtrace_id),
    };
    return classifyBy(GRAPH_ERRORS, facts, `${this.upstream}: ${message}`, context);
  }

  async get(path: string, query: Record<string, string | number | undefined>, signal: AbortSignal): Promise<Json> {
    const res = await this.http.request({ path, query, headers: { authorization: `Bearer ${this.config.accessToken}` }, signal });
    const body = obj(res.body);
    // The error object decides, whatever the status (Graph may answer 200 with an error).
    if (res.status < 200 || res.status >= 300 || body.error !== undefined) throw this.classify(res);
    return body;
  }
}

/** The `after` cursor when the edge has another page, else null. */
export function nextAfter(edge: Json, requested: number): string | null {
  const paging = obj(edge.paging);
  const after = str(obj(paging.cursors).after);
  if (!after) return null;
  if (paging.next !== undefined) return after;
  // Nested edges (business_discovery) may omit `next`: a full page means there may be more.
  return arr(edge.data).length >= requested ? after : null;
}
