import { CATALOG, PLATFORMS, findOperation, normalizeTarget, type OperationSpec, type Platform, type TargetKind } from '@sdx/catalog';
import {
  ProviderError,
  SANDBOX_DRIFT_EPOCH_MS,
  SANDBOX_EPOCH_MS,
  drifted,
  abortableSleep,
  createSandboxProvider,
  isAbortError,
  parseSandboxTokens,
  type CommentItem,
  type ExtractionRequest,
  type HighlightItem,
  type Item,
  type Page,
  type PostItem,
  type ProfileItem,
  type Provider,
  type SandboxProviderOptions,
  type TranscriptItem,
} from '@sdx/providers';

interface RequestInput {
  platform: Platform;
  operation: string;
  target: string;
  limit?: number;
  includePosts?: number;
  attempt?: number;
  resumeCursor?: string | null;
  signal?: AbortSignal;
}

function request(input: RequestInput): ExtractionRequest {
  const spec = findOperation(input.platform, input.operation);
  if (!spec) throw new Error(`not in the catalog: ${input.platform}/${input.operation}`);
  return {
    platform: input.platform,
    operation: input.operation,
    spec,
    target: input.target,
    limit: input.limit ?? spec.max_results,
    includePosts: input.includePosts ?? 0,
    attempt: input.attempt ?? 1,
    resumeCursor: input.resumeCursor ?? null,
    signal: input.signal ?? new AbortController().signal,
  };
}

async function pages(provider: Provider, input: RequestInput): Promise<Page[]> {
  const out: Page[] = [];
  for await (const page of provider.extract(request(input))) out.push(page);
  return out;
}

async function items(provider: Provider, input: RequestInput): Promise<Item[]> {
  return (await pages(provider, input)).flatMap((p) => p.items);
}

async function failure(provider: Provider, input: RequestInput): Promise<unknown> {
  try {
    await pages(provider, input);
  } catch (error) {
    return error;
  }
  throw new Error('expected the extraction to fail');
}

/** A recorded, instant sleep. */
function recordingSleep(): { calls: number[]; sleep: NonNullable<SandboxProviderOptions['sleep']> } {
  const calls: number[] = [];
  return {
    calls,
    sleep: (ms) => {
      calls.push(ms);
      return Promise.resolve();
    },
  };
}

/** A target of the right kind for every operation. */
const SAMPLE_TARGETS: Record<TargetKind, Record<Platform, string>> = {
  username: { instagram: 'natgeo', tiktok: 'khaby.lame', youtube: 'mkbhd', twitter: 'nasa', facebook: 'nasa' },
  content: {
    instagram: 'https://instagram.com/p/C3xYz12AbCd',
    tiktok: 'https://tiktok.com/@khaby.lame/video/7234567890123456789',
    youtube: 'https://youtube.com/watch?v=dQw4w9WgXcQ',
    twitter: 'https://x.com/nasa/status/1790000000000000000',
    facebook: 'https://facebook.com/nasa/posts/1234567890123456',
  },
  query: { instagram: 'coffee', tiktok: 'running shoes', youtube: 'home studio', twitter: 'launch day', facebook: 'sneakers' },
  hashtag: { instagram: 'travel', tiktok: 'fyp', youtube: 'music', twitter: 'news', facebook: 'food' },
  country: { instagram: 'US', tiktok: 'DE', youtube: 'GB', twitter: 'US', facebook: 'US' },
  channel: { instagram: 'natgeo', tiktok: 'natgeo', youtube: 'mkbhd', twitter: 'nasa', facebook: 'nasa' },
  page: { instagram: 'natgeo', tiktok: 'natgeo', youtube: 'mkbhd', twitter: 'nasa', facebook: 'nasa' },
  highlight: { instagram: '17912345678901234', tiktok: 'x', youtube: 'x', twitter: 'x', facebook: 'x' },
  playlist: { instagram: 'x', tiktok: 'x', youtube: 'PLrAXtmErZgOeiKm4sgNOknGvNjby9efdf', twitter: 'x', facebook: 'x' },
  ad: {
    instagram: 'x',
    tiktok: '1790000000000000',
    youtube: 'x',
    twitter: 'x',
    facebook: 'https://facebook.com/ads/library/?id=987654321012345',
  },
  advertiser: { instagram: 'x', tiktok: 'x', youtube: 'x', twitter: 'x', facebook: '100064123456789' },
  comment_url: {
    instagram: 'x',
    tiktok: 'x',
    youtube: 'x',
    twitter: 'x',
    facebook: 'https://facebook.com/nasa/posts/1234567890123456?comment_id=9876543210123',
  },
};

