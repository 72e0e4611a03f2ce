import { CATALOG, findOperation } from '@sdx/catalog';
import { FIXTURES, startFakeUpstream, type FakeUpstream } from '@sdx/fake-upstream';
import { createProviderRegistry, createSandboxProvider, selectProviders, type Provider } from '@sdx/providers';

const sandbox = createSandboxProvider();

function served(providers: Provider[]): Record<string, string[]> {
  return Object.fromEntries(
    createProviderRegistry(providers)
      .platforms()
      .map((p) => [p.platform, p.operations.map((o) => o.operation)]),
  );
}

const ALL_OPERATIONS = Object.values(CATALOG).reduce((n, ops) => n + ops.length, 0);

describe('selectProviders', () => {
  it('no credentials and no PROVIDER_MODE → sandbox, serving the whole catalog', () => {
    const selection = selectProviders({}, { sandbox });
    expect(selection.mode).toBe('sandbox');
    expect(selection.providers).toEqual([sandbox]);
    expect(Object.values(served(selection.providers)).flat()).toHaveLength(ALL_OPERATIONS);
  });

  it('credentials without PROVIDER_MODE → live: only what the configured upstreams serve', () => {
    const selection = selectProviders({ YOUTUBE_API_KEY: 'k' }, { sandbox });
    expect(selection.mode).toBe('live');
    expect(selection.providers).not.toContain(sandbox);
    expect(served(selection.providers)).toEqual({
      youtube: ['profile', 'posts', 'video', 'comments', 'search', 'trending', 'playlist', 'playlist_items'],
    });
  });

  it('PROVIDER_MODE=live with every upstream configured', () => {
    const selection = selectProviders(
      {
        PROVIDER_MODE: 'live',
        YOUTUBE_API_KEY: 'k',
        X_BEARER_TOKEN: 't',
        TIKTOK_CLIENT_KEY: 'ck',
        TIKTOK_CLIENT_SECRET: 'cs',
        TIKTOK_RESEARCH_ELIGIBLE: '1',
        META_ACCESS_TOKEN: 'm',
        INSTAGRAM_BUSINESS_ACCOUNT_ID: '1784',
      },
      { sandbox },
    );
    expect(selection.mode).toBe('live');
    expect(served(selection.providers)).toEqual({
      instagram: ['profile', 'posts', 'reels', 'hashtag'],
      tiktok: ['profile', 'posts', 'post', 'comments', 'hashtag', 'search', 'transcript', 'adlibrary_search', 'adlibrary_ad'],
      youtube: ['profile', 'posts', 'video', 'comments', 'search', 'trending', 'playlist', 'playlist_items'],
      twitter: ['profile', 'followers', 'following', 'posts', 'post', 'search'],
      facebook: ['profile', 'posts', 'post', 'comments', 'comment_replies', 'adlibrary_company_ads', 'adlibrary_search'],
    });
    // shorts and transcript have no official source: not served live.
    expect(createProviderRegistry(selection.providers).isEnabled('youtube', 'shorts')).toBe(false);
    expect(createProviderRegistry(selection.providers).isEnabled('youtube', 'transcript')).toBe(false);
  });

  it('Instagram needs its business account ID; a TikTok key alone is not enough', () => {
    const selection = selectProviders({ PROVIDER_MODE: 'live', META_ACCESS_TOKEN: 'm', TIKTOK_CLIENT_KEY: 'ck' }, { sandbox });
    expect(Object.keys(served(selection.providers))).toEqual(['facebook']);
    const pagesOnly = selectProviders({ FACEBOOK_ACCESS_TOKEN: 'f' }, { sandbox });
    expect(served(pagesOnly.providers)).toEqual({ facebook: ['profile', 'posts', 'post', 'comments', 'comment_replies'] });
  });

  it('PROVIDER_MODE=sandbox wins over credentials', () => {
    const selection = selectProviders({ PROVIDER_MODE: 'sandbox', YOUTUBE_API_KEY: 'k' }, { sandbox });
    expect(selection).toMatchObject({ mode: 'sandbox', providers: [sandbox] });
  });

  it('PROVIDER_MODE=live without credentials serves nothing and says why', () => {
    const selection = selectProviders({ PROVIDER_MODE: 'live' }, { sandbox });
    expect(selection.providers).toEqual([]);
    expect(selection.warnings).toHaveLength(5);
  });

  it('per platform: live where set, sandbox for the rest, off when asked', () => {
    const selection = selectProviders(
      { PROVIDER_MODE: 'youtube=live, twitter=live, instagram=sandbox, facebook=off', YOUTUBE_API_KEY: 'k', X_BEARER_TOKEN: 't' },
      { sandbox },
    );
    expect(selection.mode).toBe('mixed');
    expect(selection.platforms).toEqual({ youtube: 'live', twitter: 'live', instagram: 'sandbox', tiktok: 'sandbox', facebook: 'off' });
    const registry = createProviderRegistry(selection.providers);
    expect(registry.resolve('youtube', 'posts')?.name).toBe('youtube-data-api');
    expect(registry.resolve('twitter', 'followers')?.name).toBe('x-api-v2');
    expect(registry.isEnabled('youtube', 'shorts')).toBe(false);
    expect(registry.isEnabled('twitter', 'transcript')).toBe(false);
    expect(registry.resolve('instagram', 'stories')?.name).toBe(sandbox.name);
    expect(registry.resolve('tiktok', 'trending')?.name).toBe(sandbox.name);
    expect(registry.isEnabled('facebook', 'profile')).toBe(false);
  });

  it('rejects a malformed PROVIDER_MODE', () => {
    expect(() => selectProviders({ PROVIDER_MODE: 'youtube=maybe' }, { sandbox })).toThrow(/PROVIDER_MODE/);
    expect(() => selectProviders({ PROVIDER_MODE: 'myspace=live' }, { sandbox })).toThrow(/PROVIDER_MODE/);
  });

  describe('against the fake upstream', () => {
    let fake: FakeUpstream;
    beforeAll(async () => {
      fake = await startFakeUpstream();
    });
    afterAll(() => fake.close());

    it('base URL variables point the adapters at the fake', async () => {
      const { providers } = selectProviders(
        {
          PROVIDER_MODE: 'live',
          YOUTUBE_API_KEY: 'dummy',
          YOUTUBE_BASE_URL: `${fake.url}/youtube/v3`,
          X_BEARER_TOKEN: 'dummy',
          X_BASE_URL: fake.url,
          TIKTOK_CLIENT_KEY: 'dummy',
          TIKTOK_CLIENT_SECRET: 'dummy',
          TIKTOK_RESEARCH_ELIGIBLE: '1',
          TIKTOK_BASE_URL: fake.url,
          META_ACCESS_TOKEN: 'dummy',
          META_GRAPH_BASE_URL: `${fake.url}/${FIXTURES.graph.version}`,
          INSTAGRAM_BUSINESS_ACCOUNT_ID: FIXTURES.graph.igUserId,
        },
        { sandbox },
      );
      const registry = createProviderRegistry(providers);
      const cases: Array<[string, string, string]> = [
        ['youtube', 'posts', 'fakechannel'],
        ['twitter', 'posts', 'fakeuser'],
        ['tiktok', 'posts', 'fakecreator'],
        ['facebook', 'posts', 'fakepage'],
        ['facebook', 'adlibrary_search', 'shoes'],
        ['instagram', 'posts', 'fakebrand'],
      ];
      for (const [platform, operation, target] of cases) {
        const provider = registry.resolve(platform, operation);
        const spec = findOperation(platform, operation);
        if (!provider || !spec) throw new Error(`${platform} ${operation} is not served`);
        let count = 0;
        for await (const page of provider.extract({
          platform: platform as 'youtube',
          operation,
          spec,
          target,
          limit: 12,
          includePosts: 0,
          attempt: 1,
          resumeCursor: null,
          signal: new AbortController().signal,
        })) {
          count += page.items.length;
        }
        expect([platform, operation, count]).toEqual([platform, operation, 12]);
      }
    });
  });
});
