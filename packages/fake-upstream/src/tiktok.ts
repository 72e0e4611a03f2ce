/**
 * Fake TikTok Research API and Commercial Content API under /v2.
 * Shapes follow https://developers.tiktok.com/doc/client-access-token-management
 * (POST /v2/oauth/token/, form client_key, client_secret, grant_type=client_credentials →
 * access_token, expires_in, token_type), /doc/research-api-specs-query-user-info,
 * /doc/research-api-specs-query-videos (data{videos, cursor, has_more, search_id}),
 * /doc/research-api-specs-query-video-comments (data{comments, cursor, has_more}),
 * /doc/commercial-content-api-query-ads (data{ads[{ad, advertiser}], has_more, search_id}) and
 * /doc/commercial-content-api-get-ad-details. Every reply carries error{code, message, log_id}.
 * IDs are bare 64-bit JSON integers, as the documentation's examples show.
 * Requested fields and body keys follow the documented lists (references/tiktok-research.json);
 * anything else answers invalid_params. Where the pages show a value in more than one form the
 * fake serves each (ad dates as YYYYMMDD strings and numbers), so the adapter must accept both.
 * Not verified against the documentation: the exact messages for private and unknown users and
 * for an expired search_id.
 */
import { FIXTURES } from './fixtures';
import { tiktokProblems } from './reference';
import {
  BigId,
  bearer,
  hash,
  pick,
  sentence,
  type FakeApi,
  type Forms,
  type FakeRequest,
  type FakeResponse,
  type MisbehaveRule,
} from './util';

const F = FIXTURES.tiktok;
const T0s = Math.floor(Date.now() / 3_600_000) * 3600;

/** Forms of the fake handling the current request (set by its handle). */
let forms: Forms | null = null;
/** has_more: a JSON bool in the field tables, the string "true" in the documented examples. */
const hasMore = (more: boolean): boolean | string => (forms?.example('tiktok.has_more') ? String(more) : more);

let logCounter = 0;
const logId = (): string => `20240101000000${String(++logCounter).padStart(8, '0')}FAKE`;

function reply(status: number, data: unknown, code = 'ok', message = ''): FakeResponse {
  return { status, body: { data, error: { code, message, log_id: logId() } } };
}

// ---- videos: 64-bit IDs whose upper 32 bits are the creation time (unix seconds) -------------

interface Stream {
  code: number;
  total: number;
  spacing: number;
  username: (i: number) => string;
  hashtags: (i: number) => string[];
}

const STREAMS: Record<string, Stream> = {
  user: {
    code: 1,
    total: F.user.videos,
    spacing: F.user.hoursBetweenVideos * 3600,
    username: () => F.user.username,
    hashtags: (i) => ['fyp', ...(i % 3 === 0 ? [F.hashtag.name] : [])],
  },
  hashtag: {
    code: 2,
    total: F.hashtag.videos,
    spacing: F.hashtag.hoursBetweenVideos * 3600,
    username: (i) => `tagger${i % 40}`,
    hashtags: () => [F.hashtag.name, 'fyp'],
  },
  keyword: { code: 3, total: F.keywordVideos, spacing: 4 * 3600, username: (i) => `searcher${i % 50}`, hashtags: () => ['search'] },
};
const BY_CODE = new Map(Object.values(STREAMS).map((s) => [s.code, s]));

function createTime(stream: Stream, index: number): number {
  return T0s - 3600 - index * stream.spacing;
}

function videoId(stream: Stream, index: number): bigint {
  return (BigInt(createTime(stream, index)) << 32n) | (BigInt(stream.code) << 24n) | BigInt(index);
}

function lookupVideo(id: string): { stream: Stream; index: number } | null {
  if (!/^\d{10,20}$/.test(id)) return null;
  const big = BigInt(id);
  const stream = BY_CODE.get(Number((big >> 24n) & 0xffn));
  const index = Number(big & 0xffffffn);
  if (!stream || index >= stream.total || videoId(stream, index) !== big) return null;
  return { stream, index };
}

