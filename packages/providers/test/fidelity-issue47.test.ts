import { FIXTURES, isLongTweet, startFakeUpstream, TIKTOK_ADS_FIRST_DAY, xQueryProblems, type FakeUpstream } from '@sdx/fake-upstream';
import {
  createMetaAdLibraryProvider,
  createScrapeCreatorsProvider,
  createTikTokProvider,
  createXProvider,
  instagramMediaId,
  TIKTOK_ADS_EARLIEST,
  type AdItem,
  type CommentItem,
  type PostItem,
} from '@sdx/providers';
import { collect, request } from './helpers';

/**
 * Issue 47, data fidelity: every field the platform sends reaches the item it belongs in. Whole
 * X texts from note_tweet; TikTok and Meta reach in `reach` (TikTok's impressions null); the Query
 * Ads example's spellings read; TikTok ad searches from 2 October 2022; a scheduled Meta stop is
 * still active; Instagram vendor comments name their post.
 */
let fake: FakeUpstream;
beforeAll(async () => {
  fake = await startFakeUpstream();
});
afterAll(() => fake.close());
beforeEach(() => fake.reset());

const U = FIXTURES.x.user;
const LONG = '1800000000000000003';

describe('X: whole texts from note_tweet', () => {
  const x = () => createXProvider({ bearerToken: 'token', baseUrl: fake.url, retryDelayMs: 1 });

  it('the fake sends a long post cut at 280 characters unless note_tweet is asked for', async () => {
    expect(isLongTweet(LONG)).toBe(true);
    const cut = (await (
      await fetch(`${fake.url}/2/tweets/${LONG}?tweet.fields=entities`, { headers: { authorization: 'Bearer t' } })
    ).json()) as { data: Record<string, unknown> };
    expect(String(cut.data.text)).toHaveLength(280);
    expect(cut.data.note_tweet).toBeUndefined();
    expect(cut.data.entities).toBeUndefined();
    const whole = (await (
      await fetch(`${fake.url}/2/tweets/${LONG}?tweet.fields=note_tweet`, { headers: { authorization: 'Bearer t' } })
    ).json()) as {
      data: { note_tweet: { text: string; entities: { hashtags: Array<{ tag: string }> } } };
    };
    expect(whole.data.note_tweet.text).toHaveLength(356);
    expect(whole.data.note_tweet.text.startsWith(String(cut.data.text).slice(0, 279))).toBe(true);
  });

  it('post: the 356-character text and its last hashtag, from note_tweet.text and note_tweet.entities', async () => {
    const item = (await collect(x(), request('twitter', 'post', LONG, 1))).items[0] as PostItem;
    const sent = fake.requests.find((r) => r.path === `/2/tweets/${LONG}`);
    const whole = (sent?.response?.body as { data: { note_tweet: { text: string; entities: { hashtags: Array<{ tag: string }> } } } }).data
      .note_tweet;
    expect(item.caption).toBe(whole.text);
    expect(item.caption).toHaveLength(356);
    expect(item.hashtags).toEqual([whole.entities.hashtags[0]?.tag]);
    expect(item.caption?.endsWith(`#${item.hashtags[0]}`)).toBe(true);
  });

  it('posts, search and the profile bundle carry whole texts; every tweet lookup asks for note_tweet, as the document allows', async () => {
    const posts = (await collect(x(), request('twitter', 'posts', U.username, 20))).items as PostItem[];
    const search = (await collect(x(), request('twitter', 'search', 'news', 20))).items as PostItem[];
    const bundle = (await collect(x(), request('twitter', 'profile', U.username, 1, { includePosts: 10 }))).items.filter(
      (i) => i.kind === 'post',
    ) as PostItem[];
    for (const items of [posts, search, bundle]) {
      const long = items.filter((i) => isLongTweet(i.id));
      expect(long.length).toBeGreaterThan(0);
      for (const i of long) {
        expect(i.caption).toHaveLength(356);
        expect(i.hashtags).toHaveLength(1);
        expect(i.caption?.endsWith(`#${i.hashtags[0]}`)).toBe(true);
      }
      for (const i of items.filter((t) => !isLongTweet(t.id))) expect((i.caption ?? '').length).toBeLessThan(280);
    }
    const lookups = fake.requests.filter((r) => /^\/2\/(tweets|users\/\d+\/tweets)/.test(r.path));
    expect(lookups.length).toBeGreaterThanOrEqual(3);
    for (const r of lookups) {
      expect(r.query['tweet.fields']?.split(',')).toContain('note_tweet');
      expect(xQueryProblems(r.path, r.query)).toEqual([]);
    }
  });

  it('the fake refuses a tweet field the document does not list', async () => {
    const res = await fetch(`${fake.url}/2/tweets/${LONG}?tweet.fields=note_tweets`, { headers: { authorization: 'Bearer t' } });
    expect(res.status).toBe(400);
    expect(JSON.stringify(await res.json())).toContain('[note_tweets] is not one of');
  });
});

