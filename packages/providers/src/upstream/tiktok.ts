/**
 * TikTok Research API and Commercial Content API adapter.
 * References: https://developers.tiktok.com/doc/client-access-token-management (client
 * credentials token, 2 hours), https://developers.tiktok.com/doc/research-api-specs-query-user-info,
 * /doc/research-api-specs-query-videos (query of EQ/IN conditions, start_date/end_date at most
 * 30 days apart, max_count up to 100, cursor + search_id + has_more),
 * /doc/research-api-specs-query-video-comments, /doc/commercial-content-api-query-ads
 * (search_term, filters, max_count up to 50, search_id) and
 * /doc/commercial-content-api-get-ad-details. Every reply carries error{code,message,log_id};
 * code "ok" is success. IDs are 64-bit integers in JSON and are parsed without losing digits.
 */
import { DateTime } from 'luxon';
import { ProviderError, type ExtractionRequest, type Item } from '../types';
import { classifyBy, rows, type ErrorRule } from './classify';
import { UpstreamHttp, arr, obj, retryAfterMs, type HttpResponse, type HttpSettings } from './http';
import { adItem, commentItem, countryCodes, flag, isoTime, metrics, num, postItem, profileItem, str, transcriptItem } from './items';
import { decodeCursor, paginate, profileBundle, single, type CursorState } from './paging';
import { asUrl, upstreamProvider, type UpstreamProvider } from './provider';

export const TIKTOK_DEFAULT_BASE_URL = 'https://open.tiktokapis.com';

export interface TikTokConfig extends Partial<HttpSettings> {
  clientKey: string;
  clientSecret: string;
  /** How far back video queries walk, in 30-day windows (default 365 days). */
  lookbackDays?: number;
  now?: () => number;
}

type Json = Record<string, unknown>;

const USER_FIELDS = 'display_name,bio_description,avatar_url,is_verified,follower_count,following_count,likes_count,video_count';
const VIDEO_FIELDS =
  'id,video_description,create_time,region_code,share_count,view_count,like_count,comment_count,music_id,hashtag_names,username,video_duration,voice_to_text';
const COMMENT_FIELDS = 'id,video_id,text,like_count,reply_count,parent_comment_id,create_time';
const AD_FIELDS =
  'ad.id,ad.first_shown_date,ad.last_shown_date,ad.status,ad.videos,ad.image_urls,ad.reach,advertiser.business_id,advertiser.business_name,advertiser.paid_for_by';
/** Get Ad Details also lists the ad group's targeting (countries, ages, genders, audience size). */
const AD_DETAIL_FIELDS = `${AD_FIELDS},ad_group.targeting_info`;
const WINDOW_DAYS = 30;
/**
 * The first day an ad search may start: the Query Ads page's DateRange says min "needs to be
 * after October 1, 2022" (RequestFilters: "a date after October 1, 2022"), so 2 October 2022.
 */
export const TIKTOK_ADS_EARLIEST = '20221002';
const ADS_EARLIEST = TIKTOK_ADS_EARLIEST;

const ymd = (d: DateTime): string => d.toFormat('yyyyLLdd');
const fromYmd = (s: string): DateTime => DateTime.fromFormat(s, 'yyyyLLdd', { zone: 'utc' });

