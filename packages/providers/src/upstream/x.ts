/**
 * X API v2 adapter (app-only bearer token).
 * References: https://docs.x.com/x-api/users/lookup (users/by/username), /x-api/users/follows
 * (followers, following; pagination_token, max_results up to 1000), /x-api/posts/timelines
 * (users/:id/tweets, max_results 5-100), /x-api/posts/lookup (tweets/:id),
 * /x-api/posts/search/integrate/paginate (tweets/search/recent, next_token, max_results 10-100),
 * /x-api/fundamentals/response-codes-and-errors (problem types) and
 * /x-api/fundamentals/rate-limits (x-rate-limit-* headers, epoch-second reset).
 */
import { ProviderError, type ExtractionRequest, type Item, type ProfileItem } from '../types';
import { UpstreamHttp, arr, header, obj, retryAfterMs, type HttpResponse, type HttpSettings } from './http';
import { hashtagsOf, metrics, num, postItem, profileItem, str } from './items';
import { decodeCursor, paginate, profileBundle, single, type CursorState } from './paging';
import { asUrl, upstreamProvider, type UpstreamProvider } from './provider';

export const X_DEFAULT_BASE_URL = 'https://api.x.com';

export interface XConfig extends Partial<HttpSettings> {
  bearerToken: string;
  now?: () => number;
}

type Json = Record<string, unknown>;

const USER_FIELDS = 'created_at,description,profile_image_url,verified,protected,public_metrics,url';
const TWEET_FIELDS = 'created_at,author_id,conversation_id,lang,public_metrics,entities,attachments';
const TWEET_EXPANSIONS = 'author_id,attachments.media_keys';
const MEDIA_FIELDS = 'type,duration_ms';
const PROBLEM = 'https://api.twitter.com/2/problems/';

