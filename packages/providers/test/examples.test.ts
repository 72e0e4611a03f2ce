import type { Platform } from '@sdx/catalog';
import {
  FIXTURES,
  exampleWire,
  fakeTikTokVideoId,
  reference,
  referenceExamples,
  repairedText,
  startFakeUpstream,
  type FakeUpstream,
  type ReferenceExample,
} from '@sdx/fake-upstream';
import {
  createMetaAdLibraryProvider,
  createScrapeCreatorsProvider,
  createTikTokProvider,
  createXProvider,
  createYouTubeProvider,
  type AdItem,
  type Item,
  type Provider,
} from '@sdx/providers';
import { EXAMPLE_ITEMS } from './example-items';
import { collect, failure, request } from './helpers';

/**
 * Issue 38, item 2: the platforms' published example replies (and documented error replies) are
 * references too. Each one kept in packages/fake-upstream/references/examples/ is replayed by the
 * fake to the adapter that calls its endpoint, so it is parsed by the adapter's own mapper: a
 * reply must map to items, an error reply to its documented error code.
 */
type Example = ReferenceExample & { file: string };

const examples = referenceExamples();

let fake: FakeUpstream;
beforeAll(async () => {
  fake = await startFakeUpstream();
});
afterAll(() => fake.close());
beforeEach(() => fake.reset());

const S = FIXTURES.scrapecreators;
type Case = { provider: () => Provider; prefix: string; platform: Platform; operation: string; target: string; limit?: number };

