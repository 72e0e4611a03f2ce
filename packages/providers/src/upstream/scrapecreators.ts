/**
 * ScrapeCreators adapter: a commercial social-data vendor, for operations no official API offers.
 * Reference: the vendor's public CLI (github.com/ScrapeCreators/scrapecreators-cli,
 * api-config/*.js: one GET per endpoint under https://api.scrapecreators.com, the key in the
 * x-api-key header; src/output.js: 401 bad key, 402 no credits left, 404 not found, 429 rate
 * limited, 5xx retry). Every reply carries `credits_charged` (usually 1 per request) and
 * `credits_remaining`; the vendor bills per request, so the adapter asks for the largest pages it
 * can and never asks for a page once the limit is reached (docs/providers.md, "Vendor costs").
 */
import { ProviderError, type Item } from '../types';
import { classifyBy, rows, type ErrorRule } from './classify';
import { UpstreamHttp, arr, obj, retryAfterMs, type HttpResponse, type HttpSettings } from './http';
import {
  adItem,
  advertiserItem,
  commentItem,
  countryCodes,
  flag,
  hashtagsOf,
  highlightItem,
  isoTime,
  metrics,
  num,
  postItem,
  profileItem,
  storyItem,
  str,
  transcriptItem,
} from './items';
import { decodeCursor, paginate, single } from './paging';
import { asUrl, upstreamProvider, type UpstreamProvider } from './provider';

export const SCRAPECREATORS_DEFAULT_BASE_URL = 'https://api.scrapecreators.com';

export interface ScrapeCreatorsConfig extends Partial<HttpSettings> {
  apiKey: string;
  now?: () => number;
}

type Json = Record<string, unknown>;

interface VendorFacts {
  status: number;
  message: string;
  res: HttpResponse;
}

