import { FIXTURES, fakeTikTokAdId, fakeTikTokVideoId, startFakeUpstream, type FakeUpstream } from '@sdx/fake-upstream';
import {
  createFacebookPagesProvider,
  createMetaAdLibraryProvider,
  createScrapeCreatorsProvider,
  createTikTokProvider,
  type AdItem,
  type PostItem,
} from '@sdx/providers';
import { collect, request } from './helpers';

/**
 * Issue 38, item 1: what a read of the platforms' published pages (examples as well as field
 * tables) found going wrong with real data. Each test failed before its fix.
 * The fakes here send the published examples' forms (`forms: 'example'`) where they differ from
 * the field tables, so the adapters meet what the platforms actually send.
 */
const G = FIXTURES.graph;
const SC = FIXTURES.scrapecreators;

let fake: FakeUpstream;
beforeAll(async () => {
  fake = await startFakeUpstream({ forms: 'example' });
});
afterAll(() => fake.close());
beforeEach(() => fake.reset());

const tiktok = () =>
  createTikTokProvider({ clientKey: 'awfakeclientkey123', clientSecret: 'fake-client-secret-0123', baseUrl: fake.url, retryDelayMs: 10 });
const sent = (path: string) => fake.requests.filter((r) => r.path === path);

describe('TikTok: has_more as the examples send it (the string "true")', () => {
  it('the fake sends has_more as a string, as the documented examples do', async () => {
    await collect(tiktok(), request('tiktok', 'adlibrary_search', 'coffee', 10));
    const reply = sent('/v2/research/adlib/ad/query/')[0]?.response?.body as { data: { has_more: unknown } };
    expect(reply.data.has_more).toBe('true');
  });

  it('ad searches page on past page 1', async () => {
    const { items } = await collect(tiktok(), request('tiktok', 'adlibrary_search', 'coffee', 100));
    expect(items).toHaveLength(100);
    expect(new Set(items.map((i) => i.id)).size).toBe(100);
    expect(sent('/v2/research/adlib/ad/query/')).toHaveLength(2);
  });

  it('video queries page within a window (cursor and search_id of the reply)', async () => {
    const { items } = await collect(tiktok(), request('tiktok', 'search', 'coffee', 150));
    expect(items).toHaveLength(150);
    expect(new Set(items.map((i) => i.id)).size).toBe(150);
    const bodies = sent('/v2/research/video/query/').map((r) => r.body as Record<string, unknown>);
    expect(bodies[1]).toMatchObject({ cursor: 100, start_date: bodies[0]?.start_date });
    expect(typeof bodies[1]?.search_id).toBe('string');
  });

  it('comments page on past page 1', async () => {
    const { items } = await collect(tiktok(), request('tiktok', 'comments', fakeTikTokVideoId(3), 150));
    expect(items).toHaveLength(150);
    expect(sent('/v2/research/video/comment/list/')).toHaveLength(2);
  });
});

describe('TikTok: an expired ad search_id', () => {
  it('a resumed attempt whose saved search_id expired restarts the query and skips what was delivered', async () => {
    const first = await collect(tiktok(), request('tiktok', 'adlibrary_search', 'coffee', 100));
    const saved = first.pages[0]?.cursor;
    expect(saved).toBeTruthy();
    fake.reset();
    fake.misbehave({ path: '/v2/research/adlib/ad/query/', kind: 'search_expired' });
    const resumed = await collect(
      tiktok(),
      request('tiktok', 'adlibrary_search', 'coffee', 100, { attempt: 2, resumeCursor: saved ?? null }),
    );
    expect(resumed.items.map((i) => i.id)).toEqual(first.items.slice(50).map((i) => i.id));
    const bodies = sent('/v2/research/adlib/ad/query/').map((r) => r.body as Record<string, unknown>);
    expect(bodies[0]?.search_id).toBeDefined();
    expect(bodies[1]?.search_id).toBeUndefined();
  });
});

