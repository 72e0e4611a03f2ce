import { FIXTURES, fakeTikTokVideoId, startFakeUpstream, type FakeUpstream } from '@sdx/fake-upstream';
import {
  GRAPH_DEFAULT_BASE_URL,
  createFacebookPagesProvider,
  createProviderRegistry,
  createSandboxProvider,
  createScrapeCreatorsProvider,
  createTikTokProvider,
  createXProvider,
  createYouTubeProvider,
  selectProviders,
  toPlatformResponse,
} from '@sdx/providers';
import { collect, failure, request } from './helpers';

/** The mistakes the faithful fakes revealed, each pinned by a test. */

let fake: FakeUpstream;
beforeAll(async () => {
  fake = await startFakeUpstream();
});
afterAll(() => fake.close());
beforeEach(() => fake.reset());

describe('X', () => {
  const x = () => createXProvider({ bearerToken: 'token', baseUrl: fake.url });

  it("a 400 invalid-request (type at the top level, errors[] without type) is the caller's bad query, not internal_error", async () => {
    const res = await fetch(`${fake.url}/2/tweets/search/recent?query=`, { headers: { authorization: 'Bearer t' } });
    const body = (await res.json()) as { type: string; errors: Array<Record<string, unknown>> };
    expect(res.status).toBe(400);
    expect(body.type).toBe('https://api.twitter.com/2/problems/invalid-request');
    expect(body.errors[0]?.type).toBeUndefined();
    expect(await failure(x(), request('twitter', 'search', '', 10))).toMatchObject({ code: 'invalid_target', retryable: false });
  });

  it('pay-per-use credits depleted (402) is quota_exceeded, not retryable', async () => {
    fake.misbehave({ path: '/2/users', kind: 'credits' });
    const error = await failure(x(), request('twitter', 'profile', 'fakeuser', 1));
    expect(error).toMatchObject({ code: 'quota_exceeded', retryable: false });
  });
});

describe('YouTube', () => {
  it('an invalid key (400 badRequest, details API_KEY_INVALID) is upstream_auth', async () => {
    const yt = createYouTubeProvider({ apiKey: FIXTURES.youtube.badKey, baseUrl: `${fake.url}/youtube/v3` });
    const error = await failure(yt, request('youtube', 'video', 'fvch0000001', 1));
    expect(error).toMatchObject({ code: 'upstream_auth', retryable: false });
  });

  it('/c/<name> URLs are resolved as custom URLs (search.list, then channels.list), never sent as handles', async () => {
    const yt = createYouTubeProvider({ apiKey: 'key', baseUrl: `${fake.url}/youtube/v3` });
    const { items } = await collect(yt, request('youtube', 'profile', 'https://www.youtube.com/c/FakeChannel', 1));
    expect(items[0]).toMatchObject({ id: FIXTURES.youtube.channel.id, username: FIXTURES.youtube.channel.handle });
    expect(fake.requests.map((r) => [r.path, r.query.type ?? r.query.id ?? r.query.forHandle])).toEqual([
      ['/youtube/v3/search', 'channel'],
      ['/youtube/v3/channels', FIXTURES.youtube.channel.id],
    ]);
    fake.reset();
    expect((await failure(yt, request('youtube', 'profile', 'https://www.youtube.com/c/SomeoneElse', 1))).code).toBe('target_not_found');
  });

  it('shorts come from the UUSH playlist only with YOUTUBE_SHORTS_PLAYLIST=1; otherwise the operation is unsupported', async () => {
    const sandbox = createSandboxProvider();
    const env = { PROVIDER_MODE: 'live', YOUTUBE_API_KEY: 'k', YOUTUBE_BASE_URL: `${fake.url}/youtube/v3` };
    expect(createProviderRegistry(selectProviders(env, { sandbox }).providers).isEnabled('youtube', 'shorts')).toBe(false);
    const on = createProviderRegistry(selectProviders({ ...env, YOUTUBE_SHORTS_PLAYLIST: '1' }, { sandbox }).providers);
    const provider = on.resolve('youtube', 'shorts');
    expect(provider).toBeDefined();
    const { items } = await collect(provider!, request('youtube', 'shorts', 'fakechannel', 200));
    expect(items).toHaveLength(FIXTURES.youtube.channel.shorts);
    expect(items.every((i) => i.source === 'official')).toBe(true);
  });
});

