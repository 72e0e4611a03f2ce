/**
 * Meta adapters: Ad Library (facebook adlibrary_search, adlibrary_company_ads), Facebook Pages
 * (facebook profile, posts, post, comments, comment_replies) and the Instagram Graph API (instagram profile, posts,
 * reels through business_discovery; hashtag through ig_hashtag_search + top_media).
 * References: https://developers.facebook.com/docs/graph-api/reference/ads_archive (search_terms,
 * search_page_ids, ad_reached_countries required, paging.cursors.after),
 * https://developers.facebook.com/docs/marketing-api/reference/archived-ad (ArchivedAd fields),
 * https://developers.facebook.com/docs/graph-api/reference/page (Page fields, /posts, /comments),
 * https://developers.facebook.com/docs/graph-api/reference/comment/comments (a comment's replies),
 * https://developers.facebook.com/docs/instagram-platform/instagram-graph-api/reference/ig-user/business_discovery
 * and https://developers.facebook.com/docs/instagram-platform/instagram-graph-api/reference/ig-hashtag-search.
 */
import { FACEBOOK_NUMERIC_ID, FACEBOOK_POST_ID } from '@sdx/catalog';
import { ProviderError, type ExtractionRequest, type Item, type ProfileItem } from '../types';
import { arr, obj } from './http';
import { GRAPH_ERRORS, GraphClient, nextAfter, type GraphConfig } from './graph';
import { rows } from './classify';
import { adItem, commentItem, countryCode, countryCodes, isoTime, metrics, num, postItem, profileItem, str } from './items';
import { decodeCursor, paginate, profileBundle, single, type CursorState } from './paging';
import { asUrl, upstreamProvider, type UpstreamProvider } from './provider';

type Json = Record<string, unknown>;

// ---- Ad Library ------------------------------------------------------------------------------

export interface MetaAdLibraryConfig extends GraphConfig {
  /** ad_reached_countries (required by the API); default ["ALL"]. */
  reachedCountries?: string[];
}

const AD_FIELDS =
  'id,ad_creation_time,ad_creative_bodies,ad_creative_link_titles,ad_delivery_start_time,ad_delivery_stop_time,bylines,currency,impressions,languages,page_id,page_name,publisher_platforms,spend,age_country_gender_reach_breakdown,target_locations,eu_total_reach';

/**
 * An archived ad's own countries: the codes of its reach breakdown (age_country_gender_reach_breakdown,
 * EU and political ads) and the countries of its included target_locations, which name a country
 * ("Germany") or a place in one ("Dubrovnik, Croatia").
 */
export function archivedAdCountries(a: Record<string, unknown>): string[] {
  const reached = arr(a.age_country_gender_reach_breakdown).map((b) => obj(b).country);
  const targeted = arr(a.target_locations)
    .map(obj)
    .filter((l) => l.excluded !== true)
    .map((l) => countryCode((str(l.name) ?? '').split(',').at(-1) ?? ''));
  return countryCodes([...reached, ...targeted]);
}

function range(value: unknown): string | null {
  const r = obj(value);
  const lo = str(r.lower_bound);
  const hi = str(r.upper_bound);
  if (lo === null && hi === null) return null;
  return hi === null ? `${lo}+` : `${lo ?? 0}-${hi}`;
}

