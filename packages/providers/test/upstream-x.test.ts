import { FIXTURES, startFakeUpstream, type FakeUpstream } from '@sdx/fake-upstream';
import { createXProvider, type PostItem, type Provider, type ProviderError } from '@sdx/providers';
import { collect, failure, request } from './helpers';

const TOKEN = 'AAAAAAAAAAAAAAAAAAAAAFAKEbearer%2Ftoken0123456789';

let fake: FakeUpstream;
let x: Provider;
const U = FIXTURES.x.user;

beforeAll(async () => {
  fake = await startFakeUpstream();
});
afterAll(() => fake.close());
beforeEach(() => {
  fake.reset();
  x = createXProvider({ bearerToken: TOKEN, baseUrl: fake.url, retryDelayMs: 10 });
});

describe('x adapter: paging', () => {
  it('followers: 1000 per page, exactly the limit, no extra request', async () => {
    const { pages, items } = await collect(x, request('twitter', 'followers', 'fakeuser', 2500));
    expect(items).toHaveLength(2500);
    expect(pages.map((p) => p.items.length)).toEqual([1000, 1000, 500]);
    expect(fake.requests.map((r) => r.path)).toEqual([
      '/2/users/by/username/fakeuser',
      `/2/users/${U.id}/followers`,
      `/2/users/${U.id}/followers`,
      `/2/users/${U.id}/followers`,
    ]);
    expect(fake.requests.slice(1).map((r) => r.query.max_results)).toEqual(['1000', '1000', '500']);
    expect(fake.requests[2]?.query.pagination_token).toBeDefined();
    expect(pages.at(-1)?.cursor).toBeNull();
  });

  it('following stops when the upstream has no more', async () => {
    const { items, pages } = await collect(x, request('twitter', 'following', 'fakeuser', 5000));
    expect(items).toHaveLength(U.following);
    expect(pages.at(-1)?.cursor).toBeNull();
    expect(fake.requests.slice(1).map((r) => r.query.max_results)).toEqual(['1000', '1000']);
  });

  it('posts ask for at least the minimum page of 5 but deliver exactly the limit', async () => {
    const few = await collect(x, request('twitter', 'posts', 'fakeuser', 3));
    expect(few.items).toHaveLength(3);
    expect(fake.requests.at(-1)?.query.max_results).toBe('5');
    fake.reset();
    const many = await collect(x, request('twitter', 'posts', 'fakeuser', 100));
    expect(many.items).toHaveLength(100);
    expect(fake.requests.filter((r) => r.path.endsWith('/tweets')).map((r) => r.query.max_results)).toEqual(['100']);
  });

  it('search pages with next_token', async () => {
    const { items } = await collect(x, request('twitter', 'search', 'news', 100));
    expect(items).toHaveLength(100);
    const big = createXProvider({ bearerToken: TOKEN, baseUrl: fake.url });
    fake.reset();
    const twoPages = await collect(big, { ...request('twitter', 'search', 'news', 100), limit: 150 });
    expect(twoPages.items).toHaveLength(150);
    expect(fake.requests.map((r) => [r.query.max_results, r.query.next_token === undefined])).toEqual([
      ['100', true],
      ['50', false],
    ]);
  });

  it('resumes followers from the cursor without looking the user up again', async () => {
    const full = await collect(x, request('twitter', 'followers', 'fakeuser', 2500));
    fake.reset();
    const resumed = await collect(
      x,
      request('twitter', 'followers', 'fakeuser', 2500, { resumeCursor: full.pages[1]?.cursor ?? null, attempt: 2 }),
    );
    expect(resumed.items.map((i) => i.id)).toEqual(full.items.slice(2000).map((i) => i.id));
    expect(fake.requests.map((r) => r.path)).toEqual([`/2/users/${U.id}/followers`]);
    expect(fake.requests[0]?.query.max_results).toBe('500');
  });
});

