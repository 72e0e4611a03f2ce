import { FIXTURES, fakeTikTokAdId, fakeTikTokVideoId, startFakeUpstream, type FakeUpstream } from '@sdx/fake-upstream';
import {
  createTikTokProvider,
  parseJsonExact,
  type PostItem,
  type Provider,
  type ProviderError,
  type TranscriptItem,
} from '@sdx/providers';
import { collect, failure, request } from './helpers';

const CLIENT_KEY = 'awfakeclientkey123';
const CLIENT_SECRET = 'fake-client-secret-0123456789abcdef';

let fake: FakeUpstream;
let tiktok: Provider;
let clock: number;

beforeAll(async () => {
  fake = await startFakeUpstream();
});
afterAll(() => fake.close());
beforeEach(() => {
  fake.reset();
  clock = Date.now();
  tiktok = createTikTokProvider({
    clientKey: CLIENT_KEY,
    clientSecret: CLIENT_SECRET,
    baseUrl: fake.url,
    retryDelayMs: 10,
    now: () => clock,
  });
});

const tokenRequests = () => fake.requests.filter((r) => r.path === '/v2/oauth/token/');
const queries = () => fake.requests.filter((r) => r.path === '/v2/research/video/query/');
const body = (r: { body: unknown }) => r.body as Record<string, unknown>;

describe('tiktok adapter: client access token', () => {
  it('is fetched once and cached until it expires', async () => {
    await collect(tiktok, request('tiktok', 'profile', 'fakecreator', 1));
    await collect(tiktok, request('tiktok', 'post', fakeTikTokVideoId(3), 1));
    expect(tokenRequests()).toHaveLength(1);
    expect(tokenRequests()[0]?.body).toMatchObject({
      client_key: CLIENT_KEY,
      client_secret: '[redacted]',
      grant_type: 'client_credentials',
    });
    clock += 2 * 3_600_000; // past expires_in (7200 s)
    await collect(tiktok, request('tiktok', 'profile', 'fakecreator', 1));
    expect(tokenRequests()).toHaveLength(2);
  });

  it('is refreshed once on access_token_invalid, and the request succeeds', async () => {
    await collect(tiktok, request('tiktok', 'profile', 'fakecreator', 1));
    fake.misbehave({ path: '/v2/research/user/info/', kind: 'token_invalid' });
    expect((await collect(tiktok, request('tiktok', 'profile', 'fakecreator', 1))).items).toHaveLength(1);
    expect(tokenRequests()).toHaveLength(2);
  });

  it('a token the upstream forgot (revoked) is replaced transparently', async () => {
    await collect(tiktok, request('tiktok', 'profile', 'fakecreator', 1));
    fake.reset(); // the fake forgets every issued token
    expect((await collect(tiktok, request('tiktok', 'profile', 'fakecreator', 1))).items).toHaveLength(1);
    expect(tokenRequests()).toHaveLength(1);
    expect(fake.requests.map((r) => r.path)).toEqual(['/v2/research/user/info/', '/v2/oauth/token/', '/v2/research/user/info/']);
  });

  it('refreshes only once: a second access_token_invalid → upstream_auth', async () => {
    fake.misbehave({ path: '/v2/research/user/info/', kind: 'token_invalid', times: 2 });
    expect(await failure(tiktok, request('tiktok', 'profile', 'fakecreator', 1))).toMatchObject({
      code: 'upstream_auth',
      retryable: false,
    });
    expect(tokenRequests()).toHaveLength(2);
    expect(fake.requests.filter((r) => r.path === '/v2/research/user/info/')).toHaveLength(2);
  });

  it('bad client credentials → upstream_auth without the secret in the error', async () => {
    const bad = createTikTokProvider({ clientKey: CLIENT_KEY, clientSecret: FIXTURES.tiktok.badSecret, baseUrl: fake.url });
    const error = await failure(bad, request('tiktok', 'profile', 'fakecreator', 1));
    expect(error).toMatchObject({ code: 'upstream_auth', retryable: false });
    expect(`${error.message} ${JSON.stringify(error.context)}`).not.toContain(FIXTURES.tiktok.badSecret);
  });
});

