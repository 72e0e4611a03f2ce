/**
 * YouTube Data API v3 adapter.
 * Reference: https://developers.google.com/youtube/v3/docs (channels.list, playlistItems.list,
 * videos.list, commentThreads.list, search.list, playlists.list) and
 * https://developers.google.com/youtube/v3/docs/errors (error body and reasons).
 * The API key travels in the X-Goog-Api-Key header, never in the URL.
 */
import { ProviderError, type ExtractionRequest, type Item, type ProfileItem } from '../types';
import { UpstreamHttp, arr, obj, retryAfterMs, type HttpResponse, type HttpSettings } from './http';
import { commentItem, hashtagsOf, isoDurationSeconds, metrics, num, playlistItem, postItem, profileItem, str } from './items';
import { decodeCursor, paginate, profileBundle, single, type CursorState } from './paging';
import { asUrl, upstreamProvider, type UpstreamProvider } from './provider';
import { msUntilMidnightPacific } from './time';

export const YOUTUBE_DEFAULT_BASE_URL = 'https://www.googleapis.com/youtube/v3';

export interface YouTubeConfig extends Partial<HttpSettings> {
  apiKey: string;
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
  );
  const now = config.now ?? Date.now;

  function classify(res: HttpResponse): ProviderError {
    const error = obj(obj(res.body).error);
    const reason = str(obj(arr(error.errors)[0]).reason) ?? '';
    const message = http.safe(error.message ?? `HTTP ${res.status}`);
    const context = { upstream: 'youtube', status: res.status, reason };
    if (reason === 'quotaExceeded' || reason === 'dailyLimitExceeded') {
      return new ProviderError('quota_exceeded', `YouTube daily quota exceeded: ${message}`, false, msUntilMidnightPacific(now()), context);
    }
    if (res.status === 429 || reason === 'rateLimitExceeded' || reason === 'userRateLimitExceeded') {
      return ProviderError.rateLimited(`YouTube rate limit: ${message}`, retryAfterMs(res.headers, now()) ?? 60_000, context);
    }
    if (res.status >= 500) return ProviderError.unavailable(`YouTube unavailable: ${message}`, retryAfterMs(res.headers, now()), context);
    if (res.status === 401 || ['keyInvalid', 'keyExpired', 'accessNotConfigured', 'ipRefererBlocked', 'authError'].includes(reason)) {
      return new ProviderError('upstream_auth', `YouTube rejected the API key: ${message}`, false, null, context);
    }
    if (res.status === 404) return ProviderError.notFound(`YouTube: ${message}`, context);
    if (res.status === 403) return ProviderError.private(`YouTube: ${message}`, context);
    if (res.status === 400) return ProviderError.invalid(`YouTube: ${message}`, context);
    return new ProviderError('internal_error', `YouTube answered HTTP ${res.status}: ${message}`, false, null, context);
  }

  async function get(path: string, query: Record<string, string | number | undefined>, signal: AbortSignal): Promise<Json> {
    const res = await http.request({ path, query, headers: { 'x-goog-api-key': config.apiKey }, signal });
    if (res.status < 200 || res.status >= 300) throw classify(res);
    return obj(res.body);
  }

  // ---- targets -------------------------------------------------------------------------------

  function channelQuery(target: string): Record<string, string> {
    const url = asUrl(target);
    if (url) {
      const [first, second] = url.pathname.split('/').filter(Boolean).map(decodeURIComponent);
      if (first?.startsWith('@')) return { forHandle: first };
      if (first === 'channel' && second) return { id: second };
      if (first === 'user' && second) return { forUsername: second };
      if (first === 'c' && second) return { forHandle: `@${second}` };
      throw ProviderError.invalid('URL does not name a YouTube channel', { target });
    }
    if (/^UC[A-Za-z0-9_-]{22}$/.test(target)) return { id: target };
    return { forHandle: `@${target.replace(/^@/, '')}` };
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
      published_at: str(snippet.publishedAt),
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
      published_at: str(snippet.publishedAt),
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
    const body = await get('/channels', { part: 'snippet,statistics,contentDetails', ...channelQuery(target) }, signal);
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
        const body = await get('/playlistItems', { part: 'contentDetails', playlistId: playlist, maxResults: size, pageToken: token ?? undefined }, signal);
        const ids = arr(body.items).map((i) => str(obj(obj(i).contentDetails).videoId)).filter((x): x is string => Boolean(x));
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

  return upstreamProvider('youtube-data-api', {
    youtube: {
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
              { part: 'snippet', videoId: video, maxResults: size, order: 'time', textFormat: 'plainText', pageToken: token ?? undefined },
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
                published_at: str(s.publishedAt),
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
            const ids = arr(body.items).map((i) => str(obj(obj(i).id).videoId)).filter((x): x is string => Boolean(x));
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
            published_at: str(snippet.publishedAt),
            title: str(snippet.title),
            items_count: num(obj(obj(p).contentDetails).itemCount),
          });
        }),
      playlist_items: (request) =>
        playlistVideos(playlistId(request.target), null, request.limit, decodeCursor(request.resumeCursor), request.signal),
    },
  });
}