export function createMetaAdLibraryProvider(config: MetaAdLibraryConfig): UpstreamProvider {
  const graph = new GraphClient('meta-ad-library', config);
  const countries = JSON.stringify(config.reachedCountries ?? ['ALL']);

  const now = config.now ?? Date.now;

  function mapAd(a: Json): Item {
    const id = String(a.id);
    const stop = str(a.ad_delivery_stop_time);
    const stopAt = stop ? isoTime(stop) : null;
    // ad_delivery_stop_time is a date: an ad whose stop day is today or later still runs (a
    // scheduled stop); one whose stop day has passed has stopped.
    const today = new Date(now()).toISOString().slice(0, 10);
    const running = stopAt === null || stopAt.slice(0, 10) >= today;
    const body = str(arr(a.ad_creative_bodies)[0]);
    return adItem('facebook', {
      id,
      username: str(a.page_name),
      caption: body ?? str(arr(a.ad_creative_link_titles)[0]),
      // ad_snapshot_url embeds the caller's access token: link the public Ad Library page instead.
      url: `https://www.facebook.com/ads/library/?id=${id}`,
      published_at: isoTime(a.ad_creation_time),
      advertiser_id: str(a.page_id),
      advertiser_name: str(a.page_name),
      first_shown_at: isoTime(a.ad_delivery_start_time),
      last_shown_at: stopAt,
      status: running ? 'active' : 'inactive',
      body,
      platforms: arr(a.publisher_platforms).map((p) => String(p).toLowerCase()),
      // The ad's own countries; ad_reached_countries (META_AD_REACHED_COUNTRIES) only filters the search.
      countries: archivedAdCountries(a),
      spend: range(a.spend) && str(a.currency) ? `${range(a.spend)} ${str(a.currency)}` : range(a.spend),
      impressions: range(a.impressions),
      // Reach: the archive's eu_total_reach (unique EU accounts reached; EU-delivered ads only).
      reach: str(a.eu_total_reach) ?? range(a.eu_total_reach),
    });
  }

  function archive(request: ExtractionRequest, search: Record<string, string>) {
    return paginate({
      limit: request.limit,
      pageMax: 100,
      start: decodeCursor(request.resumeCursor),
      signal: request.signal,
      fetch: async (after, size) => {
        const body = await graph.get(
          '/ads_archive',
          {
            ...search,
            ad_reached_countries: countries,
            ad_type: 'ALL',
            ad_active_status: 'ALL',
            fields: AD_FIELDS,
            limit: size,
            after: after ?? undefined,
          },
          request.signal,
        );
        const data = arr(body.data);
        // An empty page ends the listing.
        return { items: data.map((a) => mapAd(obj(a))), next: data.length === 0 ? null : nextAfter(body, size) };
      },
    });
  }

  return upstreamProvider('meta-ad-library', 'official', rows(GRAPH_ERRORS), {
    facebook: {
      adlibrary_search: (request) => archive(request, { search_terms: request.target }),
      adlibrary_company_ads: (request) => archive(request, { search_page_ids: request.target }),
    },
  });
}

// ---- Facebook Pages --------------------------------------------------------------------------

const PAGE_FIELDS = 'id,name,username,about,link,fan_count,followers_count,verification_status,picture{url}';
const FB_POST_FIELDS =
  'id,message,created_time,permalink_url,attachments{media_type},shares,reactions.summary(total_count).limit(0),comments.summary(total_count).limit(0)';
/** Facebook attachment types in the sandbox's vocabulary (a post without attachment is text). */
const FB_MEDIA_TYPES: Record<string, string> = {
  photo: 'photo',
  album: 'photo',
  video: 'video',
  video_inline: 'video',
  share: 'link',
  link: 'link',
};
const FB_COMMENT_FIELDS = 'id,message,created_time,from{id,name},like_count,comment_count,permalink_url';