describe('tiktok adapter: paging', () => {
  it('video queries walk 30-day windows and stop at exactly the limit', async () => {
    const { items, pages } = await collect(tiktok, request('tiktok', 'posts', 'fakecreator', 45));
    expect(items).toHaveLength(45);
    expect(pages.at(-1)?.cursor).toBeNull();
    const sent = queries().map(body);
    expect(sent.length).toBe(pages.length);
    // Each request asks for what remains (at most 100); the last asks for exactly the rest.
    let delivered = 0;
    sent.forEach((b, i) => {
      expect(b.max_count).toBe(Math.min(100, 45 - delivered));
      delivered += pages[i]?.items.length ?? 0;
    });
    for (const b of sent) {
      const start = String(b.start_date);
      const end = String(b.end_date);
      const days =
        (Date.UTC(+end.slice(0, 4), +end.slice(4, 6) - 1, +end.slice(6)) -
          Date.UTC(+start.slice(0, 4), +start.slice(4, 6) - 1, +start.slice(6))) /
        86_400_000;
      expect(days).toBeLessThanOrEqual(29);
      expect(b.query).toEqual({ and: [{ operation: 'EQ', field_name: 'username', field_values: ['fakecreator'] }] });
    }
    // Newest first.
    const times = items.map((i) => Date.parse(i.published_at ?? ''));
    expect([...times].sort((a, b) => b - a)).toEqual(times);
  });

  it('keyword search pages with cursor and search_id inside one window', async () => {
    const { items } = await collect(tiktok, request('tiktok', 'search', 'coffee', 150));
    expect(items).toHaveLength(150);
    const sent = queries().map(body);
    expect(sent.map((b) => [b.max_count, b.cursor])).toEqual([
      [100, 0],
      [50, 100],
    ]);
    expect(sent[0]?.search_id).toBeUndefined();
    expect(sent[1]?.search_id).toMatch(/^\d+$/);
    expect(sent[1]?.start_date).toBe(sent[0]?.start_date);
  });

  it('comments: 100 then the rest', async () => {
    const { items } = await collect(tiktok, request('tiktok', 'comments', fakeTikTokVideoId(2), 130));
    expect(items).toHaveLength(130);
    expect(
      fake.requests.filter((r) => r.path === '/v2/research/video/comment/list/').map((r) => [body(r).max_count, body(r).cursor]),
    ).toEqual([
      [100, 0],
      [30, 100],
    ]);
  });

  it('ad library search: 50 per page with search_id', async () => {
    const { items } = await collect(tiktok, request('tiktok', 'adlibrary_search', 'coffee', 100));
    expect(items).toHaveLength(100);
    const sent = fake.requests.filter((r) => r.path === '/v2/research/adlib/ad/query/').map(body);
    expect(sent.map((b) => b.max_count)).toEqual([50, 50]);
    expect(sent[0]?.search_id).toBeUndefined();
    expect(typeof sent[1]?.search_id).toBe('string');
  });

  it('resumes from a saved cursor', async () => {
    const full = await collect(tiktok, request('tiktok', 'posts', 'fakecreator', 60));
    const cut = full.pages[1];
    const delivered = (full.pages[0]?.items.length ?? 0) + (cut?.items.length ?? 0);
    fake.reset();
    const resumed = await collect(tiktok, request('tiktok', 'posts', 'fakecreator', 60, { resumeCursor: cut?.cursor ?? null, attempt: 2 }));
    expect(resumed.items.map((i) => i.id)).toEqual(full.items.slice(delivered).map((i) => i.id));
  });
});