describe('x adapter: mapping', () => {
  it('maps users and posts; 64-bit IDs stay exact strings', async () => {
    const profile = (await collect(x, request('twitter', 'profile', '@FakeUser', 1))).items[0];
    expect(profile).toMatchObject({
      kind: 'profile',
      platform: 'twitter',
      id: U.id,
      username: 'fakeuser',
      display_name: U.name,
      followers_count: U.followers,
      following_count: U.following,
      posts_count: U.tweets,
      verified: true,
      private: false,
      url: 'https://x.com/fakeuser',
    });
    const post = (await collect(x, request('twitter', 'post', 'https://x.com/fakeuser/status/1800000000000000005', 1))).items[0];
    expect(post).toMatchObject({ kind: 'post', platform: 'twitter', id: '1800000000000000005', username: 'fakeuser', media_type: 'text' });
    expect(post?.caption).toMatch(/#\w+$/);
    const p = post as PostItem;
    expect(p.hashtags).toHaveLength(1);
    expect(typeof p.metrics.views).toBe('number');
    expect(typeof p.metrics.shares).toBe('number');
    const locked = (await collect(x, request('twitter', 'profile', 'lockeduser', 1))).items[0];
    expect(locked).toMatchObject({ private: true, id: FIXTURES.x.protectedUser.id });
  });
});

describe('x adapter: errors', () => {
  it('unknown user (200 with errors only) → target_not_found', async () => {
    expect(await failure(x, request('twitter', 'profile', 'ghost', 1))).toMatchObject({ code: 'target_not_found', retryable: false });
    expect(await failure(x, request('twitter', 'post', '1899999999999999999', 1))).toMatchObject({ code: 'target_not_found' });
    fake.misbehave({ path: '/2/users/by/username/', kind: 'errors_200' });
    expect(await failure(x, request('twitter', 'posts', 'fakeuser', 10))).toMatchObject({ code: 'target_not_found' });
  });

  it('protected account → target_private', async () => {
    expect(await failure(x, request('twitter', 'followers', 'lockeduser', 10))).toMatchObject({ code: 'target_private', retryable: false });
    expect(await failure(x, request('twitter', 'posts', 'lockeduser', 10))).toMatchObject({ code: 'target_private' });
  });

  it('429 → rate_limited, waiting until x-rate-limit-reset', async () => {
    fake.misbehave({ path: '/2/users/', kind: 'rate_limit', resetInSeconds: 120 });
    const error = await failure(x, request('twitter', 'followers', 'fakeuser', 10));
    expect(error).toMatchObject({ code: 'rate_limited', retryable: true });
    expect(error.retryAfterMs).toBeGreaterThan(115_000);
    expect(error.retryAfterMs).toBeLessThanOrEqual(120_000);
  });

  it('usage-capped → quota_exceeded, terminal', async () => {
    fake.misbehave({ path: '/2/tweets/search/recent', kind: 'quota' });
    expect(await failure(x, request('twitter', 'search', 'news', 10))).toMatchObject({ code: 'quota_exceeded', retryable: false });
  });

  it('5xx → retryable; a retry completes', async () => {
    fake.misbehave({ path: '/2/users/by/username/', kind: 'server_error', status: 503 });
    expect(await failure(x, request('twitter', 'profile', 'fakeuser', 1))).toMatchObject({ code: 'upstream_unavailable', retryable: true });
    expect((await collect(x, request('twitter', 'profile', 'fakeuser', 1, { attempt: 2 }))).items).toHaveLength(1);
  });

  it('bad bearer token → upstream_auth; tokens never appear in errors or requests', async () => {
    const bad = createXProvider({ bearerToken: FIXTURES.x.badToken, baseUrl: fake.url });
    expect(await failure(bad, request('twitter', 'profile', 'fakeuser', 1))).toMatchObject({ code: 'upstream_auth', retryable: false });
    const errors: ProviderError[] = [];
    for (const kind of ['quota', 'rate_limit', 'server_error', 'errors_200'] as const) {
      fake.misbehave({ path: '/2/', kind });
      errors.push(await failure(x, request('twitter', 'profile', 'fakeuser', 1)));
    }
    for (const error of errors) expect(`${error.message} ${JSON.stringify(error.context)}`).not.toContain(TOKEN);
    expect(JSON.stringify(fake.requests)).not.toContain(TOKEN);
  });
});