function sampleTarget(platform: Platform, spec: OperationSpec): string {
  const check = normalizeTarget(platform, spec.target, SAMPLE_TARGETS[spec.target][platform]);
  if (!check.ok) throw new Error(`bad sample target for ${platform}/${spec.operation}: ${check.reason}`);
  return check.normalized;
}

const ALL_OPERATIONS: Array<[Platform, OperationSpec]> = PLATFORMS.flatMap((p) => CATALOG[p].map((s): [Platform, OperationSpec] => [p, s]));
const EPOCH_ISO = new Date(SANDBOX_EPOCH_MS).toISOString().replace('.000Z', 'Z');

describe('sandbox provider: catalog coverage', () => {
  const sandbox = createSandboxProvider();

  test('supports every one of the 55 catalog operations and nothing else', () => {
    expect(ALL_OPERATIONS).toHaveLength(55);
    for (const [platform, spec] of ALL_OPERATIONS) expect(sandbox.supports(platform, spec.operation)).toBe(true);
    expect(sandbox.supports('instagram', 'video')).toBe(false);
    expect(sandbox.supports('twitter', 'comments')).toBe(false);
    expect(sandbox.name).toBe('sandbox');
  });

  test.each(ALL_OPERATIONS.map(([p, s]) => [`${p}/${s.operation}`, p, s] as const))(
    '%s yields items of the catalog kind with the base fields',
    async (_name, platform, spec) => {
      const limit = Math.min(3, spec.max_results);
      const got = await items(sandbox, { platform, operation: spec.operation, target: sampleTarget(platform, spec), limit });
      expect(got).toHaveLength(limit);
      for (const item of got) {
        expect(item.kind).toBe(spec.itemKind);
        expect(item.platform).toBe(platform);
        for (const key of ['kind', 'platform', 'username', 'caption', 'id', 'url', 'published_at']) expect(item).toHaveProperty(key);
        expect(typeof item.id).toBe('string');
        expect(item.id.length).toBeGreaterThan(0);
        expect(typeof item.username).toBe('string');
        expect(item.url).toMatch(/^https:\/\/[a-z0-9.-]+\.(com)\//);
        if (item.published_at !== null) {
          expect(item.published_at).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}Z$/);
          expect(item.published_at <= EPOCH_ISO).toBe(true);
        }
      }
      expect(new Set(got.map((i) => i.id)).size).toBe(got.length);
    },
  );
});

