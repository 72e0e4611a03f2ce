import { FIXTURES, startFakeUpstream, type FakeUpstream } from '@sdx/fake-upstream';
import { createYouTubeProvider, ProviderError, type PostItem, type Provider } from '@sdx/providers';
import { collect, failure, request } from './helpers';

const KEY = 'AIzaSyFAKE-youtube-key-0123456789';
const POST_KEYS = [
  'kind',
  'platform',
  'id',
  'username',
  'caption',
  'url',
  'published_at',
  'title',
  'media_type',
  'duration_seconds',
  'hashtags',
  'collaborator_usernames',
  'metrics',
  'source',
];
const COMMENT_KEYS = [
  'kind',
  'platform',
  'id',
  'username',
  'caption',
  'url',
  'published_at',
  'parent_id',
  'comment_url',
  'likes',
  'reply_count',
  'source',
];
const PROFILE_KEYS = [
  'kind',
  'platform',
  'id',
  'username',
  'caption',
  'url',
  'published_at',
  'display_name',
  'bio',
  'avatar_url',
  'verified',
  'private',
  'followers_count',
  'following_count',
  'posts_count',
  'source',
];

let fake: FakeUpstream;
let youtube: Provider;
const NOW = Date.parse('2024-01-15T20:00:00Z'); // 12:00 PST

beforeAll(async () => {
  fake = await startFakeUpstream();
});
afterAll(() => fake.close());
beforeEach(() => {
  fake.reset();
  youtube = createYouTubeProvider({ apiKey: KEY, baseUrl: `${fake.url}/youtube/v3`, retryDelayMs: 10, now: () => NOW });
});

const paths = (prefix: string) => fake.requests.filter((r) => r.path === `/youtube/v3${prefix}`);

describe('youtube adapter: paging', () => {
  it('posts: pages to exactly the limit and makes no request once it is reached', async () => {
    const { pages, items } = await collect(youtube, request('youtube', 'posts', 'fakechannel', 120));
    expect(items).toHaveLength(120);
    expect(pages.map((p) => p.items.length)).toEqual([50, 50, 20]);
    expect(pages.map((p) => p.cursor === null)).toEqual([false, false, true]);
    expect(paths('/channels')).toHaveLength(1);
    expect(paths('/playlistItems').map((r) => r.query.maxResults)).toEqual(['50', '50', '20']);
    expect(paths('/videos')).toHaveLength(3);
    expect(fake.requests).toHaveLength(7);
    expect(new Set(items.map((i) => i.id)).size).toBe(120);
  });

  it('playlist_items and trending page across several pages', async () => {
    const playlist = await collect(youtube, request('youtube', 'playlist_items', FIXTURES.youtube.playlist.id, 130));
    expect(playlist.items).toHaveLength(130);
    expect(paths('/playlistItems').map((r) => r.query.maxResults)).toEqual(['50', '50', '30']);
    fake.reset();
    const trending = await collect(youtube, request('youtube', 'trending', 'US', 75));
    expect(trending.items).toHaveLength(75);
    expect(fake.requests.map((r) => [r.query.chart, r.query.regionCode, r.query.maxResults])).toEqual([
      ['mostPopular', 'US', '50'],
      ['mostPopular', 'US', '25'],
    ]);
  });

  it('stops when the upstream has no more', async () => {
    const { items, pages } = await collect(youtube, request('youtube', 'comments', 'fvch0000001', 100));
    expect(items).toHaveLength(100);
    expect(paths('/commentThreads').map((r) => r.query.maxResults)).toEqual(['100']);
    expect(pages.at(-1)?.cursor).toBeNull();
    fake.reset();
    const small = await collect(youtube, request('youtube', 'search', `${FIXTURES.emptyQueryWord} at all`, 50));
    expect(small.items).toHaveLength(0);
    expect(fake.requests).toHaveLength(1);
  });

  it('resumes from a saved cursor without repeating work', async () => {
    const full = await collect(youtube, request('youtube', 'posts', 'fakechannel', 120));
    const saved = full.pages[0]?.cursor ?? null;
    fake.reset();
    const resumed = await collect(youtube, request('youtube', 'posts', 'fakechannel', 120, { resumeCursor: saved, attempt: 2 }));
    expect(resumed.items.map((i) => i.id)).toEqual(full.items.slice(50).map((i) => i.id));
    expect(paths('/channels')).toHaveLength(0);
    expect(paths('/playlistItems').map((r) => r.query.maxResults)).toEqual(['50', '20']);
  });

  it('profile with include_posts: the profile, then the posts', async () => {
    const { pages } = await collect(youtube, request('youtube', 'profile', 'https://youtube.com/@fakechannel', 1, { includePosts: 60 }));
    expect(pages[0]?.items.map((i) => i.kind)).toEqual(['profile']);
    expect(pages.slice(1).flatMap((p) => p.items)).toHaveLength(60);
    expect(paths('/channels')).toHaveLength(1);
  });
});