function video(stream: Stream, index: number, keyword = '') {
  const id = videoId(stream, index).toString();
  const tags = stream.hashtags(index);
  return {
    id: new BigId(id),
    username: stream.username(index),
    video_description: `${keyword ? `${keyword} ` : ''}${sentence(`${id}:d`, 7)} ${tags.map((t) => `#${t}`).join(' ')}`,
    create_time: createTime(stream, index),
    region_code: 'US',
    view_count: pick(`${id}:v`, 100, 9_000_000),
    like_count: pick(`${id}:l`, 0, 500_000),
    comment_count: pick(`${id}:c`, 0, 20_000),
    share_count: pick(`${id}:s`, 0, 9000),
    music_id: new BigId((7000000000000000000n + BigInt(hash(id))).toString()),
    hashtag_names: tags,
    video_duration: pick(`${id}:t`, 5, 180),
    voice_to_text: `${sentence(`${id}:vt`, 12)}.`,
  };
}

const ymdToSeconds = (s: string): number => Date.UTC(Number(s.slice(0, 4)), Number(s.slice(4, 6)) - 1, Number(s.slice(6, 8))) / 1000;

function fieldsOf(req: FakeRequest): string[] {
  return (req.query.fields ?? '').split(',').filter(Boolean);
}

function only<T extends Record<string, unknown>>(o: T, fields: string[]): Partial<T> {
  if (fields.length === 0) return o;
  return Object.fromEntries(Object.entries(o).filter(([k]) => fields.includes(k))) as Partial<T>;
}

type Json = Record<string, unknown>;

/** A value of a request's body as text: a string, number or boolean as sent, none as '', anything else as its JSON. */
function text(value: unknown): string {
  if (value === null || value === undefined) return '';
  if (typeof value === 'string' || typeof value === 'number' || typeof value === 'bigint' || typeof value === 'boolean')
    return String(value);
  return JSON.stringify(value);
}

function videoQuery(req: FakeRequest): FakeResponse {
  const body = (req.body ?? {}) as Json;
  const start = text(body.start_date);
  const end = text(body.end_date);
  if (!/^\d{8}$/.test(start) || !/^\d{8}$/.test(end))
    return reply(400, {}, 'invalid_params', 'start_date and end_date are required in YYYYMMDD format');
  const from = ymdToSeconds(start);
  const to = ymdToSeconds(end) + 86_400;
  if (to - from > 30 * 86_400 || to <= from)
    return reply(400, {}, 'invalid_params', 'end_date must be no more than 30 days after start_date');
  const maxCount = Number(body.max_count ?? 20);
  if (!Number.isInteger(maxCount) || maxCount < 1 || maxCount > 100)
    return reply(400, {}, 'invalid_params', 'max_count must be between 1 and 100');
  const conditions = ((body.query as Json | undefined)?.and ?? []) as Json[];
  const cond = (name: string): string | undefined => {
    const c = conditions.find((x) => x.field_name === name && (x.operation === 'EQ' || x.operation === 'IN'));
    return c ? String((c.field_values as unknown[])[0]).toLowerCase() : undefined;
  };
  let candidates: Array<ReturnType<typeof video>> = [];
  const username = cond('username');
  const hashtag = cond('hashtag_name');
  const keyword = cond('keyword');
  const id = cond('video_id');
  const all = (stream: Stream, kw = ''): Array<ReturnType<typeof video>> =>
    Array.from({ length: stream.total }, (_, i) => video(stream, i, kw));
  if (id !== undefined) {
    const hit = lookupVideo(id);
    candidates = hit ? [video(hit.stream, hit.index)] : [];
  } else if (username !== undefined) {
    if (username === F.privateUser) return reply(400, {}, 'invalid_params', `The user ${username} is private`);
    candidates = username === F.user.username ? all(STREAMS.user) : [];
  } else if (hashtag !== undefined) {
    candidates = hashtag === F.hashtag.name ? all(STREAMS.hashtag) : [];
  } else if (keyword !== undefined) {
    candidates = keyword.includes(FIXTURES.emptyQueryWord) ? [] : all(STREAMS.keyword, keyword);
  } else return reply(400, {}, 'invalid_params', 'query must have at least one condition');
  const inWindow = candidates.filter((v) => v.create_time >= from && v.create_time < to);
  const cursor = Number(body.cursor ?? 0);
  const page = inWindow.slice(cursor, cursor + maxCount).map((v) => only(v, fieldsOf(req)));
  const searchId =
    typeof body.search_id === 'string' && body.search_id
      ? body.search_id
      : `7${String(hash(JSON.stringify(conditions) + start)).padStart(18, '0')}`;
  return reply(200, {
    videos: page,
    cursor: cursor + page.length,
    has_more: hasMore(cursor + page.length < inWindow.length),
    search_id: searchId,
  });
}

