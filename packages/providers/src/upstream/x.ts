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
import { classifyBy, rows, type ErrorRule } from './classify';
import { UpstreamHttp, arr, header, obj, retryAfterMs, type HttpResponse, type HttpSettings } from './http';
import { hashtagsOf, isoTime, metrics, num, postItem, profileItem, str } from './items';
import { decodeCursor, paginate, profileBundle, single, type CursorState } from './paging';
import { asUrl, upstreamProvider, type UpstreamProvider } from './provider';

export const X_DEFAULT_BASE_URL = 'https://api.x.com';

export interface XConfig extends Partial<HttpSettings> {
  bearerToken: string;
  now?: () => number;
}

type Json = Record<string, unknown>;

const USER_FIELDS = 'created_at,description,profile_image_url,verified,protected,public_metrics,url';
/**
 * note_tweet: "the full-content of the Tweet, including text beyond 280 characters" (X's OpenAPI
 * document, Tweet.note_tweet); a long post's `text` is only its first 280 characters.
 */
const TWEET_FIELDS = 'created_at,author_id,conversation_id,lang,public_metrics,entities,attachments,note_tweet';
const TWEET_EXPANSIONS = 'author_id,attachments.media_keys';
const MEDIA_FIELDS = 'type,duration_ms';
const PROBLEM = 'https://api.twitter.com/2/problems/';