export function createXProvider(config: XConfig): UpstreamProvider {
  const http = new UpstreamHttp('x', { ...config, baseUrl: config.baseUrl ?? X_DEFAULT_BASE_URL }, () => [config.bearerToken]);
  const now = config.now ?? Date.now;

  /** Wait until x-rate-limit-reset (epoch seconds), else Retry-After, else one 15-minute window. */
  function resetDelay(res: HttpResponse): number | null {
    const reset = num(header(res.headers, 'x-rate-limit-reset'));
    if (reset !== null) return Math.max(1000, reset * 1000 - now());
    return retryAfterMs(res.headers, now());
  }

  function fromProblems(problems: unknown[], status: number): ProviderError {
    const first = obj(problems[0]);
    const type = str(first.type) ?? '';
    const message = http.safe(first.detail ?? first.title ?? `HTTP ${status}`);
    const context = { upstream: 'x', status, problem: type.replace(PROBLEM, '') };
    if (type.endsWith('resource-not-found')) return ProviderError.notFound(`X: ${message}`, context);
    if (type.endsWith('not-authorized-for-resource')) return ProviderError.private(`X: ${message}`, context);
    if (type.endsWith('invalid-request')) return ProviderError.invalid(`X: ${message}`, context);
    return new ProviderError('internal_error', `X: ${message}`, false, null, context);
  }

  function classify(res: HttpResponse): ProviderError {
    const body = obj(res.body);
    const type = str(body.type) ?? '';
    const message = http.safe(body.detail ?? body.title ?? `HTTP ${res.status}`);
    const context = { upstream: 'x', status: res.status, problem: type.replace(PROBLEM, '') };
    if (type.endsWith('usage-capped')) {
      return new ProviderError('quota_exceeded', `X usage cap reached: ${message}`, false, resetDelay(res), context);
    }
    if (res.status === 429) return ProviderError.rateLimited(`X rate limit: ${message}`, resetDelay(res) ?? 15 * 60_000, context);
    if (res.status >= 500) return ProviderError.unavailable(`X unavailable: ${message}`, retryAfterMs(res.headers, now()), context);
    if (type.endsWith('not-authorized-for-resource')) return ProviderError.private(`X: ${message}`, context);
    if (res.status === 401 || res.status === 403) {
      return new ProviderError('upstream_auth', `X rejected the credentials: ${message}`, false, null, context);
    }
    if (res.status === 404 || type.endsWith('resource-not-found')) return ProviderError.notFound(`X: ${message}`, context);
    if (res.status === 400) {
      const errors = arr(body.errors);
      return errors.length > 0 ? fromProblems(errors, 400) : ProviderError.invalid(`X: ${message}`, context);
    }
    return new ProviderError('internal_error', `X answered HTTP ${res.status}: ${message}`, false, null, context);
  }

  async function get(path: string, query: Record<string, string | number | undefined>, signal: AbortSignal): Promise<Json> {
    const res = await http.request({ path, query, headers: { authorization: `Bearer ${config.bearerToken}` }, signal });
    if (res.status < 200 || res.status >= 300) throw classify(res);
    const body = obj(res.body);
    // A 200 may carry only errors[] (resource-not-found, not-authorized-for-resource).
    if (body.data === undefined && arr(body.errors).length > 0) throw fromProblems(arr(body.errors), res.status);
    return body;
  }

  function mapUser(u: Json): ProfileItem {
    const m = obj(u.public_metrics);
    const username = str(u.username);
    return profileItem('twitter', {
      id: String(u.id),
      username,
      url: username ? `https://x.com/${username}` : null,
      published_at: str(u.created_at),
      display_name: str(u.name),
      bio: str(u.description),
      avatar_url: str(u.profile_image_url),
      verified: u.verified === true,
      private: u.protected === true,
      followers_count: num(m.followers_count),
      following_count: num(m.following_count),
      posts_count: num(m.tweet_count),
    });
  }

  function mapTweets(body: Json): Item[] {
    const includes = obj(body.includes);
    const users = new Map(arr(includes.users).map((u) => [String(obj(u).id), str(obj(u).username)]));
    const media = new Map(arr(includes.media).map((m) => [String(obj(m).media_key), obj(m)]));
    const data = Array.isArray(body.data) ? body.data : body.data ? [body.data] : [];
    return data.map((raw) => {
      const t = obj(raw);
      const id = String(t.id);
      const username = users.get(String(t.author_id)) ?? null;
      const m = obj(t.public_metrics);
      const firstMedia = media.get(String(arr(obj(t.attachments).media_keys)[0]));
      const tags = arr(obj(t.entities).hashtags).map((h) => String(obj(h).tag).toLowerCase());
      const text = str(t.text);
      const durationMs = num(firstMedia?.duration_ms);
      return postItem('twitter', 'post', {
        id,
        username,
        caption: text,
        url: `https://x.com/${username ?? 'i/web'}/status/${id}`,
        published_at: str(t.created_at),
        media_type: firstMedia ? (str(firstMedia.type) === 'photo' ? 'photo' : 'video') : 'text',
        duration_seconds: durationMs === null ? null : Math.round(durationMs / 1000),
        hashtags: tags.length > 0 ? Array.from(new Set(tags)) : hashtagsOf(text),
        metrics: metrics({
          views: num(m.impression_count),
          likes: num(m.like_count),
          comments: num(m.reply_count),
          shares: num(m.retweet_count),
        }),
      });
    });
  }

  function tweetId(target: string): string {
    const url = asUrl(target);
    if (!url) {
      if (!/^\d{1,20}$/.test(target)) throw ProviderError.invalid('not an X post ID', { target });
      return target;
    }
    const m = /\/status(?:es)?\/(\d{1,20})/.exec(url.pathname);
    if (!m?.[1]) throw ProviderError.invalid('URL does not name an X post', { target });
    return m[1];
  }

  async function user(username: string, signal: AbortSignal): Promise<Json> {
    const body = await get(`/2/users/by/username/${encodeURIComponent(username.replace(/^@/, ''))}`, { 'user.fields': USER_FIELDS }, signal);
    return obj(body.data);
  }

  async function userId(request: ExtractionRequest, start: CursorState | null): Promise<string> {
    return start?.x?.id ?? String((await user(request.target, request.signal)).id);
  }

  function tweetsOf(id: string, limit: number, start: CursorState | null, signal: AbortSignal, stage?: string) {
    return paginate({
      limit,
      pageMax: 100,
      pageMin: 5,
      start,
      stage,
      state: { id },
      signal,
      fetch: async (token, size) => {
        const body = await get(
          `/2/users/${id}/tweets`,
          {
            max_results: size,
            pagination_token: token ?? undefined,
            'tweet.fields': TWEET_FIELDS,
            expansions: TWEET_EXPANSIONS,
            'user.fields': 'username',
            'media.fields': MEDIA_FIELDS,
          },
          signal,
        );
        return { items: mapTweets(body), next: str(obj(body.meta).next_token) };
      },
    });
  }

  function follows(edge: 'followers' | 'following') {
    return async function* (request: ExtractionRequest) {
      const start = decodeCursor(request.resumeCursor);
      const id = await userId(request, start);
      yield* paginate({
        limit: request.limit,
        pageMax: 1000,
        start,
        state: { id },
        signal: request.signal,
        fetch: async (token, size) => {
          const body = await get(
            `/2/users/${id}/${edge}`,
            { max_results: size, pagination_token: token ?? undefined, 'user.fields': USER_FIELDS },
            request.signal,
          );
          return { items: arr(body.data).map((u) => mapUser(obj(u))), next: str(obj(body.meta).next_token) };
        },
      });
    };
  }

  return upstreamProvider('x-api-v2', {
    twitter: {
      profile: (request) =>
        profileBundle(
          request,
          async () => mapUser(await user(request.target, request.signal)),
          (profile, limit, start) =>
            (async function* () {
              const id = profile?.id ?? (await userId(request, start));
              yield* tweetsOf(id, limit, start, request.signal, 'posts');
            })(),
        ),
      followers: follows('followers'),
      following: follows('following'),
      posts: (request) =>
        (async function* () {
          const start = decodeCursor(request.resumeCursor);
          yield* tweetsOf(await userId(request, start), request.limit, start, request.signal);
        })(),
      post: (request) =>
        single(async () => {
          const body = await get(
            `/2/tweets/${tweetId(request.target)}`,
            { 'tweet.fields': TWEET_FIELDS, expansions: TWEET_EXPANSIONS, 'user.fields': 'username', 'media.fields': MEDIA_FIELDS },
            request.signal,
          );
          const item = mapTweets(body)[0];
          if (!item) throw ProviderError.notFound('X post not found', { upstream: 'x' });
          return item;
        }),
      search: (request) =>
        paginate({
          limit: request.limit,
          pageMax: 100,
          pageMin: 10,
          start: decodeCursor(request.resumeCursor),
          signal: request.signal,
          fetch: async (token, size) => {
            const body = await get(
              '/2/tweets/search/recent',
              {
                query: request.target,
                max_results: size,
                next_token: token ?? undefined,
                'tweet.fields': TWEET_FIELDS,
                expansions: TWEET_EXPANSIONS,
                'user.fields': 'username',
                'media.fields': MEDIA_FIELDS,
              },
              request.signal,
            );
            return { items: mapTweets(body), next: str(obj(body.meta).next_token) };
          },
        }),
    },
  });
}
