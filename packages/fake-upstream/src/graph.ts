/**
 * Fake Meta Graph API under /v<major>.<minor> (Ad Library, Facebook Pages, Instagram Graph API).
 * Shapes follow https://developers.facebook.com/docs/graph-api/reference/ads_archive and
 * https://developers.facebook.com/docs/marketing-api/reference/archived-ad (ArchivedAd fields;
 * ad_reached_countries required), https://developers.facebook.com/docs/graph-api/results
 * (data + paging{cursors{before, after}, next}), https://developers.facebook.com/docs/graph-api/reference/page,
 * the Instagram business_discovery and ig_hashtag_search references, and
 * https://developers.facebook.com/docs/graph-api/guides/error-handling
 * (error{message, type, code, error_subcode, fbtrace_id, is_transient}) with the
 * X-Business-Use-Case-Usage header of https://developers.facebook.com/docs/graph-api/overview/rate-limiting.
 * ads_archive fields, parameters and value forms follow references/meta-graph.json (dates as
 * YYYY-MM-DD, as the Ad Library script repository parses them); a field a node does not have
 * answers (#100) "Tried accessing nonexisting field", as the Graph API does; an alias that names
 * nothing answers (#803), an ID the token cannot read (#100) subcode 33.
 */

/** Top-level names of a Graph `fields` list (a,b{c},d.limit(0) → a, b, d). */
export function graphFieldNames(fields: string): string[] {
  const out: string[] = [];
  let depth = 0;
  let current = '';
  for (const ch of fields) {
    if (ch === '{' || ch === '(') depth++;
    if (ch === '}' || ch === ')') depth--;
    if (ch === ',' && depth === 0) {
      out.push(current);
      current = '';
    } else current += ch;
  }
  if (current) out.push(current);
  return out.map((f) => /^[a-z_]+/.exec(f.trim())?.[0] ?? f.trim());
}

/** Fields of the nodes the fake serves (developers.facebook.com/docs/graph-api/reference/page, /post, /comment). */
const NODE_FIELDS: Record<string, string[]> = {
  Page: [
    'id',
    'name',
    'username',
    'about',
    'link',
    'fan_count',
    'followers_count',
    'verification_status',
    'picture',
    'category',
    'description',
    'website',
    'is_verified',
  ],
  Post: [
    'id',
    'message',
    'created_time',
    'permalink_url',
    'attachments',
    'shares',
    'reactions',
    'comments',
    'from',
    'full_picture',
    'status_type',
    'updated_time',
  ],
  Comment: ['id', 'message', 'created_time', 'from', 'like_count', 'comment_count', 'permalink_url', 'parent', 'attachment'],
};

function nonexistingField(req: FakeRequest, node: keyof typeof NODE_FIELDS): FakeResponse | null {
  const bad = graphFieldNames(req.query.fields ?? '').find((f) => !NODE_FIELDS[node]?.includes(f));
  return bad ? graphError(400, 100, `(#100) Tried accessing nonexisting field (${bad}) on node type (${node})`) : null;
}
import { FIXTURES } from './fixtures';
import { adsArchiveProblems } from './reference';
import {
  bearer,
  encodeToken,
  decodeToken,
  hash,
  iso,
  pick,
  sentence,
  type FakeApi,
  type FakeRequest,
  type FakeResponse,
  type MisbehaveRule,
} from './util';

const F = FIXTURES.graph;
const day = (ms: number): string => iso(ms).slice(0, 10);
const T0 = Math.floor(Date.now() / 3_600_000) * 3_600_000;

function graphError(status: number, code: number, message: string, extra: Record<string, unknown> = {}): FakeResponse {
  return { status, body: { error: { message, type: 'OAuthException', code, fbtrace_id: `Afake${hash(message + Date.now())}`, ...extra } } };
}

const missing = (id: string): FakeResponse =>
  graphError(
    400,
    100,
    `Unsupported get request. Object with ID '${id}' does not exist, cannot be loaded due to missing permissions, or does not support this operation.`,
    { error_subcode: 33 },
  );

