/**
 * Fake ScrapeCreators API under /scrapecreators (the vendor's host is api.scrapecreators.com).
 * Endpoints, parameters and response shapes follow the vendor's public CLI
 * (references/scrapecreators-endpoints.json, from api-config/*.js): every reply carries success,
 * credits_remaining and credits_charged; a parameter an endpoint does not take answers 400. The
 * key travels in x-api-key; errors follow the CLI's src/output.js: 401 bad key, 402 no credits,
 * 404 not found, 429 rate limited, 5xx. The error body is {success: false, message} (the CLI reads
 * message, else error). Page sizes are the vendor's own; callers cannot choose them.
 */
import { FIXTURES } from './fixtures';
import { vendorQueryProblems } from './reference';
import {
  decodeToken,
  encodeToken,
  iso,
  pick,
  sentence,
  type FakeApi,
  type FakeRequest,
  type FakeResponse,
  type MisbehaveRule,
} from './util';

const F = FIXTURES.scrapecreators;
const PREFIX = '/scrapecreators';
const T0 = Math.floor(Date.now() / 3_600_000) * 3_600_000;

type Json = Record<string, unknown>;

function fail(status: number, message: string): FakeResponse {
  return { status, body: { success: false, message } };
}

export function createScrapeCreatorsApi(): FakeApi {
  let credits = 100_000;

  function ok(body: Json): FakeResponse {
    credits -= 1;
    return { status: 200, body: { success: true, credits_remaining: credits, credits_charged: 1, ...body } };
  }

  /** A page of `size` from `total` at the cursor `param`, or an error for a bad cursor. */
  function window(
    req: FakeRequest,
    param: string,
    size: number,
    total: number,
  ): { from: number; to: number; next: string | null } | FakeResponse {
    const from = decodeToken('sc', req.query[param]);
    if (from === null) return fail(400, `Invalid ${param}`);
    const to = Math.min(total, from + size);
    return { from, to, next: to < total ? encodeToken('sc', to) : null };
  }

  const range = (from: number, to: number): number[] => Array.from({ length: Math.max(0, to - from) }, (_, i) => from + i);

  function igUser(i: number) {
    const id = String(5_000_000_000 + i);
    return { pk: id, id, username: `person${i}` };
  }

  function route(path: string, req: FakeRequest): FakeResponse {
    const q = req.query;
    switch (path) {
      case '/v1/instagram/post': {
        if (!q.url?.includes(`/p/${F.igPost.shortcode}`) && !q.url?.includes(`/reel/${F.igPost.shortcode}`))
          return fail(404, 'Post not found');
        return ok({
          data: {
            xdt_shortcode_media: {
              id: F.igPost.id,
              shortcode: F.igPost.shortcode,
              is_video: true,
              product_type: 'clips',
              video_duration: 31.4,
              video_view_count: 48_211,
              taken_at_timestamp: Math.floor(T0 / 1000) - 86_400,
              owner: { id: F.igUser.id, username: F.igUser.handle, is_verified: true, full_name: 'Fake Brand', is_private: false },
              edge_media_to_caption: {
                edges: [
                  {
                    node: {
                      created_at: String(Math.floor(T0 / 1000) - 86_400),
                      text: 'Launch day #fakebrand #reels',
                      id: '17950000000000001',
                    },
                  },
                ],
              },
              edge_media_preview_like: { count: 3120, edges: [] },
              edge_media_to_parent_comment: { count: F.comments, edges: [] },
            },
          },
        });
      }
      case '/v2/instagram/post/comments': {
        if (!q.url?.includes(F.igPost.shortcode)) return fail(404, 'Post not found');
        const w = window(req, 'cursor', 15, F.comments);
        if ('status' in w) return w;
        return ok({
          comments: range(w.from, w.to).map((i) => ({
            id: String(18_000_000_000_000_000 + i),
            text: sentence(`igc${i}`, 6),
            created_at: iso(T0 - i * 600_000).replace('Z', '.000Z'),
            comment_like_count: pick(`igc${i}:l`, 0, 90),
            child_comment_count: pick(`igc${i}:r`, 0, 4),
            replies: [],
            replies_cursor: null,
            has_more_replies: false,
            user: { is_verified: false, id: igUser(i).id, pk: igUser(i).pk, username: igUser(i).username },
          })),
          ...(w.next ? { cursor: w.next } : {}),
        });
      }
      case '/v1/instagram/profile': {
        if (q.handle?.toLowerCase() !== F.igUser.handle) return fail(404, 'User not found');
        return ok({
          data: {
            user: {
              id: F.igUser.id,
              username: F.igUser.handle,
              full_name: 'Fake Brand',
              biography: 'We sell fixtures.',
              is_private: false,
              is_verified: true,
            },
          },
        });
      }
      case '/v1/instagram/user/highlights': {
        if (q.handle?.toLowerCase() !== F.igUser.handle) return fail(404, 'User not found');
        return ok({
          highlights: range(0, F.highlights).map((i) => ({
            id: `${F.highlightId.slice(0, -2)}${String(i + 1).padStart(2, '0')}`,
            title: ['Launch', 'Studio', 'Travel', 'Team', 'FAQ', 'Press'][i % 6],
            cover_media: { thumbnail_src: `https://scontent.cdninstagram.com/h${i}.jpg` },
            cover_media_cropped_thumbnail: { url: `https://scontent.cdninstagram.com/h${i}c.jpg` },
            owner: { id: F.igUser.id, username: F.igUser.handle },
          })),
        });
      }
      case '/v1/instagram/user/highlight/detail': {
        if (q.id !== F.highlightId && q.id !== `highlight:${F.highlightId}`) return fail(404, 'Highlight not found');
        return ok({
          id: `highlight:${F.highlightId}`,
          reel_type: 'highlight_reel',
          user: { pk: F.igUser.id, id: F.igUser.id, username: F.igUser.handle, is_private: false, is_verified: true },
          items: range(0, F.highlightItems).map((i) => ({
            pk: String(3_500_000_000_000_000_000n + BigInt(i)),
            id: `${String(3_500_000_000_000_000_000n + BigInt(i))}_${F.igUser.id}`,
            code: `DHfake${i}`,
            media_type: i % 3 === 0 ? 2 : 1,
            taken_at: Math.floor(T0 / 1000) - i * 3600,
            ...(i % 3 === 0
              ? {
                  video_duration: 12.5,
                  video_versions: [{ height: 1280, type: 101, url: `https://scontent.cdninstagram.com/s${i}.mp4`, width: 720 }],
                }
              : {}),
          })),
        });
      }
      case '/v1/instagram/user/tagged-posts': {
        if (q.user_id !== F.igUser.id) return fail(404, 'User not found');
        const w = window(req, 'cursor', 12, F.tagged);
        if ('status' in w) return w;
        return ok({
          posts: range(w.from, w.to).map((i) => ({
            pk: String(3_900_000_000_000_000_000n + BigInt(i)),
            code: `DTag${i}`,
            media_type: i % 4 === 0 ? 2 : 1,
            caption: { pk: String(18_100_000_000_000_000 + i), text: `${sentence(`tag${i}`, 5)} #fakebrand` },
            comment_count: pick(`tag${i}:c`, 0, 40),
            like_count: pick(`tag${i}:l`, 0, 900),
            view_count: i % 4 === 0 ? pick(`tag${i}:v`, 100, 9000) : null,
            user: igUser(i),
            url: `https://www.instagram.com/p/DTag${i}/`,
          })),
          ...(w.next ? { cursor: w.next } : {}),
          has_more: w.next !== null,
        });
      }
      case '/v1/instagram/search/profiles': {
        const total = q.query?.includes(FIXTURES.emptyQueryWord) ? 0 : F.searchProfiles;
        const w = window(req, 'cursor', 20, total);
        if ('status' in w) return w;
        return ok({
          query: q.query,
          profiles: range(w.from, w.to).map((i) => ({
            id: String(6_000_000_000 + i),
            username: `${(q.query ?? '').replace(/\W/g, '').toLowerCase()}${i}`,
            full_name: `Person ${i}`,
            biography: sentence(`isp${i}`, 6),
            is_private: i % 10 === 0,
            is_verified: i % 7 === 0,
            profile_pic_url: `https://scontent.cdninstagram.com/p${i}.jpg`,
            follower_count: pick(`isp${i}:f`, 0, 90_000),
            following_count: pick(`isp${i}:g`, 0, 900),
            media_count: pick(`isp${i}:m`, 0, 400),
            url: `https://www.instagram.com/${(q.query ?? '').replace(/\W/g, '').toLowerCase()}${i}`,
          })),
          ...(w.next ? { cursor: w.next } : {}),
        });
      }
      case '/v2/instagram/media/transcript': {
        if (!q.url?.includes(F.igPost.shortcode)) return fail(404, 'Post not found');
        return ok({
          transcripts: [
            { id: F.igPost.id, shortcode: F.igPost.shortcode, text: 'Welcome to launch day. Everything you see here is a fixture.' },
          ],
        });
      }
      case '/v1/tiktok/search/users': {
        const total = q.query?.includes(FIXTURES.emptyQueryWord) ? 0 : F.tiktokUsers;
        const offset = Number(q.cursor ?? 0);
        if (!Number.isInteger(offset) || offset < 0) return fail(400, 'Invalid cursor');
        const to = Math.min(total, offset + 10);
        return ok({
          cursor: to,
          users: range(offset, to).map((i) => ({
            user_info: {
              uid: String(7_000_000_000_000_000_000n + BigInt(i)),
              unique_id: `creator${i}`,
              nickname: `Creator ${i}`,
              follower_count: pick(`ttu${i}:f`, 0, 2_000_000),
              following_count: pick(`ttu${i}:g`, 0, 500),
              aweme_count: pick(`ttu${i}:a`, 0, 800),
              verification_type: i % 9 === 0 ? 1 : 0,
              custom_verify: i % 9 === 0 ? 'Verified account' : '',
              is_private_account: 0,
            },
          })),
        });
      }
      case '/v1/tiktok/get-trending-feed': {
        if (!/^[A-Z]{2}$/.test(q.region ?? '')) return fail(400, 'Invalid region');
        return ok({
          aweme_list: range(0, F.trending).map((i) => {
            const id = String(7_540_000_000_000_000_000n + BigInt(i));
            return {
              aweme_id: id,
              desc: `${sentence(`tr${i}`, 6)} #fyp`,
              region: q.region,
              create_time: Math.floor(T0 / 1000) - i * 1800,
              statistics: {
                aweme_id: id,
                comment_count: pick(`tr${i}:c`, 0, 900),
                digg_count: pick(`tr${i}:l`, 0, 90_000),
                play_count: pick(`tr${i}:v`, 1000, 2_000_000),
                share_count: pick(`tr${i}:s`, 0, 5000),
              },
              author: { uid: String(6_700_000_000_000_000_000n + BigInt(i)), nickname: `Trender ${i}` },
              url: `https://www.tiktok.com/@trender${i}/video/${id}`,
            };
          }),
        });
      }
      case '/v1/youtube/channel/shorts': {
        const known = q.handle?.toLowerCase() === F.ytChannel.handle || q.channelId === F.ytChannel.id;
        if (!known) return fail(404, 'Channel not found');
        const w = window(req, 'continuationToken', 48, F.ytShorts);
        if ('status' in w) return w;
        return ok({
          videos: [],
          channels: [],
          playlists: [],
          shorts: range(w.from, w.to).map((i) => {
            const id = `fs${String(i).padStart(9, '0')}`;
            return {
              type: 'short',
              id,
              url: `https://www.youtube.com/watch?v=${id}`,
              title: `${sentence(`ys${i}`, 4)} #shorts`,
              viewCountInt: pick(`ys${i}:v`, 100, 900_000),
              description: sentence(`ys${i}:d`, 8),
              commentCountInt: pick(`ys${i}:c`, 0, 400),
              likeCountInt: pick(`ys${i}:l`, 0, 40_000),
              publishDate: iso(T0 - i * 86_400_000),
              durationMs: pick(`ys${i}:t`, 5_000, 59_000),
            };
          }),
          ...(w.next ? { continuationToken: w.next } : {}),
        });
      }
      case '/v1/youtube/video/transcript': {
        const id = /[?&]v=([\w-]{11})/.exec(q.url ?? '')?.[1];
        if (!id) return fail(404, 'Video not found');
        if (id === F.ytNoTranscript) return fail(404, 'No transcript available for this video');
        return ok({
          videoId: id,
          type: 'video',
          url: q.url,
          transcript: range(0, 4).map((i) => ({
            text: sentence(`${id}:s${i}`, 6),
            startMs: String(i * 2500),
            endMs: String(i * 2500 + 2400),
            startTimeText: `0:0${i * 2}`,
          })),
          transcript_only_text: range(0, 4)
            .map((i) => sentence(`${id}:s${i}`, 6))
            .join(' '),
          language: 'English',
        });
      }
      case '/v1/twitter/tweet/transcript': {
        if (!/\/status\/\d+/.test(q.url ?? '')) return fail(404, 'Tweet not found');
        return ok({ transcript: `${sentence(`${q.url}:x`, 10)}.` });
      }
      case '/v1/facebook/profile/reels': {
        if (!q.url?.toLowerCase().includes(F.fbPage)) return fail(404, 'Profile not found');
        // The vendor's reference lists next_page_id and cursor: both are needed from page 2 on.
        if (Boolean(q.cursor) !== Boolean(q.next_page_id)) return fail(400, 'next_page_id and cursor must be sent together');
        if (q.next_page_id && q.next_page_id !== `np${q.cursor}`) return fail(400, 'next_page_id does not match cursor');
        const w = window(req, 'cursor', 10, F.fbReels);
        if ('status' in w) return w;
        return ok({
          reels: range(w.from, w.to).map((i) => ({
            id: Buffer.from(`reel:${i}`).toString('base64'),
            post_id: String(1_200_000_000_000_000 + i),
            creation_time: iso(T0 - i * 7_200_000).replace('Z', '.000Z'),
            url: `https://www.facebook.com/reel/${1_110_000_000_000_000 + i}`,
            view_count: pick(`fr${i}:v`, 10, 90_000),
            feedback_id: Buffer.from(`feedback:${i}`).toString('base64'),
            description: `${sentence(`fr${i}`, 5)} #fakepage`,
            video_id: String(1_110_000_000_000_000 + i),
            play_time_in_ms: pick(`fr${i}:t`, 5_000, 90_000),
            author: { id: '100000000000001', name: 'Fake Page', is_verified: true, url: `https://www.facebook.com/${F.fbPage}` },
          })),
          ...(w.next ? { cursor: w.next, next_page_id: `np${w.next}` } : {}),
        });
      }
      case '/v1/facebook/post/transcript':
        if (!/\/(videos|reel|watch)/.test(q.url ?? '')) return fail(404, 'Post not found');
        return ok({ transcript: `${sentence(`${q.url}:f`, 9)}.` });
      case '/v1/facebook/adLibrary/search/companies': {
        const total = q.query?.includes(FIXTURES.emptyQueryWord) ? 0 : F.companies;
        return ok({
          searchResults: range(0, total).map((i) => ({
            page_id: String(51_000_000_000 + i),
            category: 'Product/service',
            likes: pick(`co${i}:l`, 0, 9_000_000),
            verification: i === 0 ? 'BLUE_VERIFIED' : 'NOT_VERIFIED',
            name: `${q.query ?? ''} Company ${i}`,
            entity_type: 'PERSON_PROFILE',
            page_alias: `${(q.query ?? '').replace(/\W/g, '').toLowerCase()}co${i}`,
            page_is_deleted: false,
          })),
        });
      }
      case '/v1/facebook/adLibrary/ad': {
        if (q.id !== F.adId) return fail(404, 'Ad not found');
        return ok({
          adArchiveID: Number(F.adId),
          pageID: 100000000000001,
          pageName: 'Fake Page',
          isActive: false,
          startDate: Math.floor(T0 / 1000) - 30 * 86_400,
          endDate: Math.floor(T0 / 1000) - 2 * 86_400,
          publisherPlatform: ['FACEBOOK', 'INSTAGRAM'],
          currency: '',
          // As in the vendor's sample: the countries the ad targeted or reached, and the EU reach breakdown.
          targetedOrReachedCountries: ['DE', 'FR'],
          aaa_info: {
            targets_eu: true,
            location_audience: [{ name: 'Dubrovnik, Croatia', num_obfuscated: 0, type: 'CITY', excluded: false }],
            // The ad's EU reach (a number in the vendor's sample: 1657).
            eu_total_reach: 1657,
            age_country_gender_reach_breakdown: [
              { country: 'HR', age_gender_breakdowns: [{ age_range: '45-54', male: 101, female: 77, unknown: 4 }] },
            ],
          },
          snapshot: {
            caption: 'fakepage.example',
            link_url: 'https://fakepage.example/',
            body: 'Fixtures for everyone. #fakepage',
            videos: [
              { video_hd_url: `https://video.xx.fbcdn.net/${F.adId}_hd.mp4`, video_sd_url: `https://video.xx.fbcdn.net/${F.adId}_sd.mp4` },
            ],
            images: [],
            page_id: 100000000000001,
            page_name: 'Fake Page',
          },
        });
      }
      case '/v1/facebook/adLibrary/ad/transcript': {
        if (q.id !== F.adId) return fail(404, 'Ad not found');
        return ok({
          data: {
            ad_id: F.adId,
            url: `https://www.facebook.com/ads/library?id=${F.adId}`,
            transcript: 'Fixtures for everyone. Shop now.',
            transcript_available: true,
          },
        });
      }
    }
    return fail(404, 'Endpoint not found');
  }

  function handle(req: FakeRequest): FakeResponse {
    const key = req.headers['x-api-key'];
    if (!key || key === F.badKey) return fail(401, 'Invalid API key');
    if (credits <= 0) return fail(402, 'You are out of credits');
    const path = req.path.slice(PREFIX.length);
    const problem = vendorQueryProblems(path, req.query)[0];
    if (problem?.startsWith('parameter ')) return fail(400, `Unknown parameter: ${problem.slice(10)}`);
    if (problem?.startsWith('missing ')) return fail(400, `${problem.slice(8)} is required`);
    return route(path, req);
  }

  function misbehave(rule: MisbehaveRule): FakeResponse {
    const retry = rule.retryAfterSeconds !== undefined ? { 'retry-after': String(rule.retryAfterSeconds) } : undefined;
    switch (rule.kind) {
      case 'rate_limit':
        return { ...fail(429, 'Too many requests'), headers: retry };
      case 'credits':
      case 'quota':
        return fail(402, 'You are out of credits');
      case 'token_invalid':
        return fail(401, 'Invalid API key');
      default:
        return { ...fail(rule.status ?? 500, 'Internal server error'), headers: retry };
    }
  }

  return {
    name: 'scrapecreators',
    matches: (p) => p.startsWith(`${PREFIX}/`),
    handle,
    misbehave,
    reset() {
      credits = 100_000;
    },
  };
}
