/**
 * YouTube Data API v3 adapter.
 * Reference: https://developers.google.com/youtube/v3/docs (channels.list, playlistItems.list,
 * videos.list, commentThreads.list, search.list, playlists.list) and
 * https://developers.google.com/youtube/v3/docs/errors (error body and reasons).
 * The API key travels in the X-Goog-Api-Key header, never in the URL.
 */
import { ProviderError, type ExtractionRequest, type Item, type ProfileItem } from '../types';
import { classifyBy, rows, type ErrorRule } from './classify';
import { UpstreamHttp, arr, obj, retryAfterMs, type HttpResponse, type HttpSettings } from './http';
import { commentItem, hashtagsOf, isoDurationSeconds, isoTime, metrics, num, playlistItem, postItem, profileItem, str } from './items';
import { decodeCursor, paginate, profileBundle, single, type CursorState } from './paging';
import { asUrl, upstreamProvider, type OperationHandler, type UpstreamProvider } from './provider';
import { msUntilMidnightPacific } from './time';

export const YOUTUBE_DEFAULT_BASE_URL = 'https://www.googleapis.com/youtube/v3';

export interface YouTubeConfig extends Partial<HttpSettings> {
  apiKey: string;
  /**
   * Serve `shorts` from the channel's uploads-shorts playlist ("UUSH" + the channel ID without
   * "UC"). YouTube does not document that playlist, so it is opt-in (YOUTUBE_SHORTS_PLAYLIST=1).
   */
  shortsPlaylist?: boolean;
  /** Clock for the quota reset time (tests). */
  now?: () => number;
}

type Json = Record<string, unknown>;

const VIDEO_PARTS = 'snippet,statistics,contentDetails';