/** A page of an edge: data plus paging (next only when there is more). */
function edge(base: string, req: FakeRequest, total: number, make: (i: number) => unknown, dflt = 25, max = 100): FakeResponse {
  const limit = req.query.limit === undefined ? dflt : Number(req.query.limit);
  if (!Number.isInteger(limit) || limit < 1 || limit > max)
    return graphError(400, 100, `(#100) The parameter limit must be between 1 and ${max}`);
  const offset = decodeToken('g', req.query.after);
  if (offset === null) return graphError(400, 100, '(#100) Invalid after cursor');
  return { status: 200, body: page(base, req, total, make, offset, limit) };
}

function page(base: string, req: FakeRequest, total: number, make: (i: number) => unknown, offset: number, limit: number) {
  const data = [];
  for (let i = offset; i < Math.min(total, offset + limit); i++) data.push(make(i));
  const more = offset + data.length < total;
  const after = encodeToken('g', offset + data.length);
  const next = new URLSearchParams({ ...req.query, limit: String(limit), after });
  return {
    data,
    ...(data.length > 0
      ? {
          paging: {
            cursors: { before: encodeToken('g', offset), after },
            ...(more ? { next: `https://graph.facebook.com${base}?${next.toString()}` } : {}),
          },
        }
      : {}),
  };
}

function archivedAd(source: string, i: number) {
  const id = `${source === 'page' ? 2 : 3}${String(i).padStart(14, '0')}`;
  const stopped = i % 3 !== 0;
  return {
    id,
    ad_creation_time: day(T0 - (i + 10) * 86_400_000),
    ad_creative_bodies: [sentence(`${id}:b`, 10)],
    ad_creative_link_titles: [sentence(`${id}:t`, 4)],
    ad_delivery_start_time: day(T0 - (i + 9) * 86_400_000),
    ...(stopped ? { ad_delivery_stop_time: day(T0 - i * 86_400_000) } : {}),
    // ad_snapshot_url carries the caller's token in the real API.
    ad_snapshot_url: `https://www.facebook.com/ads/archive/render_ad/?id=${id}&access_token=REDACTED`,
    bylines: 'Paid for by Fake Org',
    currency: 'USD',
    impressions: { lower_bound: '1000', upper_bound: '4999' },
    spend: { lower_bound: '100', upper_bound: '199' },
    languages: ['en'],
    page_id: source === 'page' ? F.adPageId : `1${String(hash(id) % 1000).padStart(14, '0')}`,
    page_name: source === 'page' ? F.page.name : `Advertiser ${hash(id) % 1000}`,
    publisher_platforms: ['FACEBOOK', 'INSTAGRAM'],
    // ArchivedAd reach and targeting (developers.facebook.com/docs/graph-api/reference/archived-ad):
    // country codes in the EU reach breakdown, names (a country, or "City, Country") in target_locations.
    // eu_total_reach: the EU reach of an ad delivered in the EU (those with the EU breakdown).
    ...(i % 2 === 0 ? { eu_total_reach: 1000 + (hash(id) % 9000) } : {}),
    ...(i % 2 === 0
      ? {
          age_country_gender_reach_breakdown: [
            { country: 'DE', age_gender_breakdowns: [{ age_range: '25-34', male: 120, female: 98, unknown: 3 }] },
            { country: 'FR', age_gender_breakdowns: [{ age_range: '18-24', male: 40, female: 61, unknown: 0 }] },
          ],
        }
      : {}),
    target_locations:
      i % 3 === 0
        ? [
            { name: 'Dubrovnik, Croatia', num_obfuscated: 0, type: 'cities', excluded: false },
            { name: 'Austria', num_obfuscated: 0, type: 'countries', excluded: true },
          ]
        : [{ name: 'Germany', num_obfuscated: 0, type: 'countries', excluded: false }],
  };
}

const pageObject = () => ({
  id: F.page.id,
  name: F.page.name,
  username: F.page.username,
  about: 'The page of fixtures.',
  link: `https://www.facebook.com/${F.page.username}`,
  fan_count: 45_000,
  followers_count: 47_000,
  verification_status: 'blue_verified',
  picture: { data: { url: `https://scontent.xx.fbcdn.net/${F.page.id}.jpg`, is_silhouette: false } },
});

