/**
 * Shared client of the Meta Graph API (Ad Library, Facebook Pages, Instagram Graph API).
 * References: https://developers.facebook.com/docs/graph-api/guides/error-handling (error body,
 * codes 1, 2 transient; 4, 17, 32, 613, 80000-80014 throttling; 190 token; 10 and 200-299
 * permission; 100 parameter; 100/33 missing object) and
 * https://developers.facebook.com/docs/graph-api/overview/rate-limiting
 * (X-App-Usage, X-Business-Use-Case-Usage with estimated_time_to_regain_access in minutes).
 * The token travels in the Authorization header, never in the URL.
 */
import { ProviderError } from '../types';
import { UpstreamHttp, arr, header, obj, retryAfterMs, type HttpResponse, type HttpSettings } from './http';
import { num, str } from './items';

export const GRAPH_DEFAULT_BASE_URL = 'https://graph.facebook.com/v19.0';

export interface GraphConfig extends Partial<HttpSettings> {
  accessToken: string;
  now?: () => number;
}

type Json = Record<string, unknown>;

/** Default wait for Graph throttling without a regain estimate ("long backoff"). */
export const GRAPH_THROTTLE_DEFAULT_MS = 10 * 60_000;

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
    const code = num(error.code) ?? 0;
    const subcode = num(error.error_subcode);
    const message = this.http.safe(error.message ?? `HTTP ${res.status}`);
    const context = { upstream: this.upstream, status: res.status, error_code: code, error_subcode: subcode, fbtrace_id: str(error.fbtrace_id) };
    const regain = businessUseCaseRegainMs(res.headers);
    if ((code === 100 && subcode === 33) || code === 803 || code === 110 || subcode === 2207013) {
      return ProviderError.notFound(`${this.upstream}: ${message}`, context);
    }
    if ([4, 17, 32, 613].includes(code) || (code >= 80000 && code <= 80014)) {
      return ProviderError.rateLimited(
        `${this.upstream} throttled: ${message}`,
        regain ?? retryAfterMs(res.headers, this.now()) ?? GRAPH_THROTTLE_DEFAULT_MS,
        context,
      );
    }
    if (code === 1 || code === 2 || code === 341 || error.is_transient === true || res.status >= 500) {
      return ProviderError.unavailable(`${this.upstream} unavailable: ${message}`, regain ?? retryAfterMs(res.headers, this.now()), context);
    }
    if (code === 190 || code === 102 || code === 10 || (code >= 200 && code <= 299) || res.status === 401) {
      return new ProviderError('upstream_auth', `${this.upstream} rejected the access token or permission: ${message}`, false, null, context);
    }
    if (code === 100 || res.status === 400) return ProviderError.invalid(`${this.upstream}: ${message}`, context);
    if (res.status === 404) return ProviderError.notFound(`${this.upstream}: ${message}`, context);
    return new ProviderError('internal_error', `${this.upstream} answered HTTP ${res.status}: ${message}`, false, null, context);
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