export function createYouTubeProvider(config: YouTubeConfig): UpstreamProvider {
  const http = new UpstreamHttp(
    'youtube',
    { ...config, baseUrl: config.baseUrl ?? YOUTUBE_DEFAULT_BASE_URL },
    () => [config.apiKey],
    // The quota is counted here, as YouTube publishes each method's cost (search.list 100 units,
    // every other list method the adapter calls 1; a failed call costs too): 10,000 units a day.
    { unit: 'units a day', limit: 10_000, cost: (req) => (req.path.replace(/\/+$/, '').endsWith('/search') ? 100 : 1) },
  );
  const now = config.now ?? Date.now;

  interface YouTubeFacts {
    status: number;
    /** errors[0].reason (v1 error format). */
    reason: string;
    /** details[].reason of a google.rpc.ErrorInfo (e.g. API_KEY_INVALID), '' when none. */
    info: string;
    message: string;
    res: HttpResponse;
  }

  /**
   * YouTube Data API errors (developers.google.com/youtube/v3/docs/errors, and the
   * google.rpc.ErrorInfo details the Google API front end adds: an invalid key answers 400
   * reason badRequest with details reason API_KEY_INVALID).
   */
  const YOUTUBE_ERRORS: ErrorRule<YouTubeFacts>[] = [
    {
      status: '403',
      upstream: 'quotaExceeded, dailyLimitExceeded',
      code: 'quota_exceeded',
      retryable: false,
      wait: 'until midnight Pacific (the daily reset)',
      when: (f) => ['quotaExceeded', 'dailyLimitExceeded'].includes(f.reason),
      waitMs: () => msUntilMidnightPacific(now()),
    },
    {
      status: '429, 403',
      upstream: 'rateLimitExceeded, userRateLimitExceeded',
      code: 'rate_limited',
      retryable: true,
      wait: 'Retry-After, else 60 s',
      when: (f) => f.status === 429 || ['rateLimitExceeded', 'userRateLimitExceeded'].includes(f.reason),
      waitMs: (f) => retryAfterMs(f.res.headers, now()) ?? 60_000,
    },
    {
      status: '5xx',
      upstream: 'backendError and any other',
      code: 'upstream_unavailable',
      retryable: true,
      wait: 'Retry-After if sent',
      when: (f) => f.status >= 500,
      waitMs: (f) => retryAfterMs(f.res.headers, now()),
    },
    {
      status: '400, 401, 403',
      upstream:
        'details reason API_KEY_INVALID, API_KEY_SERVICE_BLOCKED, API_KEY_HTTP_REFERRER_BLOCKED, API_KEY_IP_ADDRESS_BLOCKED, SERVICE_DISABLED; keyInvalid, keyExpired, accessNotConfigured, ipRefererBlocked, forbidden for unregistered callers',
      code: 'upstream_auth',
      retryable: false,
      wait: '',
      when: (f) =>
        f.status === 401 ||
        /^API_KEY_|^SERVICE_DISABLED$/.test(f.info) ||
        ['keyInvalid', 'keyExpired', 'accessNotConfigured', 'ipRefererBlocked', 'authError'].includes(f.reason) ||
        (f.status === 403 && /unregistered callers/i.test(f.message)),
    },
    {
      status: '400',
      upstream: 'invalid / unknownPart for a parameter or part the API does not know',
      code: 'internal_error',
      retryable: false,
      wait: '',
      when: (f) => f.status === 400 && (f.reason === 'unknownPart' || /Cannot bind query parameter/.test(f.message)),
    },
    {
      status: '404',
      upstream: 'videoNotFound, playlistNotFound, channelNotFound, notFound',
      code: 'target_not_found',
      retryable: false,
      wait: '',
      when: (f) => f.status === 404,
    },
    {
      status: '403',
      upstream: 'commentsDisabled, playlistItemsNotAccessible, forbidden',
      code: 'target_private',
      retryable: false,
      wait: '',
      when: (f) => f.status === 403,
    },
    {
      status: '400',
      upstream: 'invalidRegionCode, invalidParameter and other bad values',
      code: 'invalid_target',
      retryable: false,
      wait: '',
      when: (f) => f.status === 400,
    },
    { status: 'any', upstream: 'anything else', code: 'internal_error', retryable: false, wait: '', when: () => true },
  ];

  function classify(res: HttpResponse): ProviderError {
    const error = obj(obj(res.body).error);
    const reason = str(obj(arr(error.errors)[0]).reason) ?? '';
    const info =
      arr(error.details)
        .map((d) => str(obj(d).reason))
        .find((r): r is string => Boolean(r)) ?? '';
    const message = http.safe(error.message ?? `HTTP ${res.status}`);
    return classifyBy(YOUTUBE_ERRORS, { status: res.status, reason, info, message: str(error.message) ?? '', res }, `YouTube: ${message}`, {
      upstream: 'youtube',
      status: res.status,
      reason: info || reason,
    });
  }

  async function get(path: string, query: Record<string, string | number | undefined>, signal: AbortSignal): Promise<Json> {
    const res = await http.request({ path, query, headers: { 'x-goog-api-key': config.apiKey }, signal });
    if (res.status < 200 || res.status >= 300) throw classify(res);
    return obj(res.body);
  }

  // ---- targets -------------------------------------------------------------------------------

  /**
   * How channels.list finds the channel. A legacy custom URL (/c/<name>) is neither a handle nor
   * a username and channels.list has no parameter for it: it is looked up with search.list.
   */
  function channelQuery(target: string): Record<string, string> | { customName: string } {
    const url = asUrl(target);
    if (url) {
      const [first, second] = url.pathname.split('/').filter(Boolean).map(decodeURIComponent);
      if (first?.startsWith('@')) return { forHandle: first };
      if (first === 'channel' && second) return { id: second };
      if (first === 'user' && second) return { forUsername: second };
      if (first === 'c' && second) return { customName: second };
      throw ProviderError.invalid('URL does not name a YouTube channel', { target });
    }
    if (/^UC[A-Za-z0-9_-]{22}$/.test(target)) return { id: target };
    return { forHandle: `@${target.replace(/^@/, '')}` };
  }

  const squash = (s: string): string => s.toLowerCase().replace(/[^\p{L}\p{N}]/gu, '');

  /**
   * The channel of a legacy custom URL: search.list for channels named like it (100 quota units),
   * then the one whose customUrl or title is the name (case, spaces and punctuation ignored).
   */
  async function channelByCustomName(name: string, signal: AbortSignal): Promise<Json> {
    const found = await get('/search', { part: 'snippet', type: 'channel', q: name, maxResults: 5 }, signal);
    const ids = arr(found.items)
      .map((i) => str(obj(obj(i).id).channelId))
      .filter((x): x is string => Boolean(x));
    if (ids.length === 0) throw ProviderError.notFound('no YouTube channel has that custom URL', { upstream: 'youtube' });
    const body = await get('/channels', { part: 'snippet,statistics,contentDetails', id: ids.join(','), maxResults: ids.length }, signal);
    const wanted = squash(name);
    const channels = arr(body.items).map(obj);
    const hit =
      channels.find((c) => squash(str(obj(c.snippet).customUrl) ?? '') === wanted) ??
      channels.find((c) => squash(str(obj(c.snippet).title) ?? '') === wanted);
    if (!hit) throw ProviderError.notFound('no YouTube channel has that custom URL', { upstream: 'youtube' });
    return hit;
  }

  function videoId(target: string): string {
    const url = asUrl(target);
    if (!url) return target;
    const v = url.searchParams.get('v');
    if (v) return v;
    const parts = url.pathname.split('/').filter(Boolean);
    if (url.hostname.endsWith('youtu.be') && parts[0]) return parts[0];
    if (['shorts', 'live', 'embed', 'v'].includes(parts[0] ?? '') && parts[1]) return parts[1];
    throw ProviderError.invalid('URL does not name a YouTube video', { target });
  }

  function playlistId(target: string): string {
    const url = asUrl(target);
    if (!url) return target;
    const list = url.searchParams.get('list');
    if (!list) throw ProviderError.invalid('URL does not name a YouTube playlist', { target });
    return list;
  }

  // ---- mapping -------------------------------------------------------------------------------

  function mapChannel(c: Json): ProfileItem {
    const snippet = obj(c.snippet);
    const stats = obj(c.statistics);
    const thumbs = obj(snippet.thumbnails);
    const handle = str(snippet.customUrl)?.replace(/^@/, '') ?? null;
    const id = String(c.id);
    return profileItem('youtube', {
      id,
      username: handle,
      url: handle ? `https://www.youtube.com/@${handle}` : `https://www.youtube.com/channel/${id}`,
      published_at: isoTime(snippet.publishedAt),
      display_name: str(snippet.title),
      bio: str(snippet.description),
      avatar_url: str(obj(thumbs.high).url) ?? str(obj(thumbs.default).url),
      followers_count: stats.hiddenSubscriberCount === true ? null : num(stats.subscriberCount),
      posts_count: num(stats.videoCount),
    });
  }

  function mapVideo(v: Json, handle: string | null): Item {
    const snippet = obj(v.snippet);
    const stats = obj(v.statistics);
    const details = obj(v.contentDetails);
    const title = str(snippet.title);
    const description = str(snippet.description);
    const id = String(v.id);
    return postItem('youtube', 'video', {
      id,
      username: handle ?? str(snippet.channelTitle),
      caption: description,
      url: `https://www.youtube.com/watch?v=${id}`,
      published_at: isoTime(snippet.publishedAt),
      title,
      media_type: 'video',
      duration_seconds: isoDurationSeconds(details.duration),
      hashtags: hashtagsOf([title, description].filter(Boolean).join(' ')),
      metrics: metrics({ views: num(stats.viewCount), likes: num(stats.likeCount), comments: num(stats.commentCount) }),
    });
  }

  /** videos.list for up to 50 IDs, returned in the order of `ids` (missing ones dropped). */
  async function videosById(ids: string[], handle: string | null, signal: AbortSignal): Promise<Item[]> {
    if (ids.length === 0) return [];
    const body = await get('/videos', { part: VIDEO_PARTS, id: ids.join(','), maxResults: ids.length }, signal);
    const byId = new Map(arr(body.items).map((v) => [String(obj(v).id), obj(v)]));
    return ids.flatMap((id) => {
      const v = byId.get(id);
      return v ? [mapVideo(v, handle)] : [];
    });
  }

  async function channel(target: string, signal: AbortSignal): Promise<Json> {
    const query = channelQuery(target);
    if ('customName' in query) return channelByCustomName(query.customName, signal);
    const body = await get('/channels', { part: 'snippet,statistics,contentDetails', ...query }, signal);
    const c = arr(body.items)[0];
    // An unknown handle answers 200 with no items.
    if (!c) throw ProviderError.notFound('YouTube channel not found', { upstream: 'youtube', target });
    return obj(c);
  }

  /** Items of a playlist as videos (playlistItems, then videos.list for statistics). */
  function playlistVideos(
    playlist: string,
    handle: string | null,
    limit: number,
    start: CursorState | null,
    signal: AbortSignal,
    stage?: string,
  ) {
    return paginate({
      limit,
      pageMax: 50,
      start,
      stage,
      state: { u: playlist, ...(handle ? { h: handle } : {}) },
      signal,
      fetch: async (token, size) => {
        const body = await get(
          '/playlistItems',
          { part: 'contentDetails', playlistId: playlist, maxResults: size, pageToken: token ?? undefined },
          signal,
        );
        const ids = arr(body.items)
          .map((i) => str(obj(obj(i).contentDetails).videoId))
          .filter((x): x is string => Boolean(x));
        return {
          items: await videosById(ids, handle, signal),
          next: str(body.nextPageToken),
          total: num(obj(body.pageInfo).totalResults),
        };
      },
    });
  }

  /** The channel's uploads, newest first; resumable without looking the channel up again. */
  async function* channelPosts(request: ExtractionRequest, known: Json | null, limit: number, start: CursorState | null, stage?: string) {
    let uploads = start?.x?.u;
    let handle = start?.x?.h ?? null;
    if (!uploads) {
      const c = known ?? (await channel(request.target, request.signal));
      uploads = str(obj(obj(obj(c).contentDetails).relatedPlaylists).uploads) ?? undefined;
      handle = str(obj(obj(c).snippet).customUrl)?.replace(/^@/, '') ?? null;
      if (!uploads) throw ProviderError.notFound('YouTube channel has no uploads playlist', { upstream: 'youtube' });
    }
    yield* playlistVideos(uploads, handle, limit, start, request.signal, stage);
  }

  /** The channel's shorts, newest first, from its uploads-shorts playlist. */
  async function* channelShorts(request: ExtractionRequest) {
    const start = decodeCursor(request.resumeCursor);
    let playlist = start?.x?.u;
    let handle = start?.x?.h ?? null;
    if (!playlist) {
      const c = await channel(request.target, request.signal);
      playlist = `UUSH${String(c.id).slice(2)}`;
      handle = str(obj(c.snippet).customUrl)?.replace(/^@/, '') ?? null;
    }
    try {
      yield* playlistVideos(playlist, handle, request.limit, start, request.signal);
    } catch (error) {
      // A channel without shorts has no such playlist: zero results, not a failure.
      if (error instanceof ProviderError && error.code === 'target_not_found' && (start?.n ?? 0) === 0) {
        yield { items: [], cursor: null, total: 0 };
        return;
      }
      throw error;
    }
  }

  const shorts: Record<string, OperationHandler> = config.shortsPlaylist ? { shorts: channelShorts } : {};

  return upstreamProvider(
    'youtube-data-api',
    'official',
    rows(YOUTUBE_ERRORS),
    {
      youtube: {
        ...shorts,
        profile: (request) => {
          let raw: Json | null = null;
          return profileBundle(
            request,
            async () => mapChannel((raw = await channel(request.target, request.signal))),
            (_profile, limit, start) => channelPosts(request, raw, limit, start, 'posts'),
          );
        },
        posts: (request) => channelPosts(request, null, request.limit, decodeCursor(request.resumeCursor)),
        video: (request) =>
          single(async () => {
            const items = await videosById([videoId(request.target)], null, request.signal);
            if (!items[0]) throw ProviderError.notFound('YouTube video not found or not public', { upstream: 'youtube' });
            return items[0];
          }),
        comments: (request) => {
          const video = videoId(request.target);
          return paginate({
            limit: request.limit,
            pageMax: 100,
            start: decodeCursor(request.resumeCursor),
            signal: request.signal,
            fetch: async (token, size) => {
              const body = await get(
                '/commentThreads',
                {
                  part: 'snippet',
                  videoId: video,
                  maxResults: size,
                  order: 'time',
                  textFormat: 'plainText',
                  pageToken: token ?? undefined,
                },
                request.signal,
              );
              const items = arr(body.items).map((t) => {
                const thread = obj(obj(t).snippet);
                const top = obj(thread.topLevelComment);
                const s = obj(top.snippet);
                const id = String(top.id ?? obj(t).id);
                const link = `https://www.youtube.com/watch?v=${video}&lc=${id}`;
                return commentItem('youtube', {
                  id,
                  username: str(s.authorDisplayName)?.replace(/^@/, '') ?? null,
                  caption: str(s.textOriginal) ?? str(s.textDisplay),
                  url: link,
                  published_at: isoTime(s.publishedAt),
                  parent_id: str(thread.videoId) ?? video,
                  likes: num(s.likeCount),
                  reply_count: num(thread.totalReplyCount),
                });
              });
              return { items, next: str(body.nextPageToken) };
            },
          });
        },
        search: (request) =>
          paginate({
            limit: request.limit,
            pageMax: 50,
            start: decodeCursor(request.resumeCursor),
            signal: request.signal,
            fetch: async (token, size) => {
              const body = await get(
                '/search',
                { part: 'snippet', type: 'video', q: request.target, maxResults: size, pageToken: token ?? undefined },
                request.signal,
              );
              const ids = arr(body.items)
                .map((i) => str(obj(obj(i).id).videoId))
                .filter((x): x is string => Boolean(x));
              return { items: await videosById(ids, null, request.signal), next: str(body.nextPageToken) };
            },
          }),
        trending: (request) =>
          paginate({
            limit: request.limit,
            pageMax: 50,
            start: decodeCursor(request.resumeCursor),
            signal: request.signal,
            fetch: async (token, size) => {
              const body = await get(
                '/videos',
                { part: VIDEO_PARTS, chart: 'mostPopular', regionCode: request.target, maxResults: size, pageToken: token ?? undefined },
                request.signal,
              );
              return {
                items: arr(body.items).map((v) => mapVideo(obj(v), null)),
                next: str(body.nextPageToken),
                total: num(obj(body.pageInfo).totalResults),
              };
            },
          }),
        playlist: (request) =>
          single(async () => {
            const id = playlistId(request.target);
            const body = await get('/playlists', { part: 'snippet,contentDetails', id }, request.signal);
            const p = arr(body.items)[0];
            if (!p) throw ProviderError.notFound('YouTube playlist not found or private', { upstream: 'youtube' });
            const snippet = obj(obj(p).snippet);
            return playlistItem('youtube', {
              id: String(obj(p).id),
              username: str(snippet.channelTitle),
              caption: str(snippet.description),
              url: `https://www.youtube.com/playlist?list=${id}`,
              published_at: isoTime(snippet.publishedAt),
              title: str(snippet.title),
              items_count: num(obj(obj(p).contentDetails).itemCount),
            });
          }),
        playlist_items: (request) =>
          playlistVideos(playlistId(request.target), null, request.limit, decodeCursor(request.resumeCursor), request.signal),
      },
    },
    (signal) => http.quota(signal),
  );
}