describe('youtube adapter: mapping', () => {
  it('maps channels, videos, comments and playlists into the normalized shapes', async () => {
    const profile = (await collect(youtube, request('youtube', 'profile', FIXTURES.youtube.channel.id, 1))).items[0];
    expect(Object.keys(profile ?? {})).toEqual(PROFILE_KEYS);
    expect(profile).toMatchObject({
      kind: 'profile',
      platform: 'youtube',
      id: FIXTURES.youtube.channel.id,
      username: 'fakechannel',
      display_name: 'Fake Channel',
      followers_count: 98700,
      posts_count: FIXTURES.youtube.channel.videos,
      url: 'https://www.youtube.com/@fakechannel',
    });

    const video = (await collect(youtube, request('youtube', 'video', 'https://youtu.be/fvch0000003', 1))).items[0];
    expect(Object.keys(video ?? {})).toEqual(POST_KEYS);
    expect(video).toMatchObject({
      kind: 'video',
      platform: 'youtube',
      id: 'fvch0000003',
      url: 'https://www.youtube.com/watch?v=fvch0000003',
      media_type: 'video',
    });
    const v = video as PostItem;
    expect(typeof v.metrics.views).toBe('number');
    expect(typeof v.caption).toBe('string');
    expect(v.duration_seconds).toBeGreaterThan(0);
    expect(v.hashtags).toContain('fake');

    const comment = (await collect(youtube, request('youtube', 'comments', 'https://www.youtube.com/watch?v=fvch0000001', 1))).items[0];
    expect(Object.keys(comment ?? {})).toEqual(COMMENT_KEYS);
    expect(comment).toMatchObject({ kind: 'comment', platform: 'youtube', parent_id: 'fvch0000001' });
    expect(comment?.username).toMatch(/^viewer\d+$/);

    const playlist = (
      await collect(youtube, request('youtube', 'playlist', `https://www.youtube.com/playlist?list=${FIXTURES.youtube.playlist.id}`, 1))
    ).items[0];
    expect(playlist).toMatchObject({ kind: 'playlist', id: FIXTURES.youtube.playlist.id, items_count: FIXTURES.youtube.playlist.items });
  });

  it('sends the key in a header, never in the URL', async () => {
    await collect(youtube, request('youtube', 'video', 'fvch0000003', 1));
    expect(JSON.stringify(fake.requests)).not.toContain(KEY);
    expect(fake.requests[0]?.query.key).toBeUndefined();
  });
});