describe('Graph', () => {
  it('defaults to the current Graph API version', () => {
    expect(GRAPH_DEFAULT_BASE_URL).toBe('https://graph.facebook.com/v26.0');
    expect(FIXTURES.graph.version).toBe('v26.0');
  });

  it('code 100 subcode 33 (no such node, or one the token may not read) is target_not_found, as is an alias that names nothing (803); a refused token is upstream_auth', async () => {
    const pages = createFacebookPagesProvider({ accessToken: 'token', baseUrl: `${fake.url}/${FIXTURES.graph.version}` });
    fake.misbehave({ path: `/${FIXTURES.graph.version}/`, kind: 'permission' });
    expect(await failure(pages, request('facebook', 'profile', 'fakepage', 1))).toMatchObject({
      code: 'target_not_found',
      retryable: false,
      context: { error_code: 100, error_subcode: 33 },
    });
    expect((await failure(pages, request('facebook', 'profile', 'nosuchpage', 1))).code).toBe('target_not_found');
    fake.misbehave({ path: `/${FIXTURES.graph.version}/`, kind: 'token_invalid' });
    expect(await failure(pages, request('facebook', 'profile', 'fakepage', 1))).toMatchObject({
      code: 'upstream_auth',
      retryable: false,
      context: { error_code: 190 },
    });
  });
});

describe('TikTok', () => {
  it('an expired search_id restarts the window without it instead of failing', async () => {
    const tiktok = createTikTokProvider({ clientKey: 'ck', clientSecret: 'cs', baseUrl: fake.url, lookbackDays: 60 });
    // Keyword results fill the first 30-day window beyond one page of 100: page 2 needs the search_id.
    const full = await collect(tiktok, request('tiktok', 'search', 'dance', 150));
    expect(full.pages[0]?.cursor).toMatch(/\|100\|\d+/);
    fake.reset();
    fake.misbehave({ path: '/v2/research/video/query/', kind: 'search_expired', times: 1 });
    const resumed = await collect(
      tiktok,
      request('tiktok', 'search', 'dance', 150, { resumeCursor: full.pages[0]?.cursor ?? null, attempt: 2 }),
    );
    expect(resumed.items.map((i) => i.id)).toEqual(full.items.slice(100).map((i) => i.id));
    const queries = fake.requests
      .filter((r) => r.path === '/v2/research/video/query/')
      .map((r) => (r.body as { search_id?: string }).search_id);
    expect(queries[0]).toBeDefined();
    expect(queries[1]).toBeUndefined();
  });

  it('ad dates are read whether the API sends YYYYMMDD as a number or a string', async () => {
    const tiktok = createTikTokProvider({ clientKey: 'ck', clientSecret: 'cs', baseUrl: fake.url });
    const { items } = await collect(tiktok, request('tiktok', 'adlibrary_search', 'shoes', 4));
    expect(items.map((i) => (i as { first_shown_at: string }).first_shown_at)).toEqual(Array(4).fill('2023-01-05T00:00:00.000Z'));
    void fakeTikTokVideoId;
  });

  it('the Research adapters are off unless the operator declares eligible use', () => {
    const sandbox = createSandboxProvider();
    const env = { PROVIDER_MODE: 'live', TIKTOK_CLIENT_KEY: 'k', TIKTOK_CLIENT_SECRET: 's' };
    const off = selectProviders(env, { sandbox });
    expect(createProviderRegistry(off.providers).isEnabled('tiktok', 'posts')).toBe(false);
    expect(off.warnings.join(' ')).toMatch(/TIKTOK_RESEARCH_ELIGIBLE/);
    const on = selectProviders({ ...env, TIKTOK_RESEARCH_ELIGIBLE: '1' }, { sandbox });
    expect(createProviderRegistry(on.providers).isEnabled('tiktok', 'posts')).toBe(true);
  });
});