describe('sandbox provider: determinism and resuming', () => {
  const sandbox = createSandboxProvider();

  test('the same request yields byte-identical items', async () => {
    for (const [platform, spec] of ALL_OPERATIONS) {
      const input = { platform, operation: spec.operation, target: sampleTarget(platform, spec), limit: Math.min(20, spec.max_results) };
      const first = await items(sandbox, input);
      const second = await items(createSandboxProvider(), input);
      expect(JSON.stringify(second)).toBe(JSON.stringify(first));
    }
  });

  test('different targets yield different items', async () => {
    const a = await items(sandbox, { platform: 'instagram', operation: 'posts', target: 'natgeo', limit: 5 });
    const b = await items(sandbox, { platform: 'instagram', operation: 'posts', target: 'nasa', limit: 5 });
    expect(a.map((i) => i.id)).not.toEqual(b.map((i) => i.id));
    expect(a.every((i) => i.username === 'natgeo' || (i as PostItem).collaborator_usernames.includes('natgeo'))).toBe(true);
  });

  test('a run resumed from a page cursor yields the fresh run tail', async () => {
    const input = { platform: 'twitter' as const, operation: 'followers', target: 'nasa', limit: 2500 };
    const fresh = await pages(sandbox, input);
    expect(fresh.map((p) => p.cursor)).toEqual(['1000', '2000', null]);
    const resumed = await pages(sandbox, { ...input, resumeCursor: fresh[0].cursor, attempt: 2 });
    expect(resumed.map((p) => p.cursor)).toEqual(['2000', null]);
    expect(resumed.flatMap((p) => p.items)).toEqual(fresh.slice(1).flatMap((p) => p.items));
    expect(resumed.every((p) => p.total === 2500)).toBe(true);
  });

  test('resuming from any offset yields the same items at the same positions', async () => {
    const sandbox7 = createSandboxProvider({ pageSize: 7 });
    const input = { platform: 'youtube' as const, operation: 'playlist_items', target: 'PLrAXtmErZgOeiKm4sgNOknGvNjby9efdf', limit: 30 };
    const fresh = await items(sandbox7, input);
    const tail = await items(sandbox7, { ...input, resumeCursor: '11' });
    expect(tail).toEqual(fresh.slice(11));
    const otherPaging = await items(createSandboxProvider({ pageSize: 4 }), input);
    expect(otherPaging).toEqual(fresh);
  });

  test('a cursor at or past the end yields one empty last page', async () => {
    const got = await pages(sandbox, { platform: 'instagram', operation: 'posts', target: 'natgeo', limit: 10, resumeCursor: '10' });
    expect(got).toEqual([{ items: [], cursor: null, total: 10 }]);
  });

  test('a malformed cursor is a non-retryable error', async () => {
    const error = await failure(sandbox, { platform: 'instagram', operation: 'posts', target: 'natgeo', limit: 10, resumeCursor: 'abc' });
    expect(error).toBeInstanceOf(ProviderError);
    expect((error as ProviderError).retryable).toBe(false);
  });
});

describe('sandbox provider: counts and paging', () => {
  const sandbox = createSandboxProvider();

  test('twitter followers limit 25000: 25 pages of 1000, 25000 unique profiles, fast', async () => {
    const before = process.cpuUsage();
    const got = await pages(sandbox, { platform: 'twitter', operation: 'followers', target: 'nasa', limit: 25_000 });
    const cpu = process.cpuUsage(before);
    expect(got).toHaveLength(25);
    expect(got.every((p) => p.items.length === 1000 && p.total === 25_000)).toBe(true);
    expect(got.map((p) => p.cursor)).toEqual([...Array.from({ length: 24 }, (_, i) => String((i + 1) * 1000)), null]);
    const all = got.flatMap((p) => p.items) as ProfileItem[];
    expect(new Set(all.map((i) => i.id)).size).toBe(25_000);
    expect(new Set(all.map((i) => i.username)).size).toBe(25_000);
    expect(all.every((i) => i.kind === 'profile' && /^[A-Za-z0-9_]{1,15}$/.test(i.username ?? ''))).toBe(true);
    expect(all.every((i) => /^\d{9,19}$/.test(i.id))).toBe(true);
    expect((cpu.user + cpu.system) / 1000).toBeLessThan(1000);
  });

  test('instagram following uses pages of 1000 and stops at the limit', async () => {
    const got = await pages(sandbox, { platform: 'instagram', operation: 'following', target: 'natgeo', limit: 2345 });
    expect(got.map((p) => p.items.length)).toEqual([1000, 1000, 345]);
  });

  test('other operations use pages of 100 (or options.pageSize)', async () => {
    const got = await pages(sandbox, {
      platform: 'youtube',
      operation: 'playlist_items',
      target: 'PLrAXtmErZgOeiKm4sgNOknGvNjby9efdf',
      limit: 250,
    });
    expect(got.map((p) => p.items.length)).toEqual([100, 100, 50]);
    expect(got.map((p) => p.cursor)).toEqual(['100', '200', null]);
    const small = await pages(createSandboxProvider({ pageSize: 20 }), {
      platform: 'tiktok',
      operation: 'posts',
      target: 'khaby.lame',
      limit: 50,
    });
    expect(small.map((p) => p.items.length)).toEqual([20, 20, 10]);
  });

  test('a normal target delivers exactly the limit, capped by max_results', async () => {
    expect(await items(sandbox, { platform: 'instagram', operation: 'posts', target: 'natgeo', limit: 12 })).toHaveLength(12);
    expect(await items(sandbox, { platform: 'instagram', operation: 'posts', target: 'natgeo', limit: 150 })).toHaveLength(100);
    expect(await items(sandbox, { platform: 'facebook', operation: 'comments', target: '1234567890123456', limit: 200 })).toHaveLength(200);
  });
});