describe('TikTok ads: countries', () => {
  it("the ad detail asks for the targeting fields and maps the ad's countries", async () => {
    const { items } = await collect(tiktok(), request('tiktok', 'adlibrary_ad', fakeTikTokAdId(3), 1));
    const ad = items[0] as AdItem;
    expect(String(sent('/v2/research/adlib/ad/detail/')[0]?.query.fields)).toContain('ad_group.targeting_info');
    expect(ad.countries.length).toBeGreaterThan(0);
    expect(ad.countries.every((c) => /^[A-Z]{2}$/.test(c))).toBe(true);
  });

  it('ad search results carry the countries of their reach', async () => {
    const { items } = await collect(tiktok(), request('tiktok', 'adlibrary_search', 'coffee', 5));
    for (const ad of items as AdItem[]) expect(ad.countries.length).toBeGreaterThan(0);
  });
});

describe("Meta Ad Library: each ad's own countries", () => {
  it('asks for the reach and target-location fields and maps them, not META_AD_REACHED_COUNTRIES', async () => {
    const ads = createMetaAdLibraryProvider({ accessToken: 'token', baseUrl: `${fake.url}/${G.version}`, reachedCountries: ['US'] });
    const { items } = await collect(ads, request('facebook', 'adlibrary_search', 'coffee', 10));
    const fields = String(sent('/v26.0/ads_archive')[0]?.query.fields).split(',');
    expect(fields).toEqual(expect.arrayContaining(['target_locations', 'age_country_gender_reach_breakdown']));
    const countries = (items as AdItem[]).map((a) => a.countries);
    expect(countries.some((c) => c.length > 0)).toBe(true);
    expect(countries.some((c) => c.join() !== 'US')).toBe(true);
    for (const c of countries) expect(c.every((x) => /^[A-Z]{2}$/.test(x))).toBe(true);
  });
});

describe("the vendor's Facebook ad: per-ad countries", () => {
  it('maps targetedOrReachedCountries and the reach breakdown', async () => {
    const vendor = createScrapeCreatorsProvider({ apiKey: 'key', baseUrl: `${fake.url}/scrapecreators` });
    const ad = (await collect(vendor, request('facebook', 'adlibrary_ad', SC.adId, 1))).items[0] as AdItem;
    expect(ad.countries).toEqual(['DE', 'FR', 'HR']);
  });
});

describe("the vendor's Facebook reels paging", () => {
  it('sends next_page_id and cursor together from page 2 on', async () => {
    const vendor = createScrapeCreatorsProvider({ apiKey: 'key', baseUrl: `${fake.url}/scrapecreators` });
    const { items } = await collect(vendor, request('facebook', 'reels', SC.fbPage, 30));
    expect(items).toHaveLength(30);
    const queries = sent('/scrapecreators/v1/facebook/profile/reels').map((r) => r.query);
    expect(queries).toHaveLength(3);
    expect(queries[0]?.cursor).toBeUndefined();
    for (const q of queries.slice(1)) {
      expect(q.cursor).toBeTruthy();
      expect(q.next_page_id).toBeTruthy();
    }
  });
});

describe('Facebook pfbid post permalinks', () => {
  const pages = () =>
    createFacebookPagesProvider({
      accessToken: 'EAAFAKEgraphAccessToken0123456789ZZ',
      baseUrl: `${fake.url}/${G.version}`,
      retryDelayMs: 10,
    });

  it('a post permalink as Facebook shows it today (…/posts/pfbid0…) names the post', async () => {
    const listed = (await collect(pages(), request('facebook', 'posts', G.page.username, 3))).items as PostItem[];
    const permalink = listed[2]?.url ?? '';
    expect(permalink).toMatch(/\/posts\/pfbid0/);
    const post = (await collect(pages(), request('facebook', 'post', permalink, 1))).items[0];
    expect(post?.id).toBe(listed[2]?.id);
  });

  it.each([
    ['the bare pfbid ID', (pfbid: string) => pfbid],
    ['a permalink.php link with no page id', (pfbid: string) => `https://www.facebook.com/permalink.php?story_fbid=${pfbid}`],
  ])('%s is accepted, not invalid_target', async (_name, form) => {
    const listed = (await collect(pages(), request('facebook', 'posts', G.page.username, 2))).items as PostItem[];
    const pfbid = /pfbid0[A-Za-z0-9]+/.exec(listed[1]?.url ?? '')?.[0] ?? '';
    expect(pfbid).not.toBe('');
    const post = (await collect(pages(), request('facebook', 'post', form(pfbid), 1))).items[0];
    expect(post?.id).toBe(listed[1]?.id);
    const comments = await collect(pages(), request('facebook', 'comments', form(pfbid), 5));
    expect(comments.items).toHaveLength(5);
  });
});