describe('youtube adapter: errors', () => {
  it('unknown handle (200 with no items) → target_not_found', async () => {
    const error = await failure(youtube, request('youtube', 'profile', 'nobodyhere', 1));
    expect(error).toMatchObject({ code: 'target_not_found', retryable: false });
  });

  it('a 200 answer without items for the channel → target_not_found', async () => {
    fake.misbehave({ path: '/youtube/v3/channels', kind: 'errors_200' });
    expect(await failure(youtube, request('youtube', 'posts', 'fakechannel', 10))).toMatchObject({ code: 'target_not_found' });
  });

  it('videoNotFound → target_not_found; playlistItemsNotAccessible and commentsDisabled → target_private', async () => {
    expect(await failure(youtube, request('youtube', 'comments', 'fvzz0000001', 10))).toMatchObject({
      code: 'target_not_found',
      retryable: false,
    });
    expect(await failure(youtube, request('youtube', 'playlist_items', FIXTURES.youtube.privatePlaylist, 10))).toMatchObject({
      code: 'target_private',
      retryable: false,
    });
    expect(await failure(youtube, request('youtube', 'comments', FIXTURES.youtube.commentsDisabledVideo, 10))).toMatchObject({
      code: 'target_private',
      retryable: false,
    });
  });

  it('invalid region code → invalid_target', async () => {
    expect(await failure(youtube, request('youtube', 'trending', 'ZZ', 10))).toMatchObject({ code: 'invalid_target', retryable: false });
  });

  it('quotaExceeded → quota_exceeded, terminal, retryAfterMs until midnight Pacific', async () => {
    fake.misbehave({ path: '/youtube/v3/', kind: 'quota' });
    const error = await failure(youtube, request('youtube', 'posts', 'fakechannel', 10));
    expect(error).toMatchObject({ code: 'quota_exceeded', retryable: false, retryAfterMs: 12 * 3_600_000 });
    expect(error.context).toMatchObject({ reason: 'quotaExceeded', status: 403 });
  });

  it('429 rateLimitExceeded → rate_limited with Retry-After', async () => {
    fake.misbehave({ path: '/youtube/v3/channels', kind: 'rate_limit', retryAfterSeconds: 30 });
    expect(await failure(youtube, request('youtube', 'profile', 'fakechannel', 1))).toMatchObject({
      code: 'rate_limited',
      retryable: true,
      retryAfterMs: 30_000,
    });
  });

  it('5xx → retryable; the retried job then completes', async () => {
    fake.misbehave({ path: '/youtube/v3/playlistItems', kind: 'server_error', status: 503 });
    const first = await collect(youtube, request('youtube', 'posts', 'fakechannel', 70)).catch((e: unknown) => e);
    expect(first).toBeInstanceOf(ProviderError);
    expect(first).toMatchObject({ code: 'upstream_unavailable', retryable: true });
    const retried = await collect(youtube, request('youtube', 'posts', 'fakechannel', 70, { attempt: 2 }));
    expect(retried.items).toHaveLength(70);
  });

  it('a connection reset is retried by got (bounded); persistent resets → upstream_unavailable', async () => {
    fake.misbehave({ path: '/youtube/v3/videos', kind: 'reset', times: 1 });
    expect((await collect(youtube, request('youtube', 'video', 'fvch0000003', 1))).items).toHaveLength(1);
    expect(paths('/videos')).toHaveLength(2);
    fake.reset();
    fake.misbehave({ path: '/youtube/v3/videos', kind: 'reset', times: 3 });
    const error = await failure(youtube, request('youtube', 'video', 'fvch0000003', 1));
    expect(error).toMatchObject({ code: 'upstream_unavailable', retryable: true });
    expect(paths('/videos')).toHaveLength(3);
  });

  it('a slow upstream times out → upstream_unavailable', async () => {
    const impatient = createYouTubeProvider({
      apiKey: KEY,
      baseUrl: `${fake.url}/youtube/v3`,
      timeoutMs: 150,
      retryLimit: 1,
      retryDelayMs: 5,
    });
    fake.misbehave({ path: '/youtube/v3/videos', kind: 'slow', delayMs: 600, times: 2 });
    const error = await failure(impatient, request('youtube', 'video', 'fvch0000003', 1));
    expect(error).toMatchObject({ code: 'upstream_unavailable', retryable: true });
    expect(error.message).toMatch(/timed out/);
  });

  it('an invalid key → upstream_auth; no error carries the key', async () => {
    const bad = createYouTubeProvider({ apiKey: FIXTURES.youtube.badKey, baseUrl: `${fake.url}/youtube/v3` });
    expect(await failure(bad, request('youtube', 'profile', 'fakechannel', 1))).toMatchObject({ code: 'upstream_auth', retryable: false });
    const errors: ProviderError[] = [];
    for (const kind of ['quota', 'rate_limit', 'server_error', 'token_invalid'] as const) {
      fake.misbehave({ path: '/youtube/v3/', kind });
      errors.push(await failure(youtube, request('youtube', 'profile', 'fakechannel', 1)));
    }
    for (const error of errors) {
      expect(`${error.message} ${JSON.stringify(error.context)}`).not.toContain(KEY);
    }
  });

  it('aborts when the job is cancelled', async () => {
    const controller = new AbortController();
    fake.misbehave({ path: '/youtube/v3/playlistItems', kind: 'slow', delayMs: 2000 });
    const run = collect(youtube, request('youtube', 'posts', 'fakechannel', 50, { signal: controller.signal }));
    setTimeout(() => controller.abort(), 100);
    await expect(run).rejects.toMatchObject({ name: 'AbortError' });
  });
});