export function createXProvider(config: XConfig): UpstreamProvider {
  // What is left of the endpoint's 15-minute window, as each answer's x-rate-limit-remaining says.
  const http = new UpstreamHttp('x', { ...config, baseUrl: config.baseUrl ?? X_DEFAULT_BASE_URL }, () => [config.bearerToken], {
    unit: "requests left in the endpoint's 15-minute window",
    remaining: (res) => num(header(res.headers, 'x-rate-limit-remaining')),
  });
  const now = config.now ?? Date.now;

  /** Wait until x-rate-limit-reset (epoch seconds), else Retry-After. */
  function resetDelay(res: HttpResponse): number | null {
    const reset = num(header(res.headers, 'x-rate-limit-reset'));
    if (reset !== null) return Math.max(1000, reset * 1000 - now());
    return retryAfterMs(res.headers, now());
  }

  /**
   * A problem answer: the top-level problem (4xx/5xx: type, title, detail, errors[] of
   * {message, parameters} without type) or, in a 200, the first item of errors[] (which carries
   * its own type).
   */
  function classify(res: HttpResponse): ProviderError {
    const body = obj(res.body);
    const first = obj(arr(body.errors)[0]);
    const topLevel = str(body.type) !== null || str(body.title) !== null;
    const problem = topLevel ? body : first;
    const type = (str(problem.type) ?? '').replace(PROBLEM, '');
    const facts: XFacts = { status: res.status, type, title: str(problem.title) ?? '', message: str(first.message) ?? '', res };
    const message = http.safe(problem.detail ?? first.message ?? problem.title ?? `HTTP ${res.status}`);
    return classifyBy(X_ERRORS, facts, `X: ${message}`, { upstream: 'x', status: res.status, problem: type || str(problem.title) });
  }

  interface XFacts {
    status: number;
    type: string;
    title: string;
    message: string;
    res: HttpResponse;
  }

  /** X API v2 errors (docs.x.com/x-api/fundamentals/response-codes-and-errors, problem types of the OpenAPI document). */
  const X_ERRORS: ErrorRule<XFacts>[] = [
    {
      status: '402',
      upstream: 'CreditsDepleted (pay-per-use balance exhausted)',
      code: 'quota_exceeded',
      retryable: false,
      wait: 'until credits are bought',
      when: (f) => f.status === 402,
    },
    {
      status: '429',
      upstream: 'problem usage-capped (daily or monthly cap)',
      code: 'quota_exceeded',
      retryable: false,
      wait: 'x-rate-limit-reset if sent',
      when: (f) => f.type === 'usage-capped',
      waitMs: (f) => resetDelay(f.res),
    },
    {
      status: '429',
      upstream: 'Too Many Requests',
      code: 'rate_limited',
      retryable: true,
      wait: 'until x-rate-limit-reset, else Retry-After, else 15 min',
      when: (f) => f.status === 429,
      waitMs: (f) => resetDelay(f.res) ?? 15 * 60_000,
    },
    {
      status: '5xx',
      upstream: 'any',
      code: 'upstream_unavailable',
      retryable: true,
      wait: 'Retry-After if sent',
      when: (f) => f.status >= 500,
      waitMs: (f) => retryAfterMs(f.res.headers, now()),
    },
    {
      status: '200, 403',
      upstream: 'problem not-authorized-for-resource (protected account)',
      code: 'target_private',
      retryable: false,
      wait: '',
      when: (f) => f.type === 'not-authorized-for-resource',
    },
    {
      status: '401, 403',
      upstream: 'Unauthorized; problem client-forbidden, unsupported-authentication',
      code: 'upstream_auth',
      retryable: false,
      wait: '',
      when: (f) =>
        f.status === 401 ||
        f.status === 403 ||
        ['client-forbidden', 'unsupported-authentication', 'not-authorized-for-field'].includes(f.type),
    },
    {
      status: '200, 404',
      upstream: 'problem resource-not-found',
      code: 'target_not_found',
      retryable: false,
      wait: '',
      when: (f) => f.type === 'resource-not-found' || f.status === 404,
    },
    {
      status: '400',
      upstream: 'problem invalid-request naming a parameter X does not know',
      code: 'internal_error',
      retryable: false,
      wait: '',
      when: (f) => f.type === 'invalid-request' && /query parameter (value )?\[[^\]]*\] is not one of/.test(f.message),
    },
    {
      status: '400',
      upstream: 'problem invalid-request (the query or target)',
      code: 'invalid_target',
      retryable: false,
      wait: '',
      when: (f) => f.type === 'invalid-request' || f.status === 400,
    },
    { status: 'any', upstream: 'anything else', code: 'internal_error', retryable: false, wait: '', when: () => true },
  ];

  async function get(path: string, query: Record<string, string | number | undefined>, signal: AbortSignal): Promise<Json> {
    const res = await http.request({ path, query, headers: { authorization: `Bearer ${config.bearerToken}` }, signal });
    if (res.status < 200 || res.status >= 300) throw classify(res);
    const body = obj(res.body);
    // A 200 may carry only errors[] (resource-not-found, not-authorized-for-resource).
    if (body.data === undefined && arr(body.errors).length > 0) throw classify(res);
    return body;
  }

  function mapUser(u: Json): ProfileItem {
    const m = obj(u.public_metrics);
    const username = str(u.username);
    return profileItem('twitter', {
      id: String(u.id),
      username,
      url: username ? `https://x.com/${username}` : null,
      published_at: isoTime(u.created_at),
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
      // The author's username from includes.users; the Tweet object's own `username` (in X's
      // OpenAPI Tweet schema and its example) where no user is included.
      const username = users.get(String(t.author_id)) ?? str(t.username);
      const m = obj(t.public_metrics);
      const firstMedia = media.get(String(arr(obj(t.attachments).media_keys)[0]));
      // A long post's whole text and its entities are in note_tweet; `text` and `entities` then
      // cover only the first 280 characters.
      const note = obj(t.note_tweet);
      const whole = str(note.text);
      const text = whole ?? str(t.text);
      const entities = whole !== null && note.entities !== undefined ? obj(note.entities) : obj(t.entities);
      const tags = arr(entities.hashtags).map((h) => String(obj(h).tag).toLowerCase());
      const durationMs = num(firstMedia?.duration_ms);
      return postItem('twitter', 'post', {
        id,
        username,
        caption: text,
        url: `https://x.com/${username ?? 'i/web'}/status/${id}`,
        published_at: isoTime(t.created_at),
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
    const body = await get(
      `/2/users/by/username/${encodeURIComponent(username.replace(/^@/, ''))}`,
      { 'user.fields': USER_FIELDS },
      signal,
    );
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

  return upstreamProvider(
    'x-api-v2',
    'official',
    rows(X_ERRORS),
    {
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
    },
    (signal) => http.quota(signal),
  );
}