describe('vendor routing and errors', () => {
  const sandbox = createSandboxProvider();
  const base = { PROVIDER_MODE: 'live', YOUTUBE_API_KEY: 'k', YOUTUBE_SHORTS_PLAYLIST: '1', SCRAPECREATORS_API_KEY: 'v' };

  it('official first, then the vendor; PROVIDER_ROUTES reorders per operation; GET /v1/platforms lists what the selection serves', () => {
    const registry = createProviderRegistry(selectProviders(base, { sandbox }).providers);
    expect(registry.resolve('youtube', 'shorts')?.source).toBe('official');
    expect(registry.resolve('youtube', 'transcript')?.source).toBe('vendor');
    expect(registry.resolve('instagram', 'comments')?.source).toBe('vendor');
    expect(registry.isEnabled('instagram', 'followers')).toBe(false);
    const routed = createProviderRegistry(
      selectProviders({ ...base, PROVIDER_ROUTES: 'youtube.shorts=vendor,official;instagram=off' }, { sandbox }).providers,
    );
    expect(routed.resolve('youtube', 'shorts')?.source).toBe('vendor');
    expect(routed.isEnabled('instagram', 'comments')).toBe(false);
    const listed = toPlatformResponse(routed).map((p) => p.platform);
    expect(listed).not.toContain('instagram');
    expect(() => selectProviders({ ...base, PROVIDER_ROUTES: 'youtube.nope=vendor' }, { sandbox })).toThrow(/no operation nope/);
    expect(() => selectProviders({ ...base, PROVIDER_ORDER: 'vendor,sandbox' }, { sandbox })).toThrow(/PROVIDER_ORDER/);
  });

  it("classifies the vendor's errors: bad key, no credits, rate limit, outage, not found", async () => {
    const vendor = (key = 'key') => createScrapeCreatorsProvider({ apiKey: key, baseUrl: `${fake.url}/scrapecreators`, retryLimit: 0 });
    const target = request('twitter', 'transcript', 'https://x.com/a/status/1800000000000000003', 1);
    expect((await failure(vendor(FIXTURES.scrapecreators.badKey), target)).code).toBe('upstream_auth');
    fake.misbehave({ path: '/scrapecreators/', kind: 'credits' });
    expect(await failure(vendor(), target)).toMatchObject({ code: 'quota_exceeded', retryable: false });
    fake.misbehave({ path: '/scrapecreators/', kind: 'rate_limit', retryAfterSeconds: 7 });
    expect(await failure(vendor(), target)).toMatchObject({ code: 'rate_limited', retryable: true, retryAfterMs: 7000 });
    fake.misbehave({ path: '/scrapecreators/', kind: 'server_error' });
    expect(await failure(vendor(), target)).toMatchObject({ code: 'upstream_unavailable', retryable: true });
    expect((await failure(vendor(), request('youtube', 'transcript', FIXTURES.scrapecreators.ytNoTranscript, 1))).code).toBe(
      'target_not_found',
    );
  });

  it('pages to exactly the limit and resumes from the cursor', async () => {
    const vendor = createScrapeCreatorsProvider({ apiKey: 'key', baseUrl: `${fake.url}/scrapecreators` });
    const full = await collect(
      vendor,
      request('instagram', 'comments', `https://www.instagram.com/p/${FIXTURES.scrapecreators.igPost.shortcode}/`, 40),
    );
    expect(full.items).toHaveLength(40);
    expect(fake.requests).toHaveLength(3);
    fake.reset();
    const resumed = await collect(
      vendor,
      request('instagram', 'comments', `https://www.instagram.com/p/${FIXTURES.scrapecreators.igPost.shortcode}/`, 40, {
        resumeCursor: full.pages[1]?.cursor ?? null,
      }),
    );
    expect(resumed.items.map((i) => i.id)).toEqual(full.items.slice(30).map((i) => i.id));
    expect(resumed.items.every((i) => i.source === 'vendor')).toBe(true);
  });
});