function userInfo(req: FakeRequest): FakeResponse {
  const username = text(((req.body ?? {}) as Json).username).toLowerCase();
  if (username === F.privateUser) return reply(400, {}, 'invalid_params', `The user ${username} is private`);
  if (username !== F.user.username) return reply(400, {}, 'invalid_params', `The user ${username} does not exist`);
  return reply(
    200,
    only(
      {
        display_name: 'Fake Creator',
        bio_description: 'Fixtures all day',
        avatar_url: 'https://p16-sign.tiktokcdn-us.com/fake/avatar.jpeg',
        is_verified: true,
        follower_count: 1_250_000,
        following_count: 321,
        likes_count: 98_765_432,
        video_count: F.user.videos,
      },
      fieldsOf(req),
    ),
  );
}

function comments(req: FakeRequest): FakeResponse {
  const body = (req.body ?? {}) as Json;
  const id = text(body.video_id);
  if (!lookupVideo(id)) return reply(400, {}, 'invalid_params', `The video ${id} does not exist`);
  const maxCount = Number(body.max_count ?? 10);
  if (!Number.isInteger(maxCount) || maxCount < 1 || maxCount > 100)
    return reply(400, {}, 'invalid_params', 'max_count must be between 1 and 100');
  const cursor = Number(body.cursor ?? 0);
  const list = [];
  for (let i = cursor; i < Math.min(F.commentsPerVideo, cursor + maxCount); i++) {
    const cid = (BigInt(id) + 1000n + BigInt(i)).toString();
    list.push(
      only(
        {
          id: new BigId(cid),
          video_id: new BigId(id),
          text: sentence(`${cid}:c`, 6),
          like_count: pick(`${cid}:l`, 0, 900),
          reply_count: pick(`${cid}:r`, 0, 20),
          parent_comment_id: new BigId(id),
          create_time: T0s - i * 60,
        },
        fieldsOf(req),
      ),
    );
  }
  return reply(200, { comments: list, cursor: cursor + list.length, has_more: hasMore(cursor + list.length < F.commentsPerVideo) });
}

// ---- ads -------------------------------------------------------------------------------------

const AD_BASE = 1_800_000_000_000_000_000n;
const adIdOf = (index: number): bigint => AD_BASE + BigInt(index) * 7919n;

const AD_COUNTRIES = ['DE', 'FR', 'IT', 'GB', 'ES', 'NL'];
const adCountries = (index: number): string[] => [AD_COUNTRIES[index % 6], AD_COUNTRIES[(index + 2) % 6]];

function ad(index: number) {
  const id = adIdOf(index);
  return {
    ad: {
      id: new BigId(id.toString()),
      first_shown_date: index % 2 === 0 ? 20230105 : '20230105',
      last_shown_date: index % 2 === 0 ? 20240220 : '20240301',
      status: index % 4 === 0 ? 'active' : 'inactive',
      status_statement: '',
      videos: [
        {
          url: `https://library.tiktok.com/api/v1/cdn/${id}/video.mp4`,
          cover_image_url: `https://library.tiktok.com/api/v1/cdn/${id}/cover.jpeg`,
        },
      ],
      image_urls: [],
      reach: {
        unique_users_seen: `${pick(`${id}:r`, 1, 900)}K`,
        unique_users_seen_by_country: adCountries(index).reduce<Record<string, string>>(
          (o, c) => ({ ...o, [c]: `${pick(`${id}:${c}`, 1, 400)}K` }),
          {},
        ),
      },
    },
    // The Get Ad Details example: ad_group.targeting_info{number_of_users_targeted, country[], age{}, gender{}}.
    ad_group: {
      targeting_info: {
        number_of_users_targeted: `${pick(`${id}:t`, 10, 900)}K`,
        country: adCountries(index),
        age: { '13-17': false, '18-24': true, '25-34': true, '35-44': true, '45-54': false, '55+': false },
        gender: { female: true, male: true, unknown: true },
      },
    },
    advertiser: {
      business_id: new BigId((7_100_000_000_000_000_000n + BigInt(index % 7)).toString()),
      business_name: `Advertiser ${index % 7}`,
      paid_for_by: `Sponsor ${index % 7}`,
    },
  };
}