function caseOf(e: Example): Case {
  const tiktok = () =>
    createTikTokProvider({ clientKey: 'awfakeclientkey123', clientSecret: 'fake-client-secret-0123', baseUrl: fake.url, retryDelayMs: 1 });
  const x = () => createXProvider({ bearerToken: 'token', baseUrl: fake.url, retryDelayMs: 1 });
  const youtube = () => createYouTubeProvider({ apiKey: 'key', baseUrl: `${fake.url}/youtube/v3`, retryDelayMs: 1 });
  const ads = () =>
    createMetaAdLibraryProvider({ accessToken: 'token', baseUrl: `${fake.url}/${FIXTURES.graph.version}`, retryDelayMs: 1 });
  const vendor = () => createScrapeCreatorsProvider({ apiKey: 'key', baseUrl: `${fake.url}/scrapecreators`, retryDelayMs: 1 });
  const vendorCases: Record<string, [Platform, string, string, number?]> = {
    '/v1/tiktok/search/users': ['tiktok', 'search_users', 'dance', 1],
    '/v1/tiktok/get-trending-feed': ['tiktok', 'trending', 'US', 1],
    '/v1/instagram/profile': ['instagram', 'tagged', S.igUser.handle, 1],
    '/v1/instagram/user/tagged-posts': ['instagram', 'tagged', S.igUser.handle, 1],
    '/v1/instagram/post': ['instagram', 'post', `https://www.instagram.com/p/${S.igPost.shortcode}/`],
    '/v2/instagram/media/transcript': ['instagram', 'transcript', `https://www.instagram.com/reel/${S.igPost.shortcode}/`],
    '/v1/instagram/search/profiles': ['instagram', 'search_users', 'fitness coach', 1],
    '/v2/instagram/post/comments': ['instagram', 'comments', `https://www.instagram.com/p/${S.igPost.shortcode}/`, 1],
    '/v1/instagram/user/highlights': ['instagram', 'highlights', S.igUser.handle],
    '/v1/instagram/user/highlight/detail': ['instagram', 'highlight_items', S.highlightId],
    '/v1/youtube/channel/shorts': ['youtube', 'shorts', S.ytChannel.handle, 1],
    '/v1/youtube/video/transcript': ['youtube', 'transcript', 'fvch0000001'],
    '/v1/facebook/profile/reels': ['facebook', 'reels', S.fbPage, 1],
    '/v1/facebook/post/transcript': ['facebook', 'transcript', 'https://www.facebook.com/fakepage/videos/1234567890'],
    '/v1/facebook/adLibrary/ad': ['facebook', 'adlibrary_ad', S.adId],
    '/v1/facebook/adLibrary/ad/transcript': ['facebook', 'adlibrary_ad_transcript', S.adId],
    '/v1/facebook/adLibrary/search/companies': ['facebook', 'adlibrary_companies', 'nike'],
    '/v1/twitter/tweet/transcript': ['twitter', 'transcript', 'https://x.com/fakeuser/status/1800000000000000003'],
  };
  const vc = vendorCases[e.endpoint];
  if (e.file === 'scrapecreators.json' && vc) {
    return { provider: vendor, prefix: `/scrapecreators${e.endpoint}`, platform: vc[0], operation: vc[1], target: vc[2], limit: vc[3] };
  }
  switch (e.endpoint) {
    case '/2/users/by/username/{username}':
      return { provider: x, prefix: '/2/users/by/username/', platform: 'twitter', operation: 'profile', target: 'TwitterDev' };
    case '/2/tweets/{id}':
      return {
        provider: x,
        prefix: '/2/tweets/1346889436626259968',
        platform: 'twitter',
        operation: 'post',
        target: '1346889436626259968',
      };
    case '/2/tweets/search/recent':
      return {
        provider: x,
        prefix: '/2/tweets/search/recent',
        platform: 'twitter',
        operation: 'search',
        target: 'from:TwitterDev',
        limit: 10,
      };
    case '/v2/research/video/query/':
      return { provider: tiktok, prefix: e.endpoint, platform: 'tiktok', operation: 'search', target: 'avocado', limit: 2 };
    case '/v2/oauth/token/':
      return { provider: tiktok, prefix: e.endpoint, platform: 'tiktok', operation: 'profile', target: FIXTURES.tiktok.user.username };
    case '/v2/research/user/info/':
      return { provider: tiktok, prefix: e.endpoint, platform: 'tiktok', operation: 'profile', target: 'test_user' };
    case '/v2/research/video/comment/list/':
      return { provider: tiktok, prefix: e.endpoint, platform: 'tiktok', operation: 'comments', target: fakeTikTokVideoId(3), limit: 1 };
    case '/v2/research/adlib/ad/query/':
      return { provider: tiktok, prefix: e.endpoint, platform: 'tiktok', operation: 'adlibrary_search', target: 'coffee', limit: 2 };
    case '/v2/research/adlib/ad/detail/':
      return { provider: tiktok, prefix: e.endpoint, platform: 'tiktok', operation: 'adlibrary_ad', target: '1923845247192304' };
    case '/ads_archive':
      return {
        provider: ads,
        prefix: `/${FIXTURES.graph.version}/ads_archive`,
        platform: 'facebook',
        operation: 'adlibrary_search',
        target: 'vote',
        limit: 1,
      };
    case '/youtube/v3/channels':
      return { provider: youtube, prefix: e.endpoint, platform: 'youtube', operation: 'profile', target: '@fakechannel' };
    case '/youtube/v3/commentThreads':
      return { provider: youtube, prefix: e.endpoint, platform: 'youtube', operation: 'comments', target: 'fvcd0000001', limit: 10 };
  }
  throw new Error(`no adapter case for ${e.file} ${e.endpoint}: add one`);
}

const validItem = (i: Item): boolean => typeof i.id === 'string' && i.id.length > 0 && i.id !== 'undefined' && i.id !== 'null';