describe('sandbox provider: sandbox_drift_N', () => {
  test("grows a profile's counts and each item's metrics by N a second since 2026-01-01, and leaves nulls null", () => {
    const at = SANDBOX_DRIFT_EPOCH_MS + 10_000;
    const profile = { id: '1', followers_count: 100, following_count: null, posts_count: 7, bio: 'x' } as unknown as Item;
    expect(drifted(profile, 3, at)).toEqual({ id: '1', followers_count: 130, following_count: null, posts_count: 37, bio: 'x' });
    const post = { id: '2', metrics: { views: null, likes: 5, comments: 0, shares: 1 } } as unknown as Item;
    expect(drifted(post, 2, at + 1500)).toEqual({ id: '2', metrics: { views: null, likes: 27, comments: 22, shares: 23 } });
    expect(post).toEqual({ id: '2', metrics: { views: null, likes: 5, comments: 0, shares: 1 } });
  });

  test('two reads a second apart differ; the same read without the token is the plain item', async () => {
    const sandbox = createSandboxProvider();
    const plain = (
      await items(sandbox, { platform: 'instagram', operation: 'profile', target: 'nasa_sandbox_drift_7', limit: 1 })
    )[0] as ProfileItem;
    const seconds = Math.floor((Date.now() - SANDBOX_DRIFT_EPOCH_MS) / 1000);
    expect(plain.followers_count).toBeGreaterThanOrEqual(7 * seconds);
    const first = (await items(sandbox, {
      platform: 'tiktok',
      operation: 'posts',
      target: 'khaby_sandbox_drift_1000',
      limit: 3,
    })) as PostItem[];
    await new Promise((resolve) => setTimeout(resolve, 1100));
    const second = (await items(sandbox, {
      platform: 'tiktok',
      operation: 'posts',
      target: 'khaby_sandbox_drift_1000',
      limit: 3,
    })) as PostItem[];
    expect(second.map((p) => p.id)).toEqual(first.map((p) => p.id));
    for (const [i, post] of second.entries()) expect(post.metrics.likes! - first[i].metrics.likes!).toBeGreaterThanOrEqual(1000);
  });
});