const postIdOf = (i: number): string => `${F.page.id}_${String(900000000 + i)}`;
/** The opaque pfbid0… form of post i's ID, as Facebook's permalinks show it today. */
const pfbidOf = (i: number): string => `pfbid0${Buffer.from(`fakepost:${900000000 + i}`).toString('hex')}`;
/** Post index of a pfbid0… ID, or null. */
function pfbidIndex(pfbid: string): number | null {
  const m = /^pfbid0([0-9a-f]+)$/.exec(pfbid);
  const text = m ? Buffer.from(m[1], 'hex').toString('utf8') : '';
  const n = /^fakepost:(\d+)$/.exec(text);
  return n ? Number(n[1]) - 900000000 : null;
}

function post(i: number) {
  const id = postIdOf(i);
  return {
    id,
    message: `${sentence(`${id}:m`, 9)} #fakepage`,
    created_time: iso(T0 - i * 7_200_000).replace('Z', '+0000'),
    permalink_url: `https://www.facebook.com/${F.page.username}/posts/${pfbidOf(i)}`,
    attachments: { data: [{ media_type: i % 2 === 0 ? 'photo' : 'video' }] },
    shares: { count: pick(`${id}:s`, 0, 400) },
    reactions: { data: [], summary: { total_count: pick(`${id}:r`, 0, 9000) } },
    comments: { data: [], summary: { total_count: F.page.commentsPerPost, order: 'ranked' } },
    from: { id: F.page.id, name: F.page.name },
  };
}

function igMedia(i: number, owner: boolean) {
  const id = `${owner ? 178 : 179}${String(i).padStart(14, '0')}`;
  const reel = owner && i % 3 === 0;
  return {
    id,
    caption: `${sentence(`${id}:c`, 8)} #${owner ? 'fakebrand' : F.igHashtag.name}`,
    media_type: reel ? 'VIDEO' : i % 2 === 0 ? 'IMAGE' : 'CAROUSEL_ALBUM',
    ...(owner ? { media_product_type: reel ? 'REELS' : 'FEED' } : {}),
    permalink: `https://www.instagram.com/${reel ? 'reel' : 'p'}/C${id.slice(-8)}/`,
    timestamp: iso(T0 - i * 5_400_000).replace('Z', '+0000'),
    like_count: pick(`${id}:l`, 0, 20_000),
    comments_count: pick(`${id}:c`, 0, 900),
  };
}

/** business_discovery.username(u){fields,media.limit(n).after(c){fields}} */
function businessDiscovery(req: FakeRequest, fields: string): FakeResponse {
  const m = /^business_discovery\.username\(([^)]+)\)\{(.*)\}$/.exec(fields);
  if (!m) return graphError(400, 100, '(#100) Invalid fields parameter');
  const username = m[1].toLowerCase();
  if (username !== F.igBusiness.username) {
    return graphError(400, 110, 'Invalid user id', {
      error_subcode: 2207013,
      error_user_title: 'Cannot find User',
      error_user_msg: `The user with username: ${username} cannot be found.`,
    });
  }
  const b = F.igBusiness;
  const result: Record<string, unknown> = {
    id: b.id,
    username: b.username,
    name: 'Fake Brand',
    biography: 'We sell fixtures.',
    profile_picture_url: `https://scontent.cdninstagram.com/${b.id}.jpg`,
    followers_count: 120_000,
    follows_count: 80,
    media_count: b.media,
    website: 'https://example.com',
  };
  const media = /media(?:\.limit\((\d+)\))?(?:\.after\(([^)]+)\))?\{/.exec(m[2]);
  if (media) {
    const limit = Number(media[1] ?? 25);
    const offset = decodeToken('g', media[2]);
    if (offset === null || limit < 1 || limit > 100) return graphError(400, 100, '(#100) Invalid media edge parameters');
    result.media = page(`/${F.igUserId}`, req, b.media, (i) => igMedia(i, true), offset, limit);
  }
  return { status: 200, body: { business_discovery: result, id: F.igUserId } };
}

