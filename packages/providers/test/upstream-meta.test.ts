import { FIXTURES, startFakeUpstream, type FakeUpstream } from '@sdx/fake-upstream';
import {
  createFacebookPagesProvider,
  createInstagramProvider,
  createMetaAdLibraryProvider,
  type PostItem,
  type Provider,
  type ProviderError,
} from '@sdx/providers';
import { collect, failure, request } from './helpers';

const TOKEN = 'EAAFAKEgraphAccessToken0123456789ZZ';
const G = FIXTURES.graph;

let fake: FakeUpstream;
let ads: Provider;
let instagram: Provider;
let pages: Provider;

beforeAll(async () => {
  fake = await startFakeUpstream();
});
afterAll(() => fake.close());
beforeEach(() => {
  fake.reset();
  const base = { accessToken: TOKEN, baseUrl: `${fake.url}/${G.version}`, retryDelayMs: 10 };
  ads = createMetaAdLibraryProvider(base);
  instagram = createInstagramProvider({ ...base, businessAccountId: G.igUserId });
  pages = createFacebookPagesProvider(base);
});

const under = (suffix: string) => fake.requests.filter((r) => r.path === `/${G.version}${suffix}`);

describe('meta ad library', () => {
  it('adlibrary_search pages by after cursors to exactly the limit', async () => {
    const { items, pages: got } = await collect(ads, request('facebook', 'adlibrary_search', 'running shoes', 200));
    expect(items).toHaveLength(200);
    expect(got.map((p) => p.items.length)).toEqual([100, 100]);
    const sent = under('/ads_archive');
    expect(sent.map((r) => [r.query.limit, r.query.after === undefined])).toEqual([
      ['100', true],
      ['100', false],
    ]);
    expect(sent[0]?.query).toMatchObject({ search_terms: 'running shoes', ad_reached_countries: '["ALL"]', ad_type: 'ALL' });
  });

  it('adlibrary_company_ads: limit 230 of 250 → 100, 100, 30; unknown page → no ads', async () => {
    const { items } = await collect(ads, { ...request('facebook', 'adlibrary_company_ads', G.adPageId, 200), limit: 230 });
    expect(items).toHaveLength(230);
    expect(under('/ads_archive').map((r) => r.query.limit)).toEqual(['100', '100', '30']);
    fake.reset();
    const none = await collect(ads, request('facebook', 'adlibrary_company_ads', '999999999', 50));
    expect(none.items).toHaveLength(0);
    expect(none.pages).toEqual([{ items: [], cursor: null }]);
  });

  it('maps archived ads; the snapshot URL (it embeds the token) is not used', async () => {
    const ad = (await collect(ads, request('facebook', 'adlibrary_company_ads', G.adPageId, 3))).items[1];
    expect(ad).toMatchObject({
      kind: 'ad',
      platform: 'facebook',
      id: '200000000000001',
      advertiser_id: G.adPageId,
      advertiser_name: G.page.name,
      status: 'inactive',
      platforms: ['facebook', 'instagram'],
      spend: '100-199 USD',
      impressions: '1000-4999',
      url: 'https://www.facebook.com/ads/library/?id=200000000000001',
    });
    expect(JSON.stringify(ad)).not.toContain('access_token');
  });

  it('throttling → rate_limited, retry after X-Business-Use-Case-Usage estimated_time_to_regain_access', async () => {
    fake.misbehave({ path: `/${G.version}/ads_archive`, kind: 'rate_limit', regainMinutes: 7 });
    expect(await failure(ads, request('facebook', 'adlibrary_search', 'shoes', 10))).toMatchObject({
      code: 'rate_limited',
      retryable: true,
      retryAfterMs: 7 * 60_000,
    });
    fake.misbehave({ path: `/${G.version}/ads_archive`, kind: 'quota', regainMinutes: 60 });
    expect(await failure(ads, request('facebook', 'adlibrary_search', 'shoes', 10))).toMatchObject({
      code: 'rate_limited',
      retryable: true,
      retryAfterMs: 3_600_000,
    });
  });

  it('transient errors, in a 5xx or a 200 body → upstream_unavailable; a retry completes', async () => {
    fake.misbehave({ path: `/${G.version}/ads_archive`, kind: 'server_error' });
    expect(await failure(ads, request('facebook', 'adlibrary_search', 'shoes', 10))).toMatchObject({
      code: 'upstream_unavailable',
      retryable: true,
    });
    fake.misbehave({ path: `/${G.version}/ads_archive`, kind: 'errors_200' });
    expect(await failure(ads, request('facebook', 'adlibrary_search', 'shoes', 10))).toMatchObject({
      code: 'upstream_unavailable',
      retryable: true,
    });
    expect((await collect(ads, request('facebook', 'adlibrary_search', 'shoes', 10, { attempt: 2 }))).items).toHaveLength(10);
  });

  it('an invalid token → upstream_auth; the token is in no error and no URL', async () => {
    const bad = createMetaAdLibraryProvider({ accessToken: G.badToken, baseUrl: `${fake.url}/${G.version}` });
    expect(await failure(bad, request('facebook', 'adlibrary_search', 'shoes', 10))).toMatchObject({
      code: 'upstream_auth',
      retryable: false,
    });
    const errors: ProviderError[] = [];
    for (const kind of ['rate_limit', 'quota', 'server_error', 'token_invalid'] as const) {
      fake.misbehave({ path: `/${G.version}/`, kind });
      errors.push(await failure(ads, request('facebook', 'adlibrary_search', 'shoes', 10)));
    }
    expect(errors.map((e) => e.code)).toEqual(['rate_limited', 'rate_limited', 'upstream_unavailable', 'upstream_auth']);
    for (const error of errors) expect(`${error.message} ${JSON.stringify(error.context)}`).not.toContain(TOKEN);
    expect(JSON.stringify(fake.requests)).not.toContain(TOKEN);
  });
});