describe('sandbox provider: magic tokens', () => {
  test('parses every token case-insensitively', () => {
    expect(parseSandboxTokens('Sandbox_Count_7_SANDBOX_SLOW_250_sandbox_flaky_2')).toEqual({
      notFound: false,
      private: false,
      flakyAttempts: 2,
      slowMs: 250,
      empty: false,
      count: 7,
      rolling: 0,
      drift: 0,
    });
    expect(parseSandboxTokens('nasa_Sandbox_Drift_5').drift).toBe(5);
    expect(parseSandboxTokens('Sandbox_Rolling_25 news').rolling).toBe(25);
    expect(parseSandboxTokens('x_SANDBOX_NOT_FOUND').notFound).toBe(true);
    expect(parseSandboxTokens('Sandbox_Private').private).toBe(true);
    expect(parseSandboxTokens('sandbox_empty').empty).toBe(true);
    expect(parseSandboxTokens('natgeo')).toEqual({
      notFound: false,
      private: false,
      flakyAttempts: 0,
      slowMs: 0,
      empty: false,
      count: null,
      rolling: 0,
      drift: 0,
    });
  });

  test('sandbox_not_found: terminal target_not_found', async () => {
    const error = await failure(createSandboxProvider(), { platform: 'youtube', operation: 'video', target: 'abc_SANDBOX_NOT_FOUND' });
    expect(error).toBeInstanceOf(ProviderError);
    expect((error as ProviderError).code).toBe('target_not_found');
    expect((error as ProviderError).retryable).toBe(false);
  });

  test('sandbox_private: terminal target_private', async () => {
    const error = await failure(createSandboxProvider(), {
      platform: 'instagram',
      operation: 'followers',
      target: 'sandbox_private',
      limit: 10,
    });
    expect(error).toBeInstanceOf(ProviderError);
    expect((error as ProviderError).code).toBe('target_private');
    expect((error as ProviderError).retryable).toBe(false);
  });

  test('sandbox_flaky_N: retryable upstream_unavailable on attempts 1..N, then the full result', async () => {
    const sandbox = createSandboxProvider();
    const input = { platform: 'tiktok' as const, operation: 'posts', target: 'sandbox_flaky_2', limit: 30 };
    for (const attempt of [1, 2]) {
      const error = await failure(sandbox, { ...input, attempt });
      expect(error).toBeInstanceOf(ProviderError);
      expect((error as ProviderError).code).toBe('upstream_unavailable');
      expect((error as ProviderError).retryable).toBe(true);
    }
    const got = await items(sandbox, { ...input, attempt: 3 });
    expect(got).toHaveLength(30);
    expect(got).toEqual(await items(sandbox, { ...input, attempt: 4 }));
  });

  test('sandbox_slow_MS and latencyMs: waited before every page', async () => {
    const { calls, sleep } = recordingSleep();
    const sandbox = createSandboxProvider({ latencyMs: 5, pageSize: 10, sleep });
    const got = await pages(sandbox, { platform: 'instagram', operation: 'hashtag', target: 'sandbox_slow_40', limit: 25 });
    expect(got).toHaveLength(3);
    expect(calls).toEqual([45, 45, 45]);

    const plain = recordingSleep();
    await pages(createSandboxProvider({ latencyMs: 7, pageSize: 10, sleep: plain.sleep }), {
      platform: 'instagram',
      operation: 'hashtag',
      target: 'travel',
      limit: 25,
    });
    expect(plain.calls).toEqual([7, 7, 7]);

    const none = recordingSleep();
    await pages(createSandboxProvider({ sleep: none.sleep }), { platform: 'instagram', operation: 'hashtag', target: 'travel', limit: 25 });
    expect(none.calls).toEqual([]);
  });

  test('sandbox_slow_MS really waits', async () => {
    const started = Date.now();
    const got = await pages(createSandboxProvider({ pageSize: 5 }), {
      platform: 'twitter',
      operation: 'search',
      target: 'sandbox_slow_40',
      limit: 10,
    });
    expect(got).toHaveLength(2);
    expect(Date.now() - started).toBeGreaterThanOrEqual(75);
  });

  test('abort during a slow page rejects promptly with an AbortError', async () => {
    const controller = new AbortController();
    const sandbox = createSandboxProvider();
    const started = Date.now();
    setTimeout(() => controller.abort(), 30);
    const error = await failure(sandbox, {
      platform: 'instagram',
      operation: 'posts',
      target: 'sandbox_slow_60000',
      limit: 10,
      signal: controller.signal,
    });
    expect(isAbortError(error)).toBe(true);
    expect(Date.now() - started).toBeLessThan(2000);
  });

  test('abort between pages stops the extraction', async () => {
    const controller = new AbortController();
    const sandbox = createSandboxProvider({ pageSize: 10 });
    const seen: Page[] = [];
    let caught: unknown = null;
    try {
      for await (const page of sandbox.extract(
        request({ platform: 'tiktok', operation: 'search', target: 'cats', limit: 50, signal: controller.signal }),
      )) {
        seen.push(page);
        controller.abort();
      }
    } catch (error) {
      caught = error;
    }
    expect(seen).toHaveLength(1);
    expect(isAbortError(caught)).toBe(true);
  });

  test('abortableSleep resolves after the delay and rejects at once on an aborted signal', async () => {
    await expect(abortableSleep(5, new AbortController().signal)).resolves.toBeUndefined();
    const controller = new AbortController();
    controller.abort();
    await expect(abortableSleep(10_000, controller.signal)).rejects.toMatchObject({ name: 'AbortError' });
  });

  test('sandbox_empty: one empty last page', async () => {
    const got = await pages(createSandboxProvider(), { platform: 'facebook', operation: 'posts', target: 'sandbox_empty', limit: 50 });
    expect(got).toEqual([{ items: [], cursor: null, total: 0 }]);
  });

  test('sandbox_count_N: min(N, limit) results', async () => {
    const sandbox = createSandboxProvider({ pageSize: 3 });
    const seven = await pages(sandbox, { platform: 'youtube', operation: 'search', target: 'cats sandbox_count_7', limit: 50 });
    expect(seven.flatMap((p) => p.items)).toHaveLength(7);
    expect(seven.map((p) => p.items.length)).toEqual([3, 3, 1]);
    expect(seven.every((p) => p.total === 7)).toBe(true);
    expect(await items(sandbox, { platform: 'youtube', operation: 'search', target: 'cats sandbox_count_500', limit: 20 })).toHaveLength(
      20,
    );
    expect(await items(sandbox, { platform: 'youtube', operation: 'search', target: 'sandbox_count_0', limit: 20 })).toHaveLength(0);
  });
});