export function createGraphApi(): FakeApi {
  function handle(req: FakeRequest): FakeResponse {
    const token = bearer(req) ?? req.query.access_token;
    if (!token || token === F.badToken) return graphError(400, 190, 'Invalid OAuth access token - Cannot parse access token');
    const parts = req.path.split('/').filter(Boolean).slice(1).map(decodeURIComponent);
    const [node, edgeName] = parts;
    const base = `/${F.version}/${parts.join('/')}`;
    if (node === 'ads_archive') {
      const field = adsArchiveProblems({ fields: req.query.fields ?? '' }).find((p) => p.startsWith('field '));
      if (field) return graphError(400, 100, `(#100) Tried accessing nonexisting field (${field.slice(6)}) on node type (ArchivedAd)`);
      if (!req.query.ad_reached_countries) return graphError(400, 100, '(#100) The parameter ad_reached_countries is required');
      if (req.query.search_page_ids !== undefined) {
        const known = req.query.search_page_ids.split(',').includes(F.adPageId);
        return edge(base, req, known ? F.pageAds : 0, (i) => archivedAd('page', i), 25, 1000);
      }
      if (req.query.search_terms === undefined) return graphError(400, 100, '(#100) search_terms or search_page_ids is required');
      const total = req.query.search_terms.includes(FIXTURES.emptyQueryWord) ? 0 : F.searchAds;
      return edge(base, req, total, (i) => archivedAd('search', i), 25, 1000);
    }
    if (node === 'ig_hashtag_search') {
      if (req.query.user_id !== F.igUserId)
        return graphError(400, 100, '(#100) user_id is required and must be your Instagram professional account');
      const hit = (req.query.q ?? '').toLowerCase() === F.igHashtag.name;
      return { status: 200, body: { data: hit ? [{ id: F.igHashtag.id }] : [] } };
    }
    if (node === F.igUserId && !edgeName) return businessDiscovery(req, req.query.fields ?? '');
    if (node === F.igHashtag.id && (edgeName === 'top_media' || edgeName === 'recent_media')) {
      if (req.query.user_id !== F.igUserId) return graphError(400, 100, '(#100) user_id is required');
      return edge(base, req, F.igHashtag.media, (i) => igMedia(i, false), 25, 50);
    }
    if (node === F.page.id || node?.toLowerCase() === F.page.username) {
      if (!edgeName) return nonexistingField(req, 'Page') ?? { status: 200, body: pageObject() };
      if (edgeName === 'posts' || edgeName === 'published_posts')
        return nonexistingField(req, 'Post') ?? edge(base, req, F.page.posts, post);
      return missing(`${node}/${edgeName}`);
    }
    // An alias (a page username) that names nothing.
    if (node && !edgeName && /^[A-Za-z][A-Za-z0-9.]*$/.test(node) && node !== 'me' && !node.startsWith('pfbid0')) {
      return graphError(404, 803, `(#803) Some of the aliases you requested do not exist: ${node}`);
    }
    // A post: {page-id}_{post-id}, where the post ID may be the pfbid0… form, or a bare pfbid0….
    const pfbidMatch = node ? /^(?:(\d+)_)?(pfbid0[A-Za-z0-9]+)$/.exec(node) : null;
    const pfbidPost = pfbidMatch && (pfbidMatch[1] === undefined || pfbidMatch[1] === F.page.id) ? pfbidIndex(pfbidMatch[2]) : null;
    const postMatch = node ? (pfbidPost !== null ? [node, F.page.id, String(900000000 + pfbidPost)] : /^(\d+)_(\d+)$/.exec(node)) : null;
    if (postMatch && postMatch[1] === F.page.id) {
      const i = Number(postMatch[2]) - 900000000;
      if (i < 0 || i >= F.page.posts) return missing(node);
      if (!edgeName) return nonexistingField(req, 'Post') ?? { status: 200, body: post(i) };
      if (edgeName === 'comments') {
        const bad = nonexistingField(req, 'Comment');
        if (bad) return bad;
        return edge(base, req, F.page.commentsPerPost, (c) => {
          const cid = `${node}_${String(c).padStart(6, '0')}`;
          return {
            id: cid,
            message: sentence(`${cid}:m`, 6),
            created_time: iso(T0 - c * 300_000).replace('Z', '+0000'),
            from: { id: `9${String(hash(cid) % 1e9).padStart(14, '0')}`, name: `Commenter ${hash(cid) % 500}` },
            like_count: pick(`${cid}:l`, 0, 300),
            comment_count: pick(`${cid}:r`, 0, 9),
            permalink_url: `https://www.facebook.com/${F.page.username}/posts/${postMatch[2]}?comment_id=${c}`,
          };
        });
      }
    }
    // A comment: {post-id}_{comment-id} (the post's own ID, without its page), as Graph names
    // comments; its /comments edge is the comment's replies
    // (developers.facebook.com/docs/graph-api/reference/comment/comments).
    const commentMatch = node ? /^(9\d{8})_(\d{1,6})$/.exec(node) : null;
    if (commentMatch) {
      const i = Number(commentMatch[1]) - 900000000;
      const c = Number(commentMatch[2]);
      if (i < 0 || i >= F.page.posts || c >= F.page.commentsPerPost) return missing(node);
      if (edgeName === 'comments') {
        const bad = nonexistingField(req, 'Comment');
        if (bad) return bad;
        return edge(base, req, F.page.repliesPerComment, (r) => {
          const rid = `${commentMatch[1]}_${7_000_000 + c * 1000 + r}`;
          return {
            id: rid,
            message: sentence(`${rid}:m`, 5),
            created_time: iso(T0 - c * 300_000 + (r + 1) * 60_000).replace('Z', '+0000'),
            from: { id: `9${String(hash(rid) % 1e9).padStart(14, '0')}`, name: `Replier ${hash(rid) % 500}` },
            like_count: pick(`${rid}:l`, 0, 50),
            comment_count: 0,
            permalink_url: `https://www.facebook.com/${F.page.username}/posts/${commentMatch[1]}?comment_id=${c}&reply_comment_id=${7_000_000 + c * 1000 + r}`,
          };
        });
      }
    }
    return missing(node ?? '');
  }

  function misbehave(rule: MisbehaveRule): FakeResponse {
    const buc = (type: string, minutes: number) => ({
      'x-business-use-case-usage': JSON.stringify({
        [F.page.id]: [{ type, call_count: 100, total_cputime: 40, total_time: 60, estimated_time_to_regain_access: minutes }],
      }),
    });
    switch (rule.kind) {
      case 'rate_limit':
        return {
          ...graphError(400, 80001, 'There have been too many calls to this Page account. Wait a bit and try again.', {
            is_transient: false,
          }),
          headers: buc('pages', rule.regainMinutes ?? 5),
        };
      case 'quota':
        return {
          ...graphError(400, 613, 'Calls to this api have exceeded the rate limit.'),
          headers: buc('ads_archive', rule.regainMinutes ?? 60),
        };
      case 'permission':
        return graphError(
          400,
          100,
          "Unsupported get request. Object with ID '100000000000001' does not exist, cannot be loaded due to missing permissions, or does not support this operation. Please read the Graph API documentation at https://developers.facebook.com/docs/graph-api",
          { error_subcode: 33 },
        );
      case 'errors_200':
        return {
          status: 200,
          body: {
            error: { message: 'An unknown error occurred', type: 'OAuthException', code: 1, is_transient: true, fbtrace_id: 'Afake200' },
          },
        };
      case 'token_invalid':
        return graphError(400, 190, 'Error validating access token: Session has expired.', { error_subcode: 463 });
      default:
        return graphError(rule.status ?? 500, 2, 'An unexpected error has occurred. Please retry your request later.', {
          is_transient: true,
        });
    }
  }

  return { name: 'graph', matches: (p) => /^\/v\d+\.\d+\//.test(p), handle, misbehave };
}