describe("TikTok ads: reach, the example's spellings, the first day", () => {
  const tiktok = (url: string) => createTikTokProvider({ clientKey: 'k1234567', clientSecret: 's1234567', baseUrl: url, retryDelayMs: 1 });

  it("with the Query Ads example's spellings (unique_user_seen, buisness_id) reach and advertiser come through; impressions stay null", async () => {
    const example = await startFakeUpstream({ forms: 'example' });
    const table = await startFakeUpstream({ forms: 'table' });
    try {
      const a = (await collect(tiktok(example.url), request('tiktok', 'adlibrary_search', 'coffee', 3))).items as AdItem[];
      const b = (await collect(tiktok(table.url), request('tiktok', 'adlibrary_search', 'coffee', 3))).items as AdItem[];
      const sentA = example.requests.find((r) => r.path === '/v2/research/adlib/ad/query/')?.response?.body as
        string | { data: { ads: Array<Record<string, Record<string, unknown>>> } };
      const adsA = typeof sentA === 'string' ? [] : sentA.data.ads;
      expect(adsA[0]?.advertiser).toHaveProperty('buisness_id');
      expect(adsA[0]?.ad?.reach).toHaveProperty('unique_user_seen');
      // Both forms give the same items.
      expect(a).toEqual(b);
      for (const [i, ad] of a.entries()) {
        const raw = adsA[i] as { ad: { reach: { unique_user_seen: string } }; advertiser: { buisness_id: unknown } };
        expect(ad.reach).toBe(raw.ad.reach.unique_user_seen);
        expect(ad.reach).toMatch(/^\d+K$/);
        expect(ad.impressions).toBeNull();
        expect(raw.advertiser.buisness_id).toBeDefined();
        expect(ad.countries.length).toBeGreaterThan(0);
      }
      // business_id/buisness_id, all 19 digits (read without losing any).
      expect(a.map((ad) => ad.advertiser_id)).toEqual(['7100000000000000000', '7100000000000000001', '7100000000000000002']);
    } finally {
      await example.close();
      await table.close();
    }
  });

  it('ad searches start the day after 1 October 2022; the fake refuses 20221001', async () => {
    expect(TIKTOK_ADS_EARLIEST).toBe('20221002');
    expect(TIKTOK_ADS_FIRST_DAY).toBe(20221002);
    await collect(tiktok(fake.url), request('tiktok', 'adlibrary_search', 'coffee', 1));
    const sent = fake.requests.find((r) => r.path === '/v2/research/adlib/ad/query/')?.body as {
      filters: { ad_published_date_range: { min: string } };
    };
    expect(sent.filters.ad_published_date_range.min).toBe('20221002');
    const token = (await (
      await fetch(`${fake.url}/v2/oauth/token/`, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: 'client_key=k1234567&client_secret=s1234567&grant_type=client_credentials',
      })
    ).json()) as { access_token: string };
    const refused = await fetch(`${fake.url}/v2/research/adlib/ad/query/?fields=ad.id`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token.access_token}`, 'content-type': 'application/json' },
      body: JSON.stringify({ filters: { ad_published_date_range: { min: '20221001', max: '20230101' } }, search_term: 'coffee' }),
    });
    expect(refused.status).toBe(400);
    expect(((await refused.json()) as { error: { code: string } }).error.code).toBe('invalid_params');
  });
});

describe('Meta Ad Library: eu_total_reach and scheduled stops', () => {
  const ads = (now: number) =>
    createMetaAdLibraryProvider({
      accessToken: 'token',
      baseUrl: `${fake.url}/${FIXTURES.graph.version}`,
      retryDelayMs: 1,
      now: () => now,
    });
  const NOW = Date.parse('2026-12-07T10:00:00Z');
  const ad = (id: string, extra: Record<string, unknown>) => ({
    id,
    ad_creation_time: '2026-11-01',
    ad_delivery_start_time: '2026-11-02',
    page_id: '100000000000001',
    page_name: 'Example Org',
    impressions: { lower_bound: '1000', upper_bound: '1999' },
    ...extra,
  });

  it('a stop date after today is active, today is active, before today inactive; reach from eu_total_reach, impressions as before', async () => {
    fake.misbehave({
      path: `/${FIXTURES.graph.version}/ads_archive`,
      kind: 'reply',
      reply: {
        status: 200,
        body: {
          data: [
            ad('1', { ad_delivery_stop_time: '2026-12-31', eu_total_reach: 45120 }),
            ad('2', { ad_delivery_stop_time: '2026-12-07' }),
            ad('3', { ad_delivery_stop_time: '2026-12-06', eu_total_reach: 12 }),
            ad('4', {}),
          ],
        },
      },
    });
    const items = (await collect(ads(NOW), request('facebook', 'adlibrary_search', 'vote', 4))).items as AdItem[];
    expect(items.map((i) => [i.id, i.status, i.last_shown_at, i.reach, i.impressions])).toEqual([
      ['1', 'active', '2026-12-31T00:00:00.000Z', '45120', '1000-1999'],
      ['2', 'active', '2026-12-07T00:00:00.000Z', null, '1000-1999'],
      ['3', 'inactive', '2026-12-06T00:00:00.000Z', '12', '1000-1999'],
      ['4', 'active', null, null, '1000-1999'],
    ]);
    expect(fake.requests[0]?.query.fields?.split(',')).toContain('eu_total_reach');
  });

  it('the fake serves eu_total_reach for EU ads, and the adapter keeps it as reach', async () => {
    const items = (await collect(ads(Date.now()), request('facebook', 'adlibrary_search', 'vote', 4))).items as AdItem[];
    const body = fake.requests[0]?.response?.body as { data: Array<{ id: string; eu_total_reach?: number }> };
    for (const item of items) {
      const raw = body.data.find((d) => d.id === item.id);
      expect(item.reach).toBe(raw?.eu_total_reach === undefined ? null : String(raw.eu_total_reach));
    }
    expect(items.some((i) => i.reach !== null)).toBe(true);
  });
});

describe('the vendor: Instagram comments name their post, the Facebook ad its EU reach', () => {
  const S = FIXTURES.scrapecreators;
  const vendor = () => createScrapeCreatorsProvider({ apiKey: 'key', baseUrl: `${fake.url}/scrapecreators`, retryDelayMs: 1 });

  it('parent_id is the media ID of the post, the `id` of the post item, by URL or shortcode', async () => {
    expect(instagramMediaId('DF5s0duxDts')).toBe('3565077699422862188');
    expect(instagramMediaId(`https://www.instagram.com/reel/${S.igPost.shortcode}/`)).toBe(S.igPost.id);
    const url = `https://www.instagram.com/p/${S.igPost.shortcode}/`;
    const post = (await collect(vendor(), request('instagram', 'post', url, 1))).items[0];
    const comments = (await collect(vendor(), request('instagram', 'comments', url, 60))).items as CommentItem[];
    expect(comments.length).toBe(60);
    for (const c of comments) expect(c.parent_id).toBe(post?.id);
  });

  it('the Facebook ad carries aaa_info.eu_total_reach as reach', async () => {
    const item = (await collect(vendor(), request('facebook', 'adlibrary_ad', S.adId, 1))).items[0] as AdItem;
    const body = fake.requests.find((r) => r.path.endsWith('/adLibrary/ad'))?.response?.body as { aaa_info: { eu_total_reach: number } };
    expect(body.aaa_info.eu_total_reach).toBe(1657);
    expect(item.reach).toBe('1657');
  });
});