describe('sandbox provider: profile bundles', () => {
  test('first page is the profile, then includePosts posts of the posts operation', async () => {
    const sandbox = createSandboxProvider({ pageSize: 5 });
    const got = await pages(sandbox, { platform: 'instagram', operation: 'profile', target: 'natgeo', limit: 1, includePosts: 12 });
    expect(got.map((p) => p.items.length)).toEqual([1, 5, 5, 2]);
    expect(got.map((p) => p.cursor)).toEqual(['1', '6', '11', null]);
    expect(got.every((p) => p.total === 13)).toBe(true);
    const [profile, ...posts] = got.flatMap((p) => p.items);
    expect(profile).toEqual((await items(sandbox, { platform: 'instagram', operation: 'profile', target: 'natgeo' }))[0]);
    expect(profile.kind).toBe('profile');
    expect(posts.every((p) => p.kind === 'post')).toBe(true);
    expect(posts).toEqual(await items(sandbox, { platform: 'instagram', operation: 'posts', target: 'natgeo', limit: 12 }));
  });

  test('bundled posts use the platform posts kind and count tokens apply to the posts', async () => {
    const sandbox = createSandboxProvider();
    const yt = await items(sandbox, { platform: 'youtube', operation: 'profile', target: 'mkbhd', includePosts: 4 });
    expect(yt.map((i) => i.kind)).toEqual(['profile', 'video', 'video', 'video', 'video']);
    const counted = await items(sandbox, { platform: 'tiktok', operation: 'profile', target: 'sandbox_count_3', includePosts: 10 });
    expect(counted.map((i) => i.kind)).toEqual(['profile', 'video', 'video', 'video']);
    const resumed = await items(sandbox, {
      platform: 'tiktok',
      operation: 'profile',
      target: 'sandbox_count_3',
      includePosts: 10,
      resumeCursor: '1',
    });
    expect(resumed).toEqual(counted.slice(1));
  });

  test('a profile without includePosts is one item', async () => {
    const got = await pages(createSandboxProvider(), { platform: 'twitter', operation: 'profile', target: 'nasa' });
    expect(got).toHaveLength(1);
    expect(got[0].items).toHaveLength(1);
    expect(got[0].cursor).toBeNull();
  });
});