describe.each(examples.map((e) => [e.id, e] as const))('%s', (_id, e) => {
  it(`is parsed by the adapter's mapper (${e.page})`, async () => {
    const c = caseOf(e);
    fake.misbehave({ path: c.prefix, kind: 'reply', reply: { status: e.status, body: exampleWire(e) }, times: e.expect_error ? 10 : 1 });
    // The vendor's profile reply only gives `tagged` the account's ID: its next call uses it.
    const tagged = examples.find((x) => x.endpoint === '/v1/instagram/user/tagged-posts');
    if (e.endpoint === '/v1/instagram/profile' && tagged)
      fake.misbehave({ path: '/scrapecreators/v1/instagram/user/tagged-posts', kind: 'reply', reply: { status: 200, body: tagged.body } });
    const req = request(c.platform, c.operation, c.target, c.limit ?? 1);
    if (e.expect_error) {
      expect((await failure(c.provider(), req)).code).toBe(e.expect_error);
      return;
    }
    const { items } = await collect(c.provider(), req);
    expect(items.length).toBeGreaterThan(0);
    for (const item of items) expect(validItem(item)).toBe(true);
    // Field by field: the example's own item, every field with its value (example-items.ts).
    if (e.id !== 'tiktok.token') expect(items[0]).toEqual(EXAMPLE_ITEMS[e.id]);
    if (e.id === 'tiktok.token') {
      // The example's token was taken and used: the fake did not know it, so the adapter refreshed once.
      expect(fake.requests.map((r) => r.path)).toEqual([
        '/v2/oauth/token/',
        '/v2/research/user/info/',
        '/v2/oauth/token/',
        '/v2/research/user/info/',
      ]);
    }
    if (e.endpoint === '/v1/instagram/profile') {
      const id = String((e.body as { data: { user: { id: unknown } } }).data.user.id);
      expect(fake.requests.find((r) => r.path.endsWith('/tagged-posts'))?.query.user_id).toBe(id);
    }
  });
});

describe('where an example and its field table disagree, the adapter follows the example', () => {
  const byId = (id: string): Example => examples.find((e) => e.id === id) as Example;

  it("TikTok video query: has_more pages on with the reply's cursor and search_id", async () => {
    const e = byId('tiktok.video.query');
    fake.misbehave({ path: e.endpoint, kind: 'reply', reply: { status: 200, body: exampleWire(e) } });
    const tiktok = createTikTokProvider({ clientKey: 'k1234567', clientSecret: 's1234567', baseUrl: fake.url });
    await collect(tiktok, request('tiktok', 'search', 'avocado', 2));
    const bodies = fake.requests.filter((r) => r.path === e.endpoint).map((r) => r.body as Record<string, unknown>);
    expect(bodies[1]).toMatchObject({ cursor: 100, search_id: '7201388525814961198' });
  });

  it('TikTok ad query: has_more "true" pages on with the reply\'s search_id', async () => {
    const e = byId('tiktok.ad.query');
    fake.misbehave({ path: e.endpoint, kind: 'reply', reply: { status: 200, body: exampleWire(e) } });
    const tiktok = createTikTokProvider({ clientKey: 'k1234567', clientSecret: 's1234567', baseUrl: fake.url });
    await collect(tiktok, request('tiktok', 'adlibrary_search', 'coffee', 2));
    const bodies = fake.requests.filter((r) => r.path === e.endpoint).map((r) => r.body as Record<string, unknown>);
    expect(bodies[1]?.search_id).toBe('2837438294054038');
  });

  it("TikTok ad detail: countries from ad_group.target (the example's name) and the reach by country", async () => {
    const e = byId('tiktok.ad.detail');
    fake.misbehave({ path: e.endpoint, kind: 'reply', reply: { status: 200, body: exampleWire(e) } });
    const tiktok = createTikTokProvider({ clientKey: 'k1234567', clientSecret: 's1234567', baseUrl: fake.url });
    const ad = (await collect(tiktok, request('tiktok', 'adlibrary_ad', '1923845247192304', 1))).items[0] as AdItem;
    expect(ad.countries).toEqual(['IT', 'GB']);
  });

  it('X: a tweet\'s created_at in the example\'s form ("Wed Jan 06 18:40:40 +0000 2021")', async () => {
    const e = byId('x.tweet');
    fake.misbehave({ path: '/2/tweets/1346889436626259968', kind: 'reply', reply: { status: 200, body: exampleWire(e) } });
    const x = createXProvider({ bearerToken: 'token', baseUrl: fake.url });
    const post = (await collect(x, request('twitter', 'post', '1346889436626259968', 1))).items[0];
    expect(post?.published_at).toBe('2021-01-06T18:40:40.000Z');
  });

  it('the fake sends both forms within a run, from a seed it prints', async () => {
    const seeded = await startFakeUpstream({ seed: 7 });
    try {
      expect(seeded.seed).toBe(7);
      const tiktok = createTikTokProvider({ clientKey: 'k1234567', clientSecret: 's1234567', baseUrl: seeded.url });
      await collect(tiktok, request('tiktok', 'search', 'avocado', 200));
      const forms = new Set(
        seeded.requests
          .filter((r) => r.path === '/v2/research/video/query/')
          .map((r) => typeof (r.response?.body as { data: { has_more: unknown } }).data.has_more),
      );
      expect([...forms].sort()).toEqual(['boolean', 'string']);
    } finally {
      await seeded.close();
    }
  });
});