describe('instagram graph api', () => {
  it('profile through business_discovery', async () => {
    const profile = (await collect(instagram, request('instagram', 'profile', 'fakebrand', 1))).items[0];
    expect(profile).toMatchObject({
      kind: 'profile',
      platform: 'instagram',
      id: G.igBusiness.id,
      username: 'fakebrand',
      posts_count: G.igBusiness.media,
      followers_count: 120_000,
      following_count: 80,
    });
    expect(under(`/${G.igUserId}`)[0]?.query.fields).toMatch(/^business_discovery\.username\(fakebrand\)\{/);
  });

  it('posts page through the nested media edge to exactly the limit', async () => {
    const { items } = await collect(instagram, request('instagram', 'posts', 'fakebrand', 75));
    expect(items).toHaveLength(75);
    const fields = under(`/${G.igUserId}`).map((r) => r.query.fields ?? '');
    expect(fields).toHaveLength(2);
    expect(fields[0]).toContain('media.limit(50){');
    expect(fields[1]).toMatch(/media\.limit\(25\)\.after\([^)]+\)\{/);
    expect(items[1]).toMatchObject({ kind: 'post', platform: 'instagram', username: 'fakebrand', media_type: 'carousel' });
    expect(items[0]).toMatchObject({ media_type: 'reel' });
  });

  it('reels keep only REELS media', async () => {
    const { items } = await collect(instagram, request('instagram', 'reels', 'fakebrand', 40));
    expect(items).toHaveLength(40);
    expect(new Set(items.map((i) => (i as PostItem).media_type))).toEqual(new Set(['reel']));
  });

  it('hashtag: ig_hashtag_search, then top_media', async () => {
    const { items } = await collect(instagram, request('instagram', 'hashtag', '#FakeHashtag', 50));
    expect(items).toHaveLength(50);
    expect(under('/ig_hashtag_search').map((r) => r.query)).toEqual([{ user_id: G.igUserId, q: 'FakeHashtag' }]);
    expect(under(`/${G.igHashtag.id}/top_media`).map((r) => r.query.limit)).toEqual(['50']);
    expect(items[0]).toMatchObject({ kind: 'post', platform: 'instagram', username: null });
    expect((items[0] as PostItem).hashtags).toEqual(['fakehashtag']);
  });

  it('posts resume from a saved cursor', async () => {
    const full = await collect(instagram, request('instagram', 'posts', 'fakebrand', 75));
    fake.reset();
    const resumed = await collect(
      instagram,
      request('instagram', 'posts', 'fakebrand', 75, { resumeCursor: full.pages[0]?.cursor ?? null, attempt: 2 }),
    );
    expect(resumed.items.map((i) => i.id)).toEqual(full.items.slice(50).map((i) => i.id));
    expect(fake.requests).toHaveLength(1);
  });

  it('unknown account → target_not_found; unknown hashtag → target_not_found', async () => {
    expect(await failure(instagram, request('instagram', 'posts', 'somebodyelse', 10))).toMatchObject({
      code: 'target_not_found',
      retryable: false,
    });
    expect(await failure(instagram, request('instagram', 'hashtag', 'nohashtaghere', 10))).toMatchObject({ code: 'target_not_found' });
  });
});

describe('facebook pages', () => {
  it('profile and posts', async () => {
    const profile = (await collect(pages, request('facebook', 'profile', 'https://www.facebook.com/fakepage', 1))).items[0];
    expect(profile).toMatchObject({
      kind: 'profile',
      platform: 'facebook',
      id: G.page.id,
      username: 'fakepage',
      followers_count: 47_000,
      verified: true,
    });
    fake.reset();
    const { items } = await collect(pages, request('facebook', 'posts', 'fakepage', 150));
    expect(items).toHaveLength(150);
    expect(under(`/${G.page.id}/posts`).map((r) => r.query.limit)).toEqual(['100', '50']);
    expect(items[0]).toMatchObject({
      kind: 'post',
      platform: 'facebook',
      id: `${G.page.id}_900000000`,
      username: 'fakepage',
      media_type: 'photo',
    });
    expect((items[0] as PostItem).metrics.comments).toBe(G.page.commentsPerPost);
  });

  it('post by URL and comments to the limit', async () => {
    const post = (await collect(pages, request('facebook', 'post', 'https://www.facebook.com/fakepage/posts/900000007', 1))).items[0];
    expect(post).toMatchObject({ kind: 'post', id: `${G.page.id}_900000007` });
    fake.reset();
    const { items, pages: got } = await collect(pages, request('facebook', 'comments', `${G.page.id}_900000007`, 200));
    expect(items).toHaveLength(200);
    expect(got.at(-1)?.cursor).toBeNull();
    expect(under(`/${G.page.id}_900000007/comments`).map((r) => r.query.limit)).toEqual(['100', '100']);
    expect(items[0]).toMatchObject({ kind: 'comment', platform: 'facebook', parent_id: `${G.page.id}_900000007` });
    expect(items[0]?.url).toContain('comment_id=');
  });

  it('unknown page → target_not_found (code 100, subcode 33)', async () => {
    expect(await failure(pages, request('facebook', 'profile', 'nosuchpage', 1))).toMatchObject({
      code: 'target_not_found',
      retryable: false,
    });
  });

  it('page throttling (code 80001) → rate_limited after the Business Use Case estimate', async () => {
    fake.misbehave({ path: `/${G.version}/${G.page.id}/posts`, kind: 'rate_limit', regainMinutes: 3 });
    expect(await failure(pages, request('facebook', 'posts', 'fakepage', 10))).toMatchObject({
      code: 'rate_limited',
      retryAfterMs: 180_000,
    });
  });
});