describe('sandbox provider: items look like the network', () => {
  const sandbox = createSandboxProvider();

  test('post and video URLs and IDs follow each network', async () => {
    const ig = (await items(sandbox, { platform: 'instagram', operation: 'posts', target: 'natgeo', limit: 100 })) as PostItem[];
    for (const p of ig) expect(p.url).toBe(`https://www.instagram.com/p/${p.id}/`);
    expect(ig.every((p) => /^[A-Za-z0-9_-]{11}$/.test(p.id))).toBe(true);
    const withCollaborators = ig.filter((p) => p.collaborator_usernames.length > 0);
    expect(withCollaborators.length).toBeGreaterThan(0);
    expect(withCollaborators.length).toBeLessThan(ig.length);
    expect(ig.some((p) => p.username !== 'natgeo' && p.collaborator_usernames.includes('natgeo'))).toBe(true);

    const reels = (await items(sandbox, { platform: 'instagram', operation: 'reels', target: 'natgeo', limit: 5 })) as PostItem[];
    for (const p of reels) expect(p.url).toBe(`https://www.instagram.com/reel/${p.id}/`);

    const tt = (await items(sandbox, { platform: 'tiktok', operation: 'posts', target: 'khaby.lame', limit: 20 })) as PostItem[];
    for (const p of tt) {
      expect(p.id).toMatch(/^\d{19}$/);
      expect(p.url).toBe(`https://www.tiktok.com/@khaby.lame/video/${p.id}`);
      expect(p.kind).toBe('video');
    }

    const yt = (await items(sandbox, { platform: 'youtube', operation: 'posts', target: 'mkbhd', limit: 60 })) as PostItem[];
    for (const p of yt) {
      expect(p.id).toMatch(/^[A-Za-z0-9_-]{11}$/);
      expect([`https://www.youtube.com/watch?v=${p.id}`, `https://www.youtube.com/shorts/${p.id}`]).toContain(p.url);
      expect(p.title).toEqual(expect.any(String));
      expect(p.caption).not.toContain(p.title!);
    }
    expect(new Set(yt.map((p) => p.media_type))).toEqual(new Set(['video', 'short']));

    const tw = (await items(sandbox, { platform: 'twitter', operation: 'posts', target: 'nasa', limit: 20 })) as PostItem[];
    for (const p of tw) expect(p.url).toBe(`https://x.com/nasa/status/${p.id}`);
    expect(tw.every((p) => /^1[89]\d{17}$/.test(p.id))).toBe(true);

    const fb = (await items(sandbox, { platform: 'facebook', operation: 'posts', target: 'nasa', limit: 20 })) as PostItem[];
    for (const p of fb) expect(p.url).toBe(`https://www.facebook.com/nasa/posts/${p.id}`);
  });

  test('lists are newest first, timestamps derive from the fixed epoch, hashtags match captions', async () => {
    const got = (await items(sandbox, { platform: 'tiktok', operation: 'hashtag', target: 'fyp', limit: 200 })) as PostItem[];
    const times = got.map((p) => p.published_at!);
    expect([...times].sort().reverse()).toEqual(times);
    expect(times[0] <= EPOCH_ISO).toBe(true);
    for (const p of got) {
      expect(p.hashtags[0]).toBe('fyp');
      for (const tag of p.hashtags) expect(p.caption).toContain(`#${tag}`);
    }
  });

  test('a content target keeps its ID and author', async () => {
    const [video] = (await items(sandbox, {
      platform: 'youtube',
      operation: 'video',
      target: 'https://youtube.com/watch?v=dQw4w9WgXcQ',
    })) as PostItem[];
    expect(video.id).toBe('dQw4w9WgXcQ');
    expect(video.url).toBe('https://www.youtube.com/watch?v=dQw4w9WgXcQ');
    const [tweet] = (await items(sandbox, {
      platform: 'twitter',
      operation: 'post',
      target: 'https://x.com/nasa/status/1790000000000000000',
    })) as PostItem[];
    expect(tweet.id).toBe('1790000000000000000');
    expect(tweet.username).toBe('nasa');
    const [channel] = (await items(sandbox, {
      platform: 'youtube',
      operation: 'profile',
      target: 'UCBJycsmduvYEL83R_U4JriQ',
    })) as ProfileItem[];
    expect(channel.id).toBe('UCBJycsmduvYEL83R_U4JriQ');
    const [handle] = (await items(sandbox, { platform: 'youtube', operation: 'profile', target: 'mkbhd' })) as ProfileItem[];
    expect(handle.id).toMatch(/^UC[A-Za-z0-9_-]{22}$/);
    expect(handle.url).toBe('https://www.youtube.com/@mkbhd');
  });

  test('facebook comment_url works as the target of comment_replies', async () => {
    const comments = (await items(sandbox, {
      platform: 'facebook',
      operation: 'comments',
      target: 'https://facebook.com/nasa/posts/1234567890123456',
      limit: 5,
    })) as CommentItem[];
    for (const c of comments) {
      expect(c.parent_id).toBe('1234567890123456');
      expect(c.comment_url).toBe(`https://www.facebook.com/nasa/posts/1234567890123456?comment_id=${c.id}`);
    }
    const check = normalizeTarget('facebook', 'comment_url', comments[0].comment_url!);
    expect(check.ok).toBe(true);
    const target = check.ok ? check.normalized : '';
    const replies = (await items(sandbox, { platform: 'facebook', operation: 'comment_replies', target, limit: 5 })) as CommentItem[];
    expect(replies).toHaveLength(5);
    for (const r of replies) {
      expect(r.kind).toBe('comment');
      expect(r.parent_id).toBe(comments[0].id);
    }
  });

  test('instagram highlights carry title, cover and an ID usable as a highlight_items target', async () => {
    const highlights = (await items(sandbox, {
      platform: 'instagram',
      operation: 'highlights',
      target: 'natgeo',
      limit: 10,
    })) as HighlightItem[];
    for (const h of highlights) {
      expect(h.id).toMatch(/^\d{17}$/);
      expect(h.title).toEqual(expect.any(String));
      expect(h.cover_url).toMatch(/^https:\/\//);
    }
    const check = normalizeTarget('instagram', 'highlight', highlights[0].id);
    expect(check.ok).toBe(true);
    const stories = await items(sandbox, {
      platform: 'instagram',
      operation: 'highlight_items',
      target: check.ok ? check.normalized : '',
      limit: 4,
    });
    expect(stories.map((s) => s.kind)).toEqual(['story', 'story', 'story', 'story']);
  });

  test('transcripts carry text and ordered timing segments', async () => {
    const [t] = (await items(sandbox, {
      platform: 'tiktok',
      operation: 'transcript',
      target: 'https://tiktok.com/@khaby.lame/video/7234567890123456789',
    })) as TranscriptItem[];
    expect(t.id).toBe('7234567890123456789');
    expect(t.segments.length).toBeGreaterThan(0);
    expect(t.text).toBe(t.segments.map((s) => s.text).join(' '));
    let previousEnd = 0;
    for (const s of t.segments) {
      expect(s.start).toBeGreaterThanOrEqual(previousEnd);
      expect(s.end).toBeGreaterThan(s.start);
      previousEnd = s.end;
    }
  });

  test('ads carry advertiser and dates; company ads belong to the named advertiser', async () => {
    const ads = await items(sandbox, { platform: 'facebook', operation: 'adlibrary_company_ads', target: '100064123456789', limit: 20 });
    for (const ad of ads) {
      if (ad.kind !== 'ad') throw new Error('expected ads');
      expect(ad.advertiser_id).toBe('100064123456789');
      expect(ad.advertiser_name).toEqual(expect.any(String));
      expect(ad.first_shown_at! <= ad.last_shown_at!).toBe(true);
      expect(ad.url).toBe(`https://www.facebook.com/ads/library/?id=${ad.id}`);
    }
  });
});