export function createFacebookPagesProvider(config: GraphConfig): UpstreamProvider {
  const graph = new GraphClient('facebook-pages', config);

  function pageRef(target: string): string {
    const url = asUrl(target);
    if (!url) return target;
    const id = url.searchParams.get('id');
    if (url.pathname.includes('profile.php') && id) return id;
    const first = url.pathname.split('/').filter(Boolean)[0];
    if (!first) throw ProviderError.invalid('URL does not name a Facebook page', { target });
    return decodeURIComponent(first);
  }

  async function page(target: string, signal: AbortSignal): Promise<Json> {
    return graph.get(`/${encodeURIComponent(pageRef(target))}`, { fields: PAGE_FIELDS }, signal);
  }

  function mapPage(p: Json): ProfileItem {
    const username = str(p.username);
    return profileItem('facebook', {
      id: String(p.id),
      username,
      url: str(p.link) ?? (username ? `https://www.facebook.com/${username}` : `https://www.facebook.com/${String(p.id)}`),
      display_name: str(p.name),
      bio: str(p.about),
      avatar_url: str(obj(obj(p.picture).data).url),
      verified: ['blue_verified', 'gray_verified'].includes(str(p.verification_status) ?? ''),
      followers_count: num(p.followers_count) ?? num(p.fan_count),
    });
  }

  function mapPost(p: Json, username: string | null): Item {
    const media = str(obj(arr(obj(p.attachments).data)[0]).media_type);
    return postItem('facebook', 'post', {
      id: String(p.id),
      username,
      caption: str(p.message),
      url: str(p.permalink_url),
      published_at: isoTime(p.created_time),
      media_type: FB_MEDIA_TYPES[media?.toLowerCase() ?? ''] ?? 'text',
      metrics: metrics({
        likes: num(obj(obj(p.reactions).summary).total_count),
        comments: num(obj(obj(p.comments).summary).total_count),
        shares: num(obj(p.shares).count) ?? 0,
      }),
    });
  }

  /**
   * The Graph node of a post target: `{page-id}_{post-id}` where the page is known; a bare
   * post ID (`pfbid0…`, the opaque form Facebook's permalinks show today, or digits) where it is not.
   */
  async function postId(target: string, signal: AbortSignal): Promise<string> {
    const url = asUrl(target);
    if (!url) {
      const [owner, post] = target.includes('_') ? target.split('_', 2) : [null, target];
      if ((owner !== null && !FACEBOOK_NUMERIC_ID.test(owner)) || !post || !FACEBOOK_POST_ID.test(post))
        throw ProviderError.invalid('not a Facebook post ID', { target });
      return target;
    }
    // Every part that becomes the Graph path is checked (as the catalog did at admission): a
    // post ID is digits or pfbid…, a page ID digits, so nothing else can reach the path.
    const story = url.searchParams.get('story_fbid') ?? url.searchParams.get('fbid');
    const owner = url.searchParams.get('id');
    if (story) {
      if (!FACEBOOK_POST_ID.test(story) || (owner !== null && !FACEBOOK_NUMERIC_ID.test(owner)))
        throw ProviderError.invalid('URL does not name a Facebook post by a valid ID', { target });
      if (owner) return `${owner}_${story}`;
      return story;
    }
    const m = /^\/([^/]+)\/(?:posts|videos)\/([^/]+)/.exec(url.pathname);
    if (m?.[1] && m[2]) {
      if (!FACEBOOK_POST_ID.test(m[2])) throw ProviderError.invalid('URL does not name a Facebook post by a valid ID', { target });
      const pageId = String((await page(m[1], signal)).id);
      if (!FACEBOOK_NUMERIC_ID.test(pageId)) throw ProviderError.invalid("the post's page has no numeric ID", { target });
      return `${pageId}_${m[2]}`;
    }
    throw ProviderError.invalid('URL does not name a Facebook post by a valid ID', { target });
  }

  function posts(request: ExtractionRequest, known: ProfileItem | null, limit: number, start: CursorState | null, stage?: string) {
    return (async function* () {
      let id = start?.x?.id;
      let username = start?.x?.u ?? null;
      if (!id) {
        const p = known ?? mapPage(await page(request.target, request.signal));
        id = p.id;
        username = p.username;
      }
      const pageId = id;
      yield* paginate({
        limit,
        pageMax: 100,
        start,
        stage,
        state: { id: pageId, ...(username ? { u: username } : {}) },
        signal: request.signal,
        fetch: async (after, size) => {
          const body = await graph.get(
            `/${pageId}/posts`,
            { fields: FB_POST_FIELDS, limit: size, after: after ?? undefined },
            request.signal,
          );
          return { items: arr(body.data).map((p) => mapPost(obj(p), username)), next: nextAfter(body, size) };
        },
      });
    })();
  }

  /**
   * The Graph node of a comment target: `{post-id}_{comment-id}` (the post's own numeric ID,
   * without its page), from a comment URL's post and `comment_id` (the thread's top comment), or
   * such an ID as it is. A post known only by its `pfbid0…` form cannot name its comments.
   */
  function commentId(target: string): string {
    const url = asUrl(target);
    if (!url) {
      const [post, comment] = target.split('_');
      if (!post || !comment || !FACEBOOK_NUMERIC_ID.test(post) || !FACEBOOK_NUMERIC_ID.test(comment) || target.split('_').length !== 2) {
        throw ProviderError.invalid('not a Facebook comment ID ({post-id}_{comment-id})', { target });
      }
      return target;
    }
    const comment = url.searchParams.get('comment_id');
    const post =
      url.searchParams.get('story_fbid') ??
      url.searchParams.get('fbid') ??
      /^\/[^/]+\/(?:posts|videos)\/([^/]+)/.exec(url.pathname)?.[1] ??
      null;
    if (!comment || !FACEBOOK_NUMERIC_ID.test(comment))
      throw ProviderError.invalid('URL does not name a Facebook comment (comment_id)', { target });
    if (!post || !FACEBOOK_NUMERIC_ID.test(post))
      throw ProviderError.invalid("the comment's post has no numeric ID (a pfbid permalink cannot name its comments)", { target });
    return `${post}_${comment}`;
  }

  /** The comments of a post, or the replies of a comment (`parent` names the node). */
  function comments(request: ExtractionRequest, parent: () => string | Promise<string>) {
    return (async function* () {
      const start = decodeCursor(request.resumeCursor);
      const id = start?.x?.id ?? (await parent());
      yield* paginate({
        limit: request.limit,
        pageMax: 100,
        start,
        state: { id },
        signal: request.signal,
        fetch: async (after, size) => {
          const body = await graph.get(
            `/${id}/comments`,
            { fields: FB_COMMENT_FIELDS, filter: 'toplevel', limit: size, after: after ?? undefined },
            request.signal,
          );
          const items = arr(body.data).map((raw) => {
            const c = obj(raw);
            return commentItem('facebook', {
              id: String(c.id),
              username: str(obj(c.from).name),
              caption: str(c.message),
              url: str(c.permalink_url),
              published_at: isoTime(c.created_time),
              parent_id: id,
              comment_url: str(c.permalink_url),
              likes: num(c.like_count),
              reply_count: num(c.comment_count),
            });
          });
          return { items, next: nextAfter(body, size) };
        },
      });
    })();
  }

  return upstreamProvider('facebook-pages', 'official', rows(GRAPH_ERRORS), {
    facebook: {
      profile: (request) =>
        profileBundle(
          request,
          async () => mapPage(await page(request.target, request.signal)),
          (profile, limit, start) => posts(request, profile, limit, start, 'posts'),
        ),
      posts: (request) => posts(request, null, request.limit, decodeCursor(request.resumeCursor)),
      post: (request) =>
        single(async () => {
          const id = await postId(request.target, request.signal);
          const p = await graph.get(`/${id}`, { fields: `${FB_POST_FIELDS},from{id,name}` }, request.signal);
          return mapPost(p, str(obj(p.from).name));
        }),
      comments: (request) => comments(request, () => postId(request.target, request.signal)),
      // A comment's replies: the Comment node's /comments edge (Graph reference, comment/comments).
      comment_replies: (request) => comments(request, () => commentId(request.target)),
    },
  });
}