export function createScrapeCreatorsProvider(config: ScrapeCreatorsConfig): UpstreamProvider {
  // The vendor states the account's credits left in every successful reply (credits_remaining).
  const http = new UpstreamHttp(
    'scrapecreators',
    { ...config, baseUrl: config.baseUrl ?? SCRAPECREATORS_DEFAULT_BASE_URL },
    () => [config.apiKey],
    {
      unit: 'credits',
      remaining: (res) => num(obj(res.body).credits_remaining),
    },
  );
  const now = config.now ?? Date.now;

  /** ScrapeCreators errors (the CLI's src/output.js getSuggestion, by status). */
  const VENDOR_ERRORS: ErrorRule<VendorFacts>[] = [
    {
      status: '401, 403',
      upstream: 'invalid or missing API key',
      code: 'upstream_auth',
      retryable: false,
      wait: '',
      when: (f) => f.status === 401 || f.status === 403,
    },
    {
      status: '402',
      upstream: 'no credits remaining',
      code: 'quota_exceeded',
      retryable: false,
      wait: 'until credits are bought',
      when: (f) => f.status === 402,
    },
    {
      status: '429',
      upstream: 'rate limited',
      code: 'rate_limited',
      retryable: true,
      wait: 'Retry-After, else 60 s',
      when: (f) => f.status === 429,
      waitMs: (f) => retryAfterMs(f.res.headers, now()) ?? 60_000,
    },
    {
      status: '5xx',
      upstream: 'server error',
      code: 'upstream_unavailable',
      retryable: true,
      wait: 'Retry-After if sent',
      when: (f) => f.status >= 500,
      waitMs: (f) => retryAfterMs(f.res.headers, now()),
    },
    {
      status: '404',
      upstream: 'resource not found (or private)',
      code: 'target_not_found',
      retryable: false,
      wait: '',
      when: (f) => f.status === 404,
    },
    {
      status: '400',
      upstream: 'a parameter the endpoint does not take',
      code: 'internal_error',
      retryable: false,
      wait: '',
      when: (f) => f.status === 400 && /unknown parameter|not allowed/i.test(f.message),
    },
    { status: '400', upstream: 'bad target', code: 'invalid_target', retryable: false, wait: '', when: (f) => f.status === 400 },
    { status: 'any', upstream: 'anything else', code: 'internal_error', retryable: false, wait: '', when: () => true },
  ];

  function classify(res: HttpResponse): ProviderError {
    const body = obj(res.body);
    const raw = str(body.message) ?? str(body.error) ?? `HTTP ${res.status}`;
    return classifyBy(VENDOR_ERRORS, { status: res.status, message: raw, res }, `ScrapeCreators: ${http.safe(raw)}`, {
      upstream: 'scrapecreators',
      status: res.status,
    });
  }

  async function get(path: string, query: Record<string, string | number | undefined>, signal: AbortSignal): Promise<Json> {
    const res = await http.request({ path, query, headers: { 'x-api-key': config.apiKey }, signal });
    const body = obj(res.body);
    if (res.status < 200 || res.status >= 300 || body.success === false) throw classify(res);
    return body;
  }

  // ---- targets: the vendor takes public URLs; bare IDs and handles become URLs ---------------

  const igPostUrl = (t: string): string => (asUrl(t) ? t : `https://www.instagram.com/p/${t}/`);
  const ytVideoUrl = (t: string): string => (asUrl(t) ? t : `https://www.youtube.com/watch?v=${t}`);
  const xPostUrl = (t: string): string => (asUrl(t) ? t : `https://x.com/i/status/${t}`);
  const fbUrl = (t: string): string => (asUrl(t) ? t : `https://www.facebook.com/${t}`);
  const handle = (t: string): string => {
    const url = asUrl(t);
    return (url ? (url.pathname.split('/').filter(Boolean)[0] ?? t) : t).replace(/^@/, '');
  };
  function adId(t: string): string {
    const url = asUrl(t);
    const id = url ? url.searchParams.get('id') : t;
    if (!id || !/^\d{5,25}$/.test(id)) throw ProviderError.invalid('not a Facebook Ad Library ID or URL', { target: t });
    return id;
  }
  function channelQuery(t: string): Record<string, string> {
    const url = asUrl(t);
    if (url) {
      const [first, second] = url.pathname.split('/').filter(Boolean);
      if (first === 'channel' && second) return { channelId: second };
      if (first?.startsWith('@')) return { handle: first.slice(1) };
      throw ProviderError.invalid('URL does not name a YouTube channel by handle or ID', { target: t });
    }
    return /^UC[A-Za-z0-9_-]{22}$/.test(t) ? { channelId: t } : { handle: t.replace(/^@/, '') };
  }

  // ---- mapping ------------------------------------------------------------------------------------

  function igMedia(m: Json): Item {
    const owner = obj(m.owner);
    const caption = str(obj(obj(arr(obj(m.edge_media_to_caption).edges)[0]).node).text);
    const code = str(m.shortcode);
    const video = m.is_video === true;
    return postItem('instagram', 'post', {
      id: String(m.id),
      username: str(owner.username),
      caption,
      url: code ? `https://www.instagram.com/p/${code}/` : null,
      published_at: isoTime(m.taken_at_timestamp),
      media_type: str(m.product_type) === 'clips' ? 'reel' : video ? 'video' : 'image',
      duration_seconds: num(m.video_duration),
      hashtags: hashtagsOf(caption),
      metrics: metrics({
        views: num(m.video_view_count),
        likes: num(obj(m.edge_media_preview_like).count),
        comments: num(obj(m.edge_media_to_parent_comment).count),
      }),
    });
  }

  function transcript(
    platform: 'instagram' | 'youtube' | 'twitter' | 'facebook',
    id: string,
    url: string,
    text: string | null,
    extra: Partial<Parameters<typeof transcriptItem>[1]> = {},
  ): Item {
    if (!text) throw ProviderError.notFound('the vendor has no transcript for this content', { upstream: 'scrapecreators' });
    return transcriptItem(platform, { id, url, caption: text, text, ...extra });
  }

  return upstreamProvider(
    'scrapecreators',
    'vendor',
    rows(VENDOR_ERRORS),
    {
      instagram: {
        post: (request) =>
          single(async () => {
            const body = await get('/v1/instagram/post', { url: igPostUrl(request.target) }, request.signal);
            const media = obj(obj(body.data).xdt_shortcode_media);
            if (media.id === undefined) throw ProviderError.notFound('Instagram post not found', { upstream: 'scrapecreators' });
            return igMedia(media);
          }),
        comments: (request) =>
          paginate({
            limit: request.limit,
            pageMax: 50,
            start: decodeCursor(request.resumeCursor),
            signal: request.signal,
            fetch: async (cursor) => {
              // The reply names no post: the parent is the post of the target, by its media ID
              // (the `id` of the post item), else as the target names it.
              const parent = instagramMediaId(request.target) ?? request.target;
              const body = await get(
                '/v2/instagram/post/comments',
                { url: igPostUrl(request.target), cursor: cursor ?? undefined },
                request.signal,
              );
              const items = arr(body.comments).map((raw) => {
                const c = obj(raw);
                return commentItem('instagram', {
                  id: String(c.id),
                  username: str(obj(c.user).username),
                  caption: str(c.text),
                  published_at: isoTime(c.created_at),
                  parent_id: parent,
                  likes: num(c.comment_like_count),
                  reply_count: num(c.child_comment_count),
                });
              });
              return { items, next: items.length > 0 ? str(body.cursor) : null };
            },
          }),
        highlights: (request) =>
          paginateOnce(async () => {
            const body = await get('/v1/instagram/user/highlights', { handle: handle(request.target) }, request.signal);
            return arr(body.highlights).map((raw) => {
              const h = obj(raw);
              const id = String(h.id);
              return highlightItem('instagram', {
                id,
                username: str(obj(h.owner).username),
                url: `https://www.instagram.com/stories/highlights/${id}/`,
                title: str(h.title),
                cover_url: str(obj(h.cover_media_cropped_thumbnail).url) ?? str(obj(h.cover_media).thumbnail_src),
              });
            });
          }, request.limit),
        highlight_items: (request) =>
          paginateOnce(async () => {
            const url = asUrl(request.target);
            const id = (url ? /highlights\/(\d+)/.exec(url.pathname)?.[1] : request.target)?.replace(/^highlight:/, '');
            if (!id) throw ProviderError.invalid('not an Instagram highlight ID or URL', { target: request.target });
            const body = await get('/v1/instagram/user/highlight/detail', { id }, request.signal);
            const owner = str(obj(body.user).username);
            return arr(body.items).map((raw) => {
              const s = obj(raw);
              const video = num(s.media_type) === 2;
              return storyItem('instagram', {
                id: String(s.pk ?? s.id),
                username: owner,
                url: str(s.code) ? `https://www.instagram.com/stories/highlights/${id}/` : null,
                published_at: isoTime(s.taken_at),
                media_type: video ? 'video' : 'image',
                media_url: str(obj(arr(s.video_versions)[0]).url) ?? str(obj(arr(obj(s.image_versions2).candidates)[0]).url),
              });
            });
          }, request.limit),
        tagged: (request) =>
          (async function* () {
            const start = decodeCursor(request.resumeCursor);
            let userId = start?.x?.id;
            if (!userId) {
              const profile = await get('/v1/instagram/profile', { handle: handle(request.target) }, request.signal);
              userId = str(obj(obj(profile.data).user).id) ?? undefined;
              if (!userId) throw ProviderError.notFound('Instagram account not found', { upstream: 'scrapecreators' });
            }
            const id = userId;
            yield* paginate({
              limit: request.limit,
              pageMax: 50,
              start,
              state: { id },
              signal: request.signal,
              fetch: async (cursor) => {
                const body = await get('/v1/instagram/user/tagged-posts', { user_id: id, cursor: cursor ?? undefined }, request.signal);
                const items = arr(body.posts).map((raw) => {
                  const p = obj(raw);
                  const text = str(obj(p.caption).text);
                  return postItem('instagram', 'post', {
                    id: String(p.pk ?? p.code),
                    username: str(obj(p.user).username),
                    caption: text,
                    url: str(p.url),
                    media_type: num(p.media_type) === 2 ? 'video' : num(p.media_type) === 8 ? 'carousel' : 'image',
                    hashtags: hashtagsOf(text),
                    metrics: metrics({ views: num(p.view_count), likes: num(p.like_count), comments: num(p.comment_count) }),
                  });
                });
                return { items, next: flag(body.has_more) ? str(body.cursor) : null };
              },
            });
          })(),
        search_users: (request) =>
          paginate({
            limit: request.limit,
            pageMax: 50,
            start: decodeCursor(request.resumeCursor),
            signal: request.signal,
            fetch: async (cursor) => {
              const body = await get(
                '/v1/instagram/search/profiles',
                { query: request.target, cursor: cursor ?? undefined },
                request.signal,
              );
              const items = arr(body.profiles).map((raw) => {
                const u = obj(raw);
                return profileItem('instagram', {
                  id: String(u.id),
                  username: str(u.username),
                  url: str(u.url),
                  display_name: str(u.full_name),
                  bio: str(u.biography),
                  avatar_url: str(u.profile_pic_url),
                  verified: u.is_verified === true,
                  private: u.is_private === true,
                  followers_count: num(u.follower_count),
                  following_count: num(u.following_count),
                  posts_count: num(u.media_count),
                });
              });
              return { items, next: items.length > 0 ? str(body.cursor) : null };
            },
          }),
        transcript: (request) =>
          single(async () => {
            const url = igPostUrl(request.target);
            const body = await get('/v2/instagram/media/transcript', { url }, request.signal);
            const t = obj(arr(body.transcripts)[0]);
            return transcript('instagram', str(t.id) ?? request.target, url, str(t.text));
          }),
      },
      tiktok: {
        search_users: (request) =>
          paginate({
            limit: request.limit,
            pageMax: 30,
            start: decodeCursor(request.resumeCursor),
            signal: request.signal,
            fetch: async (cursor) => {
              const body = await get('/v1/tiktok/search/users', { query: request.target, cursor: cursor ?? undefined }, request.signal);
              const items = arr(body.users).map((raw) => {
                const u = obj(obj(raw).user_info);
                const name = str(u.unique_id);
                return profileItem('tiktok', {
                  id: String(u.uid),
                  username: name,
                  url: name ? `https://www.tiktok.com/@${name}` : null,
                  display_name: str(u.nickname),
                  verified: (num(u.verification_type) ?? 0) > 0 || Boolean(str(u.custom_verify)),
                  private: num(u.is_private_account) === 1,
                  followers_count: num(u.follower_count),
                  following_count: num(u.following_count),
                  posts_count: num(u.aweme_count),
                });
              });
              // The reply has no has_more: an empty page ends the listing.
              return { items, next: items.length > 0 ? str(body.cursor) : null };
            },
          }),
        trending: (request) =>
          paginateOnce(async () => {
            const body = await get('/v1/tiktok/get-trending-feed', { region: request.target.toUpperCase() }, request.signal);
            return arr(body.aweme_list).map((raw) => {
              const v = obj(raw);
              const s = obj(v.statistics);
              const caption = str(v.desc);
              return postItem('tiktok', 'video', {
                id: String(v.aweme_id),
                // The author carries no handle; the post URL does (https://www.tiktok.com/@<handle>/video|photo/<id>).
                username: /tiktok\.com\/@([^/]+)/.exec(str(v.url) ?? '')?.[1] ?? null,
                caption,
                url: str(v.url),
                published_at: isoTime(v.create_time),
                media_type: /\/photo\//.test(str(v.url) ?? '') ? 'photo' : 'video',
                hashtags: hashtagsOf(caption),
                metrics: metrics({
                  views: num(s.play_count),
                  likes: num(s.digg_count),
                  comments: num(s.comment_count),
                  shares: num(s.share_count),
                }),
              });
            });
          }, request.limit),
      },
      youtube: {
        shorts: (request) =>
          paginate({
            limit: request.limit,
            pageMax: 50,
            start: decodeCursor(request.resumeCursor),
            signal: request.signal,
            fetch: async (token) => {
              const body = await get(
                '/v1/youtube/channel/shorts',
                { ...channelQuery(request.target), continuationToken: token ?? undefined },
                request.signal,
              );
              const items = arr(body.shorts).map((raw) => {
                const v = obj(raw);
                const title = str(v.title);
                const description = str(v.description);
                const ms = num(v.durationMs);
                return postItem('youtube', 'video', {
                  id: String(v.id),
                  caption: description,
                  url: str(v.url),
                  published_at: isoTime(v.publishDate),
                  title,
                  media_type: 'short',
                  duration_seconds: ms === null ? null : Math.round(ms / 1000),
                  hashtags: hashtagsOf([title, description].filter(Boolean).join(' ')),
                  metrics: metrics({ views: num(v.viewCountInt), likes: num(v.likeCountInt), comments: num(v.commentCountInt) }),
                });
              });
              return { items, next: items.length > 0 ? str(body.continuationToken) : null };
            },
          }),
        transcript: (request) =>
          single(async () => {
            const url = ytVideoUrl(request.target);
            const body = await get('/v1/youtube/video/transcript', { url }, request.signal);
            const segments = arr(body.transcript).map((raw) => {
              const s = obj(raw);
              return { start: (num(s.startMs) ?? 0) / 1000, end: (num(s.endMs) ?? 0) / 1000, text: str(s.text) ?? '' };
            });
            return transcript('youtube', str(body.videoId) ?? request.target, url, str(body.transcript_only_text), {
              language: str(body.language),
              segments,
            });
          }),
      },
      twitter: {
        transcript: (request) =>
          single(async () => {
            const url = xPostUrl(request.target);
            const body = await get('/v1/twitter/tweet/transcript', { url }, request.signal);
            return transcript('twitter', /status\/(\d+)/.exec(url)?.[1] ?? request.target, url, str(body.transcript));
          }),
      },
      facebook: {
        reels: (request) =>
          paginate({
            limit: request.limit,
            pageMax: 50,
            start: decodeCursor(request.resumeCursor),
            signal: request.signal,
            fetch: async (token) => {
              // The reference lists next_page_id and cursor: page 2 on needs both (token: JSON [next_page_id, cursor]).
              const [nextPageId, cursor] = reelsToken(token);
              const body = await get(
                '/v1/facebook/profile/reels',
                { url: fbUrl(request.target), next_page_id: nextPageId ?? undefined, cursor: cursor ?? undefined },
                request.signal,
              );
              const items = arr(body.reels).map((raw) => {
                const r = obj(raw);
                const caption = str(r.description);
                const ms = num(r.play_time_in_ms);
                return postItem('facebook', 'video', {
                  id: String(r.video_id ?? r.id),
                  username: str(obj(r.author).name),
                  caption,
                  url: str(r.url),
                  published_at: isoTime(r.creation_time),
                  media_type: 'reel',
                  duration_seconds: ms === null ? null : Math.round(ms / 1000),
                  hashtags: hashtagsOf(caption),
                  metrics: metrics({ views: num(r.view_count) }),
                });
              });
              const next = str(body.cursor);
              return { items, next: items.length > 0 && next ? JSON.stringify([str(body.next_page_id), next]) : null };
            },
          }),
        transcript: (request) =>
          single(async () => {
            const url = fbUrl(request.target);
            const body = await get('/v1/facebook/post/transcript', { url }, request.signal);
            return transcript('facebook', /(\d{6,})\/?$/.exec(url)?.[1] ?? request.target, url, str(body.transcript));
          }),
        adlibrary_companies: (request) =>
          paginateOnce(async () => {
            const body = await get('/v1/facebook/adLibrary/search/companies', { query: request.target }, request.signal);
            return arr(body.searchResults).map((raw) => {
              const c = obj(raw);
              const id = String(c.page_id);
              return advertiserItem('facebook', {
                id,
                username: str(c.page_alias),
                url: `https://www.facebook.com/${id}`,
                name: str(c.name) ?? id,
                page_id: id,
                category: str(c.category),
              });
            });
          }, request.limit),
        adlibrary_ad: (request) =>
          single(async () => {
            const body = await get('/v1/facebook/adLibrary/ad', { id: adId(request.target) }, request.signal);
            const snap = obj(body.snapshot);
            const id = str(body.adArchiveID) ?? adId(request.target);
            // body is a string in the vendor's sample; older Ad Library snapshots nest it as {text}.
            const text = str(snap.body) ?? str(obj(snap.body).text) ?? str(snap.caption);
            const media = [
              ...arr(snap.videos).map((v) => str(obj(v).video_hd_url) ?? str(obj(v).video_sd_url)),
              ...arr(snap.images).map((i) => str(obj(i).original_image_url)),
            ].filter((u): u is string => Boolean(u));
            return adItem('facebook', {
              id,
              username: str(body.pageName),
              caption: text,
              url: `https://www.facebook.com/ads/library/?id=${id}`,
              advertiser_id: str(body.pageID),
              advertiser_name: str(body.pageName),
              first_shown_at: isoTime(body.startDate),
              last_shown_at: isoTime(body.endDate),
              status: body.isActive === true ? 'active' : 'inactive',
              body: text,
              media_urls: media,
              platforms: arr(body.publisherPlatform).map((p) => String(p).toLowerCase()),
              // targetedOrReachedCountries (codes) and the EU reach breakdown of aaa_info, as in the vendor's sample.
              countries: countryCodes([
                ...arr(body.targetedOrReachedCountries),
                ...arr(obj(body.aaa_info).age_country_gender_reach_breakdown).map((b) => obj(b).country),
              ]),
              // The Ad Library's own figures as the vendor passes them on: spend (null in the
              // sample), impressionsWithIndex.impressionsText, and the EU reach of aaa_info
              // (eu_total_reach, 1657 in the sample); reachEstimate where there is no EU reach.
              spend: str(body.spend),
              impressions: str(obj(body.impressionsWithIndex).impressionsText),
              reach: str(obj(body.aaa_info).eu_total_reach) ?? str(body.reachEstimate),
            });
          }),
        adlibrary_ad_transcript: (request) =>
          single(async () => {
            const id = adId(request.target);
            const body = await get('/v1/facebook/adLibrary/ad/transcript', { id }, request.signal);
            const data = obj(body.data);
            return transcript(
              'facebook',
              id,
              `https://www.facebook.com/ads/library/?id=${id}`,
              data.transcript_available === false ? null : str(data.transcript),
            );
          }),
      },
    },
    (signal) => http.quota(signal),
  );
}