describe("every kept example is the page's own", () => {
  const replies = examples.filter((e) => e.status === 200);

  it('each success reply has its listed item, and each listed item its example', () => {
    expect(Object.keys(EXAMPLE_ITEMS).sort()).toEqual(
      replies
        .filter((e) => e.id !== 'tiktok.token')
        .map((e) => e.id)
        .sort(),
    );
  });

  it('a transcribed page example is the published text byte for byte, changed only by its listed repairs', () => {
    const transcribed = replies.filter((e) => e.file === 'tiktok.json' && e.id !== 'tiktok.token');
    expect(transcribed.map((e) => e.id).sort()).toEqual([
      'tiktok.ad.detail',
      'tiktok.ad.query',
      'tiktok.comment.list',
      'tiktok.user.info',
      'tiktok.video.query',
    ]);
    for (const e of transcribed) {
      expect(e).toMatchObject({
        page: expect.stringMatching(/^https:\/\/developers\.tiktok\.com\/doc\//),
        read: expect.stringMatching(/^\d{4}-\d{2}-\d{2}$/),
        copy: expect.any(String),
      });
      expect(JSON.parse(repairedText(e) ?? 'null')).toEqual(e.body);
      // Each repair changes something, and only what the note names.
      for (const [from, to] of e.repairs ?? []) expect(from).not.toBe(to);
    }
    // Query Ads is sent as published: no repair, the example's own spellings.
    const query = transcribed.find((e) => e.id === 'tiktok.ad.query');
    expect(query?.repairs).toBeUndefined();
    expect(query?.published).toContain('"unique_user_seen": "11K"');
    expect(query?.published).toContain('"buisness_id": 3847236290405');
    // The fake replays the repaired text itself: IDs beyond 2^53 keep their digits.
    expect(String(exampleWire(transcribed.find((e) => e.id === 'tiktok.video.query') as Example))).toContain(
      '"video_id": 702874395068494965',
    );
  });

  it('an example of a machine-readable reference is its example or sample as the document has it', () => {
    const schemas = (reference('x-openapi').components as { schemas: Record<string, { example?: unknown }> }).schemas;
    const byId = (id: string) => examples.find((e) => e.id === id)?.body as { data: unknown };
    expect(byId('x.user').data).toEqual(schemas.User?.example);
    expect(byId('x.tweet').data).toEqual(schemas.Tweet?.example);
    expect((byId('x.search').data as unknown[])[0]).toEqual(schemas.Tweet?.example);
    for (const e of replies.filter((x) => x.file === 'scrapecreators.json')) {
      expect(e.body).toEqual((reference('scrapecreators-endpoints')[e.endpoint] as { sampleResponse: unknown }).sampleResponse);
    }
  });
});