describe('tiktok adapter: mapping', () => {
  it('keeps 64-bit IDs exact and maps videos, transcripts, comments and ads', async () => {
    const id = fakeTikTokVideoId(5);
    expect(BigInt(id) > BigInt(Number.MAX_SAFE_INTEGER)).toBe(true);
    const video = (await collect(tiktok, request('tiktok', 'post', `https://www.tiktok.com/@fakecreator/video/${id}`, 1))).items[0];
    expect(video).toMatchObject({
      kind: 'video',
      platform: 'tiktok',
      id,
      username: 'fakecreator',
      url: `https://www.tiktok.com/@fakecreator/video/${id}`,
      media_type: 'video',
    });
    const v = video as PostItem;
    expect(v.hashtags).toContain('fyp');
    expect(v.caption).toContain('#fyp');
    expect(typeof v.metrics.shares).toBe('number');
    // The query window is the day the ID encodes.
    expect(body(queries()[0] ?? { body: {} }).query).toEqual({ and: [{ operation: 'EQ', field_name: 'video_id', field_values: [id] }] });

    const transcript = (await collect(tiktok, request('tiktok', 'transcript', id, 1))).items[0];
    expect(transcript).toMatchObject({ kind: 'transcript', id });
    expect((transcript as TranscriptItem).text.length).toBeGreaterThan(10);

    const comment = (await collect(tiktok, request('tiktok', 'comments', id, 1))).items[0];
    expect(comment).toMatchObject({ kind: 'comment', parent_id: id, id: (BigInt(id) + 1000n).toString() });

    const adId = fakeTikTokAdId(7);
    const ad = (await collect(tiktok, request('tiktok', 'adlibrary_ad', `https://library.tiktok.com/ads/detail/?ad_id=${adId}`, 1)))
      .items[0];
    expect(ad).toMatchObject({
      kind: 'ad',
      platform: 'tiktok',
      id: adId,
      advertiser_id: '7100000000000000000',
      first_shown_at: '2023-01-05T00:00:00.000Z',
      platforms: ['tiktok'],
    });

    const profile = (await collect(tiktok, request('tiktok', 'profile', 'fakecreator', 1))).items[0];
    expect(profile).toMatchObject({
      kind: 'profile',
      username: 'fakecreator',
      followers_count: 1_250_000,
      verified: true,
      posts_count: FIXTURES.tiktok.user.videos,
    });
  });

  it('parseJsonExact keeps big integers and leaves strings and small numbers alone', () => {
    const parsed = parseJsonExact(
      '{"id":7710933457165090816,"n":-9007199254740993,"s":"123456789012345678901","small":42,"f":1.5e3}',
    ) as Record<string, unknown>;
    expect(parsed).toEqual({ id: '7710933457165090816', n: '-9007199254740993', s: '123456789012345678901', small: 42, f: 1500 });
  });
});

describe('tiktok adapter: errors', () => {
  it('unknown user → target_not_found; private user → target_private', async () => {
    expect(await failure(tiktok, request('tiktok', 'profile', 'nobodyhere', 1))).toMatchObject({
      code: 'target_not_found',
      retryable: false,
    });
    expect(await failure(tiktok, request('tiktok', 'profile', FIXTURES.tiktok.privateUser, 1))).toMatchObject({
      code: 'target_private',
      retryable: false,
    });
    expect(await failure(tiktok, request('tiktok', 'posts', FIXTURES.tiktok.privateUser, 10))).toMatchObject({ code: 'target_private' });
    expect(await failure(tiktok, request('tiktok', 'post', '7000000000000000001', 1))).toMatchObject({ code: 'target_not_found' });
  });

  it('rate_limit_exceeded → rate_limited with Retry-After', async () => {
    fake.misbehave({ path: '/v2/research/', kind: 'rate_limit', retryAfterSeconds: 12 });
    expect(await failure(tiktok, request('tiktok', 'profile', 'fakecreator', 1))).toMatchObject({
      code: 'rate_limited',
      retryable: true,
      retryAfterMs: 12_000,
    });
  });

  it('daily quota → quota_exceeded, terminal', async () => {
    fake.misbehave({ path: '/v2/research/', kind: 'quota' });
    expect(await failure(tiktok, request('tiktok', 'search', 'coffee', 10))).toMatchObject({ code: 'quota_exceeded', retryable: false });
  });

  it('a 200 whose body carries internal_error → retryable, then completes', async () => {
    fake.misbehave({ path: '/v2/research/video/query/', kind: 'errors_200' });
    expect(await failure(tiktok, request('tiktok', 'posts', 'fakecreator', 10))).toMatchObject({
      code: 'upstream_unavailable',
      retryable: true,
    });
    expect((await collect(tiktok, request('tiktok', 'posts', 'fakecreator', 10, { attempt: 2 }))).items).toHaveLength(10);
  });

  it('5xx → upstream_unavailable', async () => {
    fake.misbehave({ path: '/v2/research/', kind: 'server_error', status: 502 });
    expect(await failure(tiktok, request('tiktok', 'comments', fakeTikTokVideoId(1), 10))).toMatchObject({
      code: 'upstream_unavailable',
      retryable: true,
    });
  });

  it('no error message or context carries a credential or token', async () => {
    const errors: ProviderError[] = [];
    for (const kind of ['rate_limit', 'quota', 'errors_200', 'server_error'] as const) {
      fake.misbehave({ path: '/v2/research/', kind });
      errors.push(await failure(tiktok, request('tiktok', 'profile', 'fakecreator', 1)));
    }
    fake.misbehave({ path: '/v2/research/', kind: 'token_invalid', times: 2 });
    errors.push(await failure(tiktok, request('tiktok', 'profile', 'fakecreator', 1)));
    for (const error of errors) {
      const text = `${error.message} ${JSON.stringify(error.context)}`;
      expect(text).not.toContain(CLIENT_SECRET);
      expect(text).not.toContain('clt.');
    }
  });
});