/** [next_page_id, cursor] of a reels page token; a bare cursor (saved before both were kept) has no next_page_id. */
const SHORTCODE_ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';

/**
 * The media ID of an Instagram post URL or shortcode: the shortcode is the media ID written in
 * base 64 (A-Z a-z 0-9 - _), as the vendor's post sample shows (shortcode DF5s0duxDts, id
 * 3565077699422862188). Null for what is not a post's shortcode (longer private-post codes).
 */
export function instagramMediaId(target: string): string | null {
  const url = asUrl(target);
  const code = url ? /\/(?:p|reel|reels|tv)\/([A-Za-z0-9_-]+)/.exec(url.pathname)?.[1] : target;
  if (!code || code.length > 11 || !/^[A-Za-z0-9_-]+$/.test(code)) return null;
  let id = 0n;
  for (const ch of code) id = id * 64n + BigInt(SHORTCODE_ALPHABET.indexOf(ch));
  return id.toString();
}

function reelsToken(token: string | null): [string | null, string | null] {
  if (!token) return [null, null];
  try {
    const v: unknown = JSON.parse(token);
    if (Array.isArray(v) && v.length === 2) return [typeof v[0] === 'string' ? v[0] : null, typeof v[1] === 'string' ? v[1] : null];
  } catch {
    // not ours: a bare cursor
  }
  return [null, token];
}

/** One upstream call whose whole answer is one page (the vendor does not page it), cut to the limit. */
async function* paginateOnce(fetch: () => Promise<Item[]>, limit: number): AsyncGenerator<{ items: Item[]; cursor: null; total: number }> {
  const items = (await fetch()).slice(0, limit);
  yield { items, cursor: null, total: items.length };
}