function adFields(entry: ReturnType<typeof ad>, fields: string[]) {
  if (fields.length === 0) return entry;
  const pickGroup = (group: 'ad' | 'advertiser' | 'ad_group') =>
    Object.fromEntries(Object.entries(entry[group]).filter(([k]) => fields.includes(`${group}.${k}`)));
  // The field list names the targeting ad_group.targeting_info; the Get Ad Details example ad_group.target.
  const group = fields.includes('ad_group.targeting_info')
    ? { ad_group: forms?.example('tiktok.targeting') ? { target: entry.ad_group.targeting_info } : pickGroup('ad_group') }
    : {};
  return { ad: pickGroup('ad'), advertiser: pickGroup('advertiser'), ...group };
}

/**
 * The Query Ads page's example reply spells three keys otherwise than its field tables:
 * ad.reach.unique_user_seen (table: unique_users_seen), advertiser.buisness_id (table:
 * business_id) and advertiser.paid_by (the fields list: paid_for_by). In its example form the
 * fake sends those spellings (developers.tiktok.com/doc/commercial-content-api-query-ads).
 */
function queryExampleSpelling(entry: Json): Json {
  if (!forms?.example('tiktok.ad_query_spelling')) return entry;
  const rename = (o: unknown, from: string, to: string): Json => {
    const src = (o ?? {}) as Json;
    return Object.fromEntries(Object.entries(src).map(([k, v]) => [k === from ? to : k, v]));
  };
  const ad = entry.ad as Json;
  return {
    ...entry,
    ad: ad.reach ? { ...ad, reach: rename(ad.reach, 'unique_users_seen', 'unique_user_seen') } : ad,
    advertiser: rename(rename(entry.advertiser, 'business_id', 'buisness_id'), 'paid_for_by', 'paid_by'),
  };
}

/** The Query Ads page: ad_published_date_range.min "needs to be after October 1, 2022". */
export const TIKTOK_ADS_FIRST_DAY = 20221002;

function adQuery(req: FakeRequest): FakeResponse {
  const body = (req.body ?? {}) as Json;
  const maxCount = Number(body.max_count ?? 10);
  if (!Number.isInteger(maxCount) || maxCount < 1 || maxCount > 50)
    return reply(400, {}, 'invalid_params', 'max_count must be between 1 and 50');
  const range = ((body.filters as Json | undefined)?.ad_published_date_range ?? null) as Json | null;
  if (!range?.min || !range.max) return reply(400, {}, 'invalid_params', 'filters.ad_published_date_range is required');
  if (!/^\d{8}$/.test(text(range.min)) || Number(range.min) < TIKTOK_ADS_FIRST_DAY) {
    return reply(400, {}, 'invalid_params', 'filters.ad_published_date_range.min must be a date after October 1, 2022');
  }
  const term = text(body.search_term);
  const total = term.includes(FIXTURES.emptyQueryWord) ? 0 : F.adResults;
  // The search_id of a previous page says where the next page starts.
  const prior = typeof body.search_id === 'string' ? /^s(\d+)-/.exec(body.search_id) : null;
  const offset = prior ? Number(prior[1]) : 0;
  const ads = [];
  for (let i = offset; i < Math.min(total, offset + maxCount); i++) ads.push(queryExampleSpelling(adFields(ad(i), fieldsOf(req))));
  const nextOffset = offset + ads.length;
  return reply(200, { ads, has_more: hasMore(nextOffset < total), search_id: `s${nextOffset}-${hash(term)}` });
}