export function createTikTokProvider(config: TikTokConfig): UpstreamProvider {
  const secrets = (): string[] => [config.clientSecret, config.clientKey, ...(token ? [token.value] : [])];
  const http = new UpstreamHttp('tiktok', { ...config, baseUrl: config.baseUrl ?? TIKTOK_DEFAULT_BASE_URL }, secrets);
  const now = config.now ?? Date.now;
  const lookbackDays = config.lookbackDays ?? 365;

  // ---- client access token: cached until it expires, refreshed once on access_token_invalid --
  let token: { value: string; expiresAt: number } | null = null;
  let pending: Promise<string> | null = null;

  async function fetchToken(signal: AbortSignal): Promise<string> {
    const res = await http.request({
      method: 'POST',
      path: '/v2/oauth/token/',
      form: { client_key: config.clientKey, client_secret: config.clientSecret, grant_type: 'client_credentials' },
      signal,
    });
    const body = obj(res.body);
    const value = str(body.access_token);
    if (res.status >= 500)
      throw ProviderError.unavailable('TikTok token endpoint unavailable', null, { upstream: 'tiktok', status: res.status });
    if (res.status === 429)
      throw ProviderError.rateLimited('TikTok token endpoint rate limit', retryAfterMs(res.headers, now()) ?? 60_000, {
        upstream: 'tiktok',
      });
    if (!value) {
      throw new ProviderError(
        'upstream_auth',
        `TikTok refused the client credentials: ${http.safe(body.error ?? res.status)}`,
        false,
        null,
        {
          upstream: 'tiktok',
          status: res.status,
          log_id: str(body.log_id),
        },
      );
    }
    const ttl = (num(body.expires_in) ?? 7200) * 1000;
    token = { value, expiresAt: now() + ttl - Math.min(60_000, ttl / 10) };
    return value;
  }

  async function accessToken(signal: AbortSignal): Promise<string> {
    if (token && token.expiresAt > now()) return token.value;
    pending ??= fetchToken(signal).finally(() => {
      pending = null;
    });
    return pending;
  }

  interface TikTokFacts {
    status: number;
    code: string;
    message: string;
    res: HttpResponse;
  }

  const invalidParams = (f: TikTokFacts, pattern: RegExp): boolean => f.code === 'invalid_params' && pattern.test(f.message);

  /**
   * TikTok Research / Commercial Content API errors (error.code of every reply; "ok" is success;
   * developers.tiktok.com/doc/research-api-error-codes). access_token_invalid is retried once with
   * a new token before this table is read; an expired search_id restarts the query without it
   * before this table is read (a video query's window from the same index; an ad query from its
   * first page, paging past the ads delivered), so the row is what is left when that fails too.
   */
  const TIKTOK_ERRORS: ErrorRule<TikTokFacts>[] = [
    {
      status: '429',
      upstream: 'rate_limit_exceeded',
      code: 'rate_limited',
      retryable: true,
      wait: 'Retry-After, else 60 s',
      when: (f) => f.code === 'rate_limit_exceeded' || (f.status === 429 && f.code !== 'daily_quota_limit_exceeded'),
      waitMs: (f) => retryAfterMs(f.res.headers, now()) ?? 60_000,
    },
    {
      status: '429',
      upstream: 'daily_quota_limit_exceeded',
      code: 'quota_exceeded',
      retryable: false,
      wait: 'until midnight UTC',
      when: (f) => f.code === 'daily_quota_limit_exceeded',
      waitMs: () => msUntilUtcMidnight(),
    },
    {
      status: 'any, 5xx',
      upstream: 'internal_error (even in a 200)',
      code: 'upstream_unavailable',
      retryable: true,
      wait: 'Retry-After if sent',
      when: (f) => f.code === 'internal_error' || f.status >= 500,
      waitMs: (f) => retryAfterMs(f.res.headers, now()),
    },
    {
      status: '401, 403',
      upstream: 'access_token_invalid (after one refresh), scope_not_authorized, scope_permission_missed',
      code: 'upstream_auth',
      retryable: false,
      wait: '',
      when: (f) =>
        ['access_token_invalid', 'scope_not_authorized', 'scope_permission_missed'].includes(f.code) ||
        f.status === 401 ||
        f.status === 403,
    },
    {
      status: '400',
      upstream: 'invalid_params: search_id expired (left after the query restarted without it)',
      code: 'upstream_unavailable',
      retryable: true,
      wait: '',
      when: (f) => invalidParams(f, /search[_ ]?id/i),
    },
    {
      status: '400',
      upstream: 'invalid_params naming a field or body key the API does not know',
      code: 'internal_error',
      retryable: false,
      wait: '',
      when: (f) => invalidParams(f, /invalid field|unknown (body )?(key|field)/i),
    },
    {
      status: '400',
      upstream: 'invalid_params naming a private account',
      code: 'target_private',
      retryable: false,
      wait: '',
      when: (f) => invalidParams(f, /private/i),
    },
    {
      status: '400',
      upstream: 'invalid_params naming a missing target',
      code: 'target_not_found',
      retryable: false,
      wait: '',
      when: (f) => invalidParams(f, /not (be )?found|not exist|doesn't exist|cannot be found|no such/i),
    },
    {
      status: '400',
      upstream: 'other invalid_params',
      code: 'invalid_target',
      retryable: false,
      wait: '',
      when: (f) => f.code === 'invalid_params',
    },
    { status: '404', upstream: 'any', code: 'target_not_found', retryable: false, wait: '', when: (f) => f.status === 404 },
    { status: 'any', upstream: 'anything else', code: 'internal_error', retryable: false, wait: '', when: () => true },
  ];

  function classify(res: HttpResponse): ProviderError {
    const error = obj(obj(res.body).error);
    const code = str(error.code) ?? '';
    const message = http.safe(error.message ?? `HTTP ${res.status}`);
    const facts: TikTokFacts = { status: res.status, code, message: str(error.message) ?? '', res };
    return classifyBy(TIKTOK_ERRORS, facts, `TikTok: ${message}`, {
      upstream: 'tiktok',
      status: res.status,
      error_code: code,
      log_id: str(error.log_id),
      ...(invalidParams(facts, /search[_ ]?id/i) ? { search_expired: true } : {}),
    });
  }

  function msUntilUtcMidnight(): number {
    const t = DateTime.fromMillis(now(), { zone: 'utc' });
    return t.plus({ days: 1 }).startOf('day').toMillis() - t.toMillis();
  }

  /** POST to a Research endpoint; the body's error.code decides, whatever the status. */
  async function post(path: string, fields: string, json: Json, signal: AbortSignal): Promise<Json> {
    for (let attempt = 0; ; attempt++) {
      const bearer = await accessToken(signal);
      const res = await http.request({
        method: 'POST',
        path,
        query: { fields },
        json,
        headers: { authorization: `Bearer ${bearer}` },
        signal,
      });
      const body = obj(res.body);
      const code = str(obj(body.error).code);
      if (code === 'ok' && res.status >= 200 && res.status < 300) return obj(body.data);
      if (code === 'access_token_invalid' && attempt === 0) {
        if (token?.value === bearer) token = null;
        continue;
      }
      throw classify(res);
    }
  }

  // ---- targets ---------------------------------------------------------------------------------

  function videoId(target: string): string {
    const url = asUrl(target);
    const id = url ? (/\/video\/(\d{8,20})/.exec(url.pathname)?.[1] ?? url.searchParams.get('id')) : target;
    if (!id || !/^\d{8,20}$/.test(id)) throw ProviderError.invalid('not a TikTok video ID or video URL', { target });
    return id;
  }

  function adId(target: string): string {
    const url = asUrl(target);
    const id = url ? (url.searchParams.get('ad_id') ?? /\/(\d{8,20})\/?$/.exec(url.pathname)?.[1]) : target;
    if (!id || !/^\d{1,20}$/.test(id)) throw ProviderError.invalid('not a TikTok ad ID or ad library URL', { target });
    return id;
  }

  // ---- mapping ---------------------------------------------------------------------------------

  function mapVideo(v: Json): Item {
    // The field table names the ID "id"; the Query Videos page's example reply "video_id".
    const id = String(v.id ?? v.video_id);
    const username = str(v.username);
    const tags = arr(v.hashtag_names).map((t) => String(t).toLowerCase());
    return postItem('tiktok', 'video', {
      id,
      username,
      caption: str(v.video_description),
      url: username ? `https://www.tiktok.com/@${username}/video/${id}` : `https://www.tiktok.com/video/${id}`,
      published_at: isoTime(v.create_time),
      media_type: 'video',
      duration_seconds: num(v.video_duration),
      ...(tags.length > 0 ? { hashtags: tags } : {}),
      metrics: metrics({ views: num(v.view_count), likes: num(v.like_count), comments: num(v.comment_count), shares: num(v.share_count) }),
    });
  }

  /**
   * An ad's countries: those of its reach (ad.reach.unique_users_seen_by_country, keyed by code)
   * and of its targeting (ad_group.targeting_info.country; the Get Ad Details example names the
   * object `target`, and shows country as a list; a comma-separated string is accepted too).
   */
  function adCountries(entry: Json): string[] {
    const group = obj(entry.ad_group);
    const targeting = obj(group.targeting_info ?? group.target);
    const targeted = Array.isArray(targeting.country) ? (targeting.country as unknown[]) : (str(targeting.country) ?? '').split(',');
    return countryCodes([...targeted, ...Object.keys(obj(obj(obj(entry.ad).reach).unique_users_seen_by_country))]);
  }

  /**
   * An ad of Query Ads or Get Ad Details. The pages' field tables and their published example
   * replies spell some keys differently, and both forms are read (docs/providers.md):
   * reach.unique_users_seen (tables, Get Ad Details example) or reach.unique_user_seen (Query Ads
   * example); advertiser.business_id (tables) or advertiser.buisness_id (Query Ads example).
   * unique_users_seen counts unique users, so it is the ad's reach; TikTok publishes no
   * impressions.
   */
  function mapAd(entry: Json): Item {
    const ad = obj(entry.ad);
    const advertiser = obj(entry.advertiser);
    const reach = obj(ad.reach);
    const id = String(ad.id);
    const media = [...arr(ad.videos).map((v) => str(obj(v).url)), ...arr(ad.image_urls).map(str)].filter((u): u is string => Boolean(u));
    return adItem('tiktok', {
      id,
      url: `https://library.tiktok.com/ads/detail/?ad_id=${id}`,
      advertiser_id: str(advertiser.business_id ?? advertiser.buisness_id),
      advertiser_name: str(advertiser.business_name),
      first_shown_at: isoTime(ad.first_shown_date),
      last_shown_at: isoTime(ad.last_shown_date),
      status: str(ad.status),
      media_urls: media,
      platforms: ['tiktok'],
      countries: adCountries(entry),
      impressions: null,
      reach: str(reach.unique_users_seen ?? reach.unique_user_seen),
    });
  }

  // ---- video queries over 30-day windows, newest window first ----------------------------------

  /** Token: "<window end YYYYMMDD>|<cursor>|<search_id>". */
  function videoQuery(conditions: Json[], limit: number, start: CursorState | null, signal: AbortSignal, stage?: string) {
    const today = DateTime.fromMillis(now(), { zone: 'utc' }).startOf('day');
    const oldest = today.minus({ days: lookbackDays });
    return paginate({
      limit,
      pageMax: 100,
      start: start ?? { n: 0, t: `${ymd(today)}|0|` },
      stage,
      signal,
      fetch: async (tok, size) => {
        const [endText, cursorText, searchId] = (tok ?? `${ymd(today)}|0|`).split('|');
        const end = fromYmd(endText ?? ymd(today));
        const begin = DateTime.max(end.minus({ days: WINDOW_DAYS - 1 }), oldest);
        const body = (search: string | undefined): Json => ({
          query: { and: conditions },
          start_date: ymd(begin),
          end_date: ymd(end),
          max_count: size,
          cursor: Number(cursorText ?? 0),
          ...(search ? { search_id: search } : {}),
          is_random: false,
        });
        let data: Json;
        try {
          data = await post('/v2/research/video/query/', VIDEO_FIELDS, body(searchId), signal);
        } catch (error) {
          // An expired search_id: query the same window again from the same index without it.
          if (!(searchId && error instanceof ProviderError && error.context.search_expired === true)) throw error;
          data = await post('/v2/research/video/query/', VIDEO_FIELDS, body(undefined), signal);
        }
        const items = arr(data.videos).map((v) => mapVideo(obj(v)));
        let next: string | null;
        if (flag(data.has_more)) next = `${ymd(end)}|${num(data.cursor) ?? 0}|${str(data.search_id) ?? ''}`;
        else {
          const previous = begin.minus({ days: 1 });
          next = previous < oldest ? null : `${ymd(previous)}|0|`;
        }
        return { items, next };
      },
    });
  }

  const eq = (field: string, value: string): Json => ({
    operation: 'EQ',
    field_name: field,
    field_values: [field === 'username' || field === 'hashtag_name' ? value.replace(/^[@#]/, '') : value],
  });

  /** The one video with this ID: its ID carries its creation time in the upper 32 bits. */
  async function video(target: string, signal: AbortSignal): Promise<Json> {
    const id = videoId(target);
    const created = DateTime.fromSeconds(Number(BigInt(id) >> 32n), { zone: 'utc' });
    const data = await post(
      '/v2/research/video/query/',
      VIDEO_FIELDS,
      {
        query: { and: [eq('video_id', id)] },
        start_date: ymd(created.minus({ days: 1 })),
        end_date: ymd(created.plus({ days: 1 })),
        max_count: 1,
        is_random: false,
      },
      signal,
    );
    const v = arr(data.videos)[0];
    if (!v) throw ProviderError.notFound('TikTok video not found', { upstream: 'tiktok', target });
    return obj(v);
  }

  async function user(target: string, signal: AbortSignal) {
    const username = target.replace(/^@/, '');
    const u = await post('/v2/research/user/info/', USER_FIELDS, { username }, signal);
    return profileItem('tiktok', {
      id: username,
      username,
      url: `https://www.tiktok.com/@${username}`,
      display_name: str(u.display_name),
      bio: str(u.bio_description),
      avatar_url: str(u.avatar_url),
      verified: u.is_verified === true,
      followers_count: num(u.follower_count),
      following_count: num(u.following_count),
      posts_count: num(u.video_count),
    });
  }

  const page = (request: ExtractionRequest) => decodeCursor(request.resumeCursor);

  return upstreamProvider('tiktok-research-api', 'official', rows(TIKTOK_ERRORS), {
    tiktok: {
      profile: (request) =>
        profileBundle(
          request,
          () => user(request.target, request.signal),
          (_p, limit, start) => videoQuery([eq('username', request.target)], limit, start, request.signal, 'posts'),
        ),
      posts: (request) => videoQuery([eq('username', request.target)], request.limit, page(request), request.signal),
      hashtag: (request) => videoQuery([eq('hashtag_name', request.target)], request.limit, page(request), request.signal),
      search: (request) => videoQuery([eq('keyword', request.target)], request.limit, page(request), request.signal),
      post: (request) => single(async () => mapVideo(await video(request.target, request.signal))),
      transcript: (request) =>
        single(async () => {
          const v = await video(request.target, request.signal);
          const text = str(v.voice_to_text);
          if (!text) throw ProviderError.notFound('TikTok video has no voice-to-text transcript', { upstream: 'tiktok' });
          const id = String(v.id);
          const duration = num(v.video_duration);
          return transcriptItem('tiktok', {
            id,
            username: str(v.username),
            caption: text,
            url: str(v.username) ? `https://www.tiktok.com/@${str(v.username)}/video/${id}` : null,
            published_at: isoTime(v.create_time),
            text,
            segments: [{ start: 0, end: duration ?? 0, text }],
          });
        }),
      comments: (request) => {
        const id = videoId(request.target);
        return paginate({
          limit: request.limit,
          pageMax: 100,
          start: page(request),
          signal: request.signal,
          fetch: async (tok, size) => {
            const data = await post(
              '/v2/research/video/comment/list/',
              COMMENT_FIELDS,
              { video_id: id, max_count: size, cursor: Number(tok ?? 0) },
              request.signal,
            );
            const items = arr(data.comments).map((raw) => {
              const c = obj(raw);
              const cid = String(c.id);
              return commentItem('tiktok', {
                id: cid,
                caption: str(c.text),
                published_at: isoTime(c.create_time),
                parent_id:
                  str(c.parent_comment_id) && str(c.parent_comment_id) !== str(c.video_id)
                    ? str(c.parent_comment_id)
                    : (str(c.video_id) ?? id),
                likes: num(c.like_count),
                reply_count: num(c.reply_count),
              });
            });
            return { items, next: flag(data.has_more) ? String(num(data.cursor) ?? 0) : null };
          },
        });
      },
      adlibrary_search: (request) => {
        const start = page(request);
        // Ads delivered so far in this stage: a restarted query skips them.
        let delivered = start?.n ?? 0;
        const today = ymd(DateTime.fromMillis(now(), { zone: 'utc' }));
        const query = (size: number, searchId: string | null) =>
          post(
            '/v2/research/adlib/ad/query/',
            AD_FIELDS,
            {
              filters: { ad_published_date_range: { min: ADS_EARLIEST, max: today }, country_code: 'ALL' },
              search_term: request.target,
              max_count: size,
              ...(searchId ? { search_id: searchId } : {}),
            },
            request.signal,
          );
        return paginate({
          limit: request.limit,
          pageMax: 50,
          start,
          signal: request.signal,
          fetch: async (tok, size) => {
            let data: Json;
            try {
              data = await query(size, tok);
            } catch (error) {
              // A search_id is the query's only paging state, and it expires: restart the query
              // and page past the ads already delivered (pages of at most 50), rather than re-send
              // the expired ID on every attempt.
              if (!(tok && error instanceof ProviderError && error.context.search_expired === true)) throw error;
              let searchId: string | null = null;
              for (let skip = delivered; skip > 0;) {
                const passed = await query(Math.min(50, skip), searchId);
                skip -= arr(passed.ads).length;
                searchId = str(passed.search_id);
                if (!flag(passed.has_more) || arr(passed.ads).length === 0) return { items: [], next: null };
              }
              data = await query(size, searchId);
            }
            const items = arr(data.ads).map((a) => mapAd(obj(a)));
            delivered += items.length;
            return { items, next: flag(data.has_more) ? str(data.search_id) : null };
          },
        });
      },
      adlibrary_ad: (request) =>
        single(async () => {
          const data = await post('/v2/research/adlib/ad/detail/', AD_DETAIL_FIELDS, { ad_id: adId(request.target) }, request.signal);
          if (!data.ad) throw ProviderError.notFound('TikTok ad not found', { upstream: 'tiktok' });
          return mapAd(data);
        }),
    },
  });
}