// ---- Instagram Graph API ---------------------------------------------------------------------

export interface InstagramConfig extends GraphConfig {
  /** The operator's own Instagram professional account (the node business_discovery runs on). */
  businessAccountId: string;
}

const IG_PROFILE_FIELDS = 'id,username,name,biography,profile_picture_url,followers_count,follows_count,media_count,website';
const IG_MEDIA_FIELDS = 'id,caption,media_type,media_product_type,permalink,timestamp,like_count,comments_count';
/** Instagram media types in the sandbox's vocabulary. */
const IG_MEDIA_TYPES: Record<string, string> = { IMAGE: 'image', VIDEO: 'video', CAROUSEL_ALBUM: 'carousel' };
const IG_HASHTAG_MEDIA_FIELDS = 'id,caption,media_type,permalink,timestamp,like_count,comments_count';

export function createInstagramProvider(config: InstagramConfig): UpstreamProvider {
  const graph = new GraphClient('instagram-graph', config);
  const me = config.businessAccountId;

  function mapMedia(m: Json, username: string | null): Item {
    const product = str(m.media_product_type);
    return postItem('instagram', 'post', {
      id: String(m.id),
      username,
      caption: str(m.caption),
      url: str(m.permalink),
      published_at: isoTime(m.timestamp),
      media_type: product === 'REELS' ? 'reel' : (IG_MEDIA_TYPES[str(m.media_type) ?? ''] ?? null),
      metrics: metrics({ likes: num(m.like_count), comments: num(m.comments_count) }),
    });
  }

  async function discover(username: string, media: string | null, signal: AbortSignal): Promise<Json> {
    const body = await graph.get(
      `/${me}`,
      { fields: `business_discovery.username(${username.replace(/^@/, '')}){${IG_PROFILE_FIELDS}${media ? `,${media}` : ''}}` },
      signal,
    );
    const found = obj(body.business_discovery);
    if (found.id === undefined)
      throw ProviderError.notFound('no Instagram business or creator account with that username', { upstream: 'instagram-graph' });
    return found;
  }

  function mapProfile(u: Json): ProfileItem {
    const username = str(u.username);
    return profileItem('instagram', {
      id: String(u.id),
      username,
      url: username ? `https://www.instagram.com/${username}/` : null,
      display_name: str(u.name),
      bio: str(u.biography),
      avatar_url: str(u.profile_picture_url),
      followers_count: num(u.followers_count),
      following_count: num(u.follows_count),
      posts_count: num(u.media_count),
    });
  }

  function media(request: ExtractionRequest, limit: number, start: CursorState | null, reelsOnly: boolean, stage?: string) {
    return paginate({
      limit,
      pageMax: reelsOnly ? 100 : 50,
      // Reels are filtered out of the media list: ask for full pages.
      pageMin: reelsOnly ? 100 : 1,
      start,
      stage,
      signal: request.signal,
      fetch: async (after, size) => {
        const edge = `media.limit(${size})${after ? `.after(${after})` : ''}{${IG_MEDIA_FIELDS}}`;
        const found = await discover(request.target, edge, request.signal);
        const list = obj(found.media);
        const username = str(found.username);
        const all = arr(list.data).map(obj);
        const kept = reelsOnly ? all.filter((m) => str(m.media_product_type) === 'REELS') : all;
        return {
          items: kept.map((m) => mapMedia(m, username)),
          next: nextAfter(list, size),
          total: reelsOnly ? null : num(found.media_count),
        };
      },
    });
  }

  return upstreamProvider('instagram-graph', 'official', rows(GRAPH_ERRORS), {
    instagram: {
      profile: (request) =>
        profileBundle(
          request,
          async () => mapProfile(await discover(request.target, null, request.signal)),
          (_p, limit, start) => media(request, limit, start, false, 'posts'),
        ),
      posts: (request) => media(request, request.limit, decodeCursor(request.resumeCursor), false),
      reels: (request) => media(request, request.limit, decodeCursor(request.resumeCursor), true),
      hashtag: (request) =>
        (async function* () {
          const start = decodeCursor(request.resumeCursor);
          let hashtagId = start?.x?.h;
          if (!hashtagId) {
            const found = await graph.get('/ig_hashtag_search', { user_id: me, q: request.target.replace(/^#/, '') }, request.signal);
            hashtagId = str(obj(arr(found.data)[0]).id) ?? undefined;
            if (!hashtagId) throw ProviderError.notFound('Instagram hashtag not found', { upstream: 'instagram-graph' });
          }
          const id = hashtagId;
          yield* paginate({
            limit: request.limit,
            pageMax: 50,
            start,
            state: { h: id },
            signal: request.signal,
            fetch: async (after, size) => {
              const body = await graph.get(
                `/${id}/top_media`,
                { user_id: me, fields: IG_HASHTAG_MEDIA_FIELDS, limit: size, after: after ?? undefined },
                request.signal,
              );
              return { items: arr(body.data).map((m) => mapMedia(obj(m), null)), next: nextAfter(body, size) };
            },
          });
        })(),
    },
  });
}