function adDetail(req: FakeRequest): FakeResponse {
  const raw = text(((req.body ?? {}) as Json).ad_id);
  const id = /^\d{1,20}$/.test(raw) ? BigInt(raw) : -1n;
  const index = id >= AD_BASE && (id - AD_BASE) % 7919n === 0n ? Number((id - AD_BASE) / 7919n) : -1;
  if (index < 0 || index >= F.adResults) return reply(400, {}, 'invalid_params', `The ad ${raw} does not exist`);
  return reply(200, adFields(ad(index), fieldsOf(req)));
}

export function createTikTokApi(mode: Forms | null = null): FakeApi {
  const tokens = new Set<string>();
  let issued = 0;

  function handle(req: FakeRequest): FakeResponse {
    // The module's helpers read `forms`: the (synchronous) handling of a request uses this fake's.
    forms = mode;
    if (req.path === '/v2/oauth/token/') {
      const body = (req.body ?? {}) as Json;
      if (body.grant_type !== 'client_credentials' || !body.client_key || !body.client_secret || body.client_secret === F.badSecret) {
        return { status: 401, body: { error: 'invalid_client', error_description: 'Client key or secret is incorrect.', log_id: logId() } };
      }
      const token = `clt.fake${++issued}${hash(text(body.client_key) + issued)}`;
      tokens.add(token);
      return { status: 200, body: { access_token: token, expires_in: 7200, token_type: 'Bearer' } };
    }
    if (req.method !== 'POST') return reply(405, {}, 'invalid_params', 'method not allowed');
    const token = bearer(req);
    if (!token || !tokens.has(token))
      return reply(401, {}, 'access_token_invalid', 'The access token is invalid or not found in the request.');
    const problem = tiktokProblems(req.path, req.query.fields ?? '', req.body)[0];
    if (problem && !problem.startsWith('endpoint')) {
      const [kind, name] = problem.startsWith('field')
        ? ['Invalid field', problem.slice(6)]
        : ['Unknown body key', problem.replace(/^body key |^condition (field|operation) /, '')];
      return reply(400, {}, 'invalid_params', `${kind}: ${name}`);
    }
    switch (req.path) {
      case '/v2/research/user/info/':
        return userInfo(req);
      case '/v2/research/video/query/':
        return videoQuery(req);
      case '/v2/research/video/comment/list/':
        return comments(req);
      case '/v2/research/adlib/ad/query/':
        return adQuery(req);
      case '/v2/research/adlib/ad/detail/':
        return adDetail(req);
    }
    return reply(404, {}, 'invalid_params', 'unknown endpoint');
  }

  function misbehave(rule: MisbehaveRule, _req: FakeRequest): FakeResponse {
    const retry = rule.retryAfterSeconds !== undefined ? { 'retry-after': String(rule.retryAfterSeconds) } : undefined;
    switch (rule.kind) {
      case 'rate_limit':
        return { ...reply(429, {}, 'rate_limit_exceeded', 'API rate limit was exceeded, please try again later.'), headers: retry };
      case 'quota':
        return reply(429, {}, 'daily_quota_limit_exceeded', 'API daily quota limit was exceeded.');
      case 'search_expired':
        return reply(400, {}, 'invalid_params', `Search Id ${text(((_req.body ?? {}) as Json).search_id)} is invalid or expired`);
      case 'errors_200':
        return reply(200, {}, 'internal_error', 'Something went wrong. Please try again later.');
      case 'token_invalid':
        return reply(401, {}, 'access_token_invalid', 'The access token is invalid or not found in the request.');
      default:
        return { ...reply(rule.status ?? 500, {}, 'internal_error', 'Something went wrong. Please try again later.'), headers: retry };
    }
  }

  return {
    name: 'tiktok',
    matches: (p) => p.startsWith('/v2/'),
    handle,
    misbehave,
    reset() {
      tokens.clear();
    },
  };
}

/** IDs of fixture videos, for tests: the creator's video `index`. */
export function fakeTikTokVideoId(index: number): string {
  return videoId(STREAMS.user, index).toString();
}

/** ID of fixture ad `index`. */
export function fakeTikTokAdId(index: number): string {
  return adIdOf(index).toString();
}
