import { CATALOG, PLATFORMS, type Platform } from '@sdx/catalog';
import {
  ProviderRegistry,
  createProviderRegistry,
  createSandboxProvider,
  toPlatformResponse,
  type Page,
  type Provider,
} from '@sdx/providers';

/** A provider that serves exactly the given (platform, operation) pairs. */
function providerFor(name: string, pairs: Array<[Platform, string]>): Provider {
  return {
    name,
    supports: (platform, operation) => pairs.some(([p, o]) => p === platform && o === operation),
    // eslint-disable-next-line @typescript-eslint/require-await -- a provider's extract is an async generator; this one has one empty page ready
    async *extract(): AsyncGenerator<Page> {
      yield { items: [], cursor: null, total: 0 };
    },
  };
}

describe('ProviderRegistry with the sandbox', () => {
  const sandbox = createSandboxProvider();
  const registry = createProviderRegistry([sandbox]);

  test('enables all 55 catalog operations, in catalog order', () => {
    const listed = registry.platforms();
    expect(listed.map((p) => p.platform)).toEqual([...PLATFORMS]);
    expect(listed.map((p) => p.label)).toEqual(['Instagram', 'TikTok', 'YouTube', 'X (Twitter)', 'Facebook']);
    for (const entry of listed) expect(entry.operations).toEqual(CATALOG[entry.platform]);
    expect(listed.flatMap((p) => p.operations)).toHaveLength(55);
  });

  test('resolves catalog pairs to the sandbox and nothing else', () => {
    expect(registry.resolve('twitter', 'followers')).toBe(sandbox);
    expect(registry.isEnabled('facebook', 'profile_analytics')).toBe(true);
    expect(registry.resolve('instagram', 'video')).toBeUndefined();
    expect(registry.isEnabled('twitter', 'comments')).toBe(false);
    expect(registry.isEnabled('myspace', 'profile')).toBe(false);
    expect(registry.resolve('', '')).toBeUndefined();
  });

  test('toPlatformResponse is the GET /v1/platforms body', () => {
    const body = toPlatformResponse(registry);
    expect(body).toHaveLength(5);
    expect(body.flatMap((p) => p.operations)).toHaveLength(55);
    for (const platform of body) {
      expect(Object.keys(platform)).toEqual(['platform', 'label', 'operations']);
      for (const op of platform.operations) {
        expect(Object.keys(op)).toEqual([
          'operation',
          'max_results',
          'default_limit',
          'credits_per_result',
          'results_per_credit',
          'base_credits',
          'requires_session',
          'monitorable',
        ]);
        expect(op.requires_session).toBe(false);
        // What a request without a limit gets: 12, or all an operation of fewer results can give.
        expect(op.default_limit).toBe(Math.min(12, op.max_results));
      }
    }
    const instagram = body.find((p) => p.platform === 'instagram')!;
    expect(instagram.operations.map((o) => o.operation)).toEqual([
      'profile',
      'post',
      'followers',
      'following',
      'posts',
      'reels',
      'comments',
      'highlights',
      'highlight_items',
      'stories',
      'hashtag',
      'search_users',
      'tagged',
      'transcript',
    ]);
    expect(instagram.operations.find((o) => o.operation === 'highlights')).toEqual({
      operation: 'highlights',
      max_results: 50,
      default_limit: 12,
      credits_per_result: 0,
      results_per_credit: 1,
      base_credits: 10,
      requires_session: false,
      monitorable: false,
    });
    const twitter = body.find((p) => p.platform === 'twitter')!;
    expect(twitter.label).toBe('X (Twitter)');
    expect(twitter.operations.find((o) => o.operation === 'followers')).toEqual({
      operation: 'followers',
      max_results: 25000,
      default_limit: 12,
      credits_per_result: 2,
      results_per_credit: 1,
      base_credits: 0,
      requires_session: false,
      monitorable: false,
    });
    expect(body.find((p) => p.platform === 'youtube')!.operations.find((o) => o.operation === 'transcript')).toEqual({
      operation: 'transcript',
      max_results: 1,
      default_limit: 1,
      credits_per_result: 10,
      results_per_credit: 1,
      base_credits: 0,
      requires_session: false,
      monitorable: false,
    });
    // Monitorable: each profile, and the lists of a target's own posts or videos.
    const monitorable = body.flatMap((p) => p.operations.filter((o) => o.monitorable).map((o) => `${p.platform} ${o.operation}`)).sort();
    expect(monitorable).toEqual([
      'facebook posts',
      'facebook profile',
      'facebook reels',
      'instagram posts',
      'instagram profile',
      'instagram reels',
      'tiktok posts',
      'tiktok profile',
      'twitter posts',
      'twitter profile',
      'youtube posts',
      'youtube profile',
      'youtube shorts',
    ]);
    expect(JSON.parse(JSON.stringify(body))).toEqual(body);
  });
});

describe('ProviderRegistry with partial providers', () => {
  test('lists exactly the operations its providers support, omitting empty platforms', () => {
    const registry = new ProviderRegistry([
      providerFor('partial', [
        ['twitter', 'profile'],
        ['youtube', 'video'],
      ]),
    ]);
    expect(registry.platforms()).toEqual([
      { platform: 'youtube', label: 'YouTube', operations: CATALOG.youtube.filter((o) => o.operation === 'video') },
      { platform: 'twitter', label: 'X (Twitter)', operations: CATALOG.twitter.filter((o) => o.operation === 'profile') },
    ]);
    expect(toPlatformResponse(registry)).toEqual([
      {
        platform: 'youtube',
        label: 'YouTube',
        operations: [
          {
            operation: 'video',
            max_results: 1,
            default_limit: 1,
            credits_per_result: 1,
            results_per_credit: 1,
            base_credits: 0,
            requires_session: false,
            monitorable: false,
          },
        ],
      },
      {
        platform: 'twitter',
        label: 'X (Twitter)',
        operations: [
          {
            operation: 'profile',
            max_results: 1,
            default_limit: 1,
            credits_per_result: 1,
            results_per_credit: 1,
            base_credits: 0,
            requires_session: false,
            monitorable: true,
          },
        ],
      },
    ]);
    expect(registry.isEnabled('twitter', 'followers')).toBe(false);
  });

  test('an operation outside the catalog is never enabled, even when a provider claims it', () => {
    const registry = createProviderRegistry([
      providerFor('claims', [
        ['instagram', 'video'],
        ['instagram', 'stories'],
      ]),
    ]);
    expect(registry.isEnabled('instagram', 'video')).toBe(false);
    expect(registry.platforms()).toEqual([
      { platform: 'instagram', label: 'Instagram', operations: CATALOG.instagram.filter((o) => o.operation === 'stories') },
    ]);
  });

  test('the first provider that supports an operation serves it', () => {
    const upstream = providerFor('upstream', [['tiktok', 'posts']]);
    const sandbox = createSandboxProvider();
    const registry = createProviderRegistry([upstream, sandbox]);
    expect(registry.resolve('tiktok', 'posts')).toBe(upstream);
    expect(registry.resolve('tiktok', 'comments')).toBe(sandbox);
    expect(registry.platforms().flatMap((p) => p.operations)).toHaveLength(55);
  });

  test('no providers: nothing enabled, empty listing', () => {
    const registry = createProviderRegistry([]);
    expect(registry.platforms()).toEqual([]);
    expect(toPlatformResponse(registry)).toEqual([]);
    expect(registry.resolve('instagram', 'profile')).toBeUndefined();
  });
});
