import { startFakeUpstream, type FakeUpstream } from '@sdx/fake-upstream';
import {
  createProviderRegistry,
  createSandboxProvider,
  selectProviders,
  untagCursor,
  type Provider,
  type SourceReport,
} from '@sdx/providers';
import { collect, failure, request } from './helpers';

/**
 * Issue 38, item 3: the run-time fallback between the official source and the vendor, through
 * the fakes, with both configured for YouTube shorts (the channel's shorts playlist, and the
 * vendor's channel shorts).
 */
let fake: FakeUpstream;
beforeAll(async () => {
  fake = await startFakeUpstream();
});
afterAll(() => fake.close());
beforeEach(() => fake.reset());

function shorts(env: NodeJS.ProcessEnv = {}): Provider {
  const selection = selectProviders(
    {
      PROVIDER_MODE: 'live',
      YOUTUBE_API_KEY: 'dummy-youtube-key',
      YOUTUBE_BASE_URL: `${fake.url}/youtube/v3`,
      YOUTUBE_SHORTS_PLAYLIST: '1',
      SCRAPECREATORS_API_KEY: 'dummy-vendor-key',
      SCRAPECREATORS_BASE_URL: `${fake.url}/scrapecreators`,
      ...env,
    },
    { sandbox: createSandboxProvider() },
  );
  const provider = createProviderRegistry(selection.providers).resolve('youtube', 'shorts');
  if (!provider) throw new Error('youtube shorts is not served');
  return provider;
}

const YOUTUBE = '/youtube/v3/';
const VENDOR = '/scrapecreators/';
/** YouTube's answer to a key whose project has not enabled the API (a permission refusal). */
const ACCESS_NOT_CONFIGURED = {
  status: 403,
  body: {
    error: {
      code: 403,
      message: 'YouTube Data API v3 has not been used in project 1234 before or it is disabled.',
      errors: [
        {
          message: 'YouTube Data API v3 has not been used in project 1234 before or it is disabled.',
          domain: 'usageLimits',
          reason: 'accessNotConfigured',
        },
      ],
      status: 'PERMISSION_DENIED',
    },
  },
};

function reported(): { reports: SourceReport[]; onSource: (r: SourceReport) => void } {
  const reports: SourceReport[] = [];
  return { reports, onSource: (r) => reports.push(r) };
}

const sources = (items: Array<{ source?: unknown }>) => [...new Set(items.map((i) => i.source))];
const calls = (prefix: string) => fake.requests.filter((r) => r.path.startsWith(prefix)).length;

it('official → vendor when the official key is refused (upstream_auth)', async () => {
  fake.misbehave({ path: YOUTUBE, kind: 'token_invalid', times: 1 });
  const { reports, onSource } = reported();
  const { items, pages } = await collect(shorts(), request('youtube', 'shorts', '@fakechannel', 30, { onSource }));
  expect(items).toHaveLength(30);
  expect(sources(items)).toEqual(['vendor']);
  expect(reports).toEqual([
    {
      source: 'official',
      provider: 'youtube-data-api',
      outcome: 'failed',
      error_code: 'upstream_auth',
      quota: { unit: 'units a day', used: 1, remaining: null, limit: 10_000 },
    },
    {
      source: 'vendor',
      provider: 'scrapecreators',
      outcome: 'served',
      error_code: null,
      quota: { unit: 'credits', used: 0, remaining: expect.any(Number), limit: null },
    },
  ]);
  // A cursor the vendor made says so: a resumed attempt goes on with the vendor.
  const cursor = pages.find((p) => p.cursor !== null)?.cursor;
  if (cursor) expect(untagCursor(cursor).source).toBe('vendor');
});

it('official → vendor on a permission refusal (the API not enabled for the key)', async () => {
  fake.misbehave({ path: YOUTUBE, kind: 'reply', reply: ACCESS_NOT_CONFIGURED, times: 1 });
  const { reports, onSource } = reported();
  const { items } = await collect(shorts(), request('youtube', 'shorts', '@fakechannel', 10, { onSource }));
  expect(items).toHaveLength(10);
  expect(sources(items)).toEqual(['vendor']);
  expect(reports.map((r) => `${r.source}:${r.outcome}`)).toEqual(['official:failed', 'vendor:served']);
});

it('vendor → official when PROVIDER_ORDER puts the vendor first', async () => {
  fake.misbehave({ path: VENDOR, kind: 'token_invalid', times: 1 });
  const { reports, onSource } = reported();
  const { items } = await collect(
    shorts({ PROVIDER_ORDER: 'vendor,official' }),
    request('youtube', 'shorts', '@fakechannel', 10, { onSource }),
  );
  expect(items).toHaveLength(10);
  expect(sources(items)).toEqual(['official']);
  expect(reports.map((r) => `${r.source}:${r.outcome}`)).toEqual(['vendor:failed', 'official:served']);
});

it('no fallback with PROVIDER_FALLBACK=0: the refusal ends the attempt', async () => {
  fake.misbehave({ path: YOUTUBE, kind: 'token_invalid', times: 1 });
  const { reports, onSource } = reported();
  const error = await failure(shorts({ PROVIDER_FALLBACK: '0' }), request('youtube', 'shorts', '@fakechannel', 10, { onSource }));
  expect(error.code).toBe('upstream_auth');
  expect(error.context.source).toBe('official');
  expect(calls(VENDOR)).toBe(0);
  expect(reports.map((r) => `${r.source}:${r.outcome}`)).toEqual(['official:failed']);
});

it('no fallback on other errors (a rate limit is retried on the same source)', async () => {
  fake.misbehave({ path: YOUTUBE, kind: 'rate_limit', times: 1, retryAfterSeconds: 1 });
  const error = await failure(shorts(), request('youtube', 'shorts', '@fakechannel', 10));
  expect(error.code).toBe('rate_limited');
  expect(error.retryable).toBe(true);
  expect(calls(VENDOR)).toBe(0);
});

it("both refuse: the error is the last source's, naming both sources tried", async () => {
  fake.misbehave({ path: YOUTUBE, kind: 'token_invalid', times: 1 });
  fake.misbehave({ path: VENDOR, kind: 'credits', times: 1 });
  const { reports, onSource } = reported();
  const error = await failure(shorts(), request('youtube', 'shorts', '@fakechannel', 10, { onSource }));
  expect(error.code).toBe('quota_exceeded');
  expect(error.context).toMatchObject({ source: 'vendor', sources_tried: ['official', 'vendor'] });
  expect(reports.map((r) => `${r.source}:${r.outcome}:${r.error_code}`)).toEqual([
    'official:failed:upstream_auth',
    'vendor:failed:quota_exceeded',
  ]);
});

it('a resumed attempt goes on with the source that made its cursor, and does not fall over', async () => {
  fake.misbehave({ path: YOUTUBE, kind: 'token_invalid', times: 1 });
  const first = await collect(shorts(), request('youtube', 'shorts', '@fakechannel', 60));
  const cursor = first.pages[0]?.cursor;
  expect(cursor).toBeTruthy();
  expect(untagCursor(cursor!).source).toBe('vendor');
  fake.reset();
  const { items } = await collect(shorts(), request('youtube', 'shorts', '@fakechannel', 60, { resumeCursor: cursor!, attempt: 2 }));
  expect(sources(items)).toEqual(['vendor']);
  expect(calls(YOUTUBE)).toBe(0);
});

it('a single source is not wrapped in tags, and reports what served', async () => {
  const { reports, onSource } = reported();
  const provider = shorts({ PROVIDER_ROUTES: 'youtube.shorts=official' });
  const { pages } = await collect(provider, request('youtube', 'shorts', '@fakechannel', 60, { onSource }));
  expect(pages.every((p) => p.cursor === null || untagCursor(p.cursor).source === null)).toBe(true);
  expect(reports).toEqual([
    {
      source: 'official',
      provider: 'youtube-data-api',
      outcome: 'served',
      error_code: null,
      quota: expect.objectContaining({ unit: 'units a day' }),
    },
  ]);
  // YouTube's cost is counted as published: one unit per list call the attempt made.
  expect(reports[0]?.quota?.used).toBe(calls(YOUTUBE));
});

describe('source health gate', () => {
  it('a source marked down is skipped while another is up; the vendor serves without the official source being called', async () => {
    const { reports, onSource } = reported();
    const gate = { usable: (provider: string) => provider !== 'youtube-data-api' };
    const selection = selectProviders(
      {
        PROVIDER_MODE: 'live',
        YOUTUBE_API_KEY: 'k',
        YOUTUBE_BASE_URL: `${fake.url}/youtube/v3`,
        YOUTUBE_SHORTS_PLAYLIST: '1',
        SCRAPECREATORS_API_KEY: 'v',
        SCRAPECREATORS_BASE_URL: `${fake.url}/scrapecreators`,
      },
      { sandbox: createSandboxProvider(), gate },
    );
    const provider = createProviderRegistry(selection.providers).resolve('youtube', 'shorts')!;
    const { items } = await collect(provider, request('youtube', 'shorts', '@fakechannel', 10, { onSource }));
    expect(sources(items)).toEqual(['vendor']);
    expect(calls(YOUTUBE)).toBe(0);
    expect(reports.map((r) => r.source)).toEqual(['vendor']);
  });

  it('when every source is down, they are all still tried', async () => {
    const selection = selectProviders(
      {
        PROVIDER_MODE: 'live',
        YOUTUBE_API_KEY: 'k',
        YOUTUBE_BASE_URL: `${fake.url}/youtube/v3`,
        YOUTUBE_SHORTS_PLAYLIST: '1',
        SCRAPECREATORS_API_KEY: 'v',
        SCRAPECREATORS_BASE_URL: `${fake.url}/scrapecreators`,
      },
      { sandbox: createSandboxProvider(), gate: { usable: () => false } },
    );
    const { items } = await collect(
      createProviderRegistry(selection.providers).resolve('youtube', 'shorts')!,
      request('youtube', 'shorts', '@fakechannel', 10),
    );
    expect(sources(items)).toEqual(['official']);
  });
});

describe('quota as the sources report it', () => {
  it("X: what the answer's x-rate-limit-remaining says is left", async () => {
    const { reports, onSource } = reported();
    const selection = selectProviders(
      { PROVIDER_MODE: 'live', X_BEARER_TOKEN: 't', X_BASE_URL: fake.url },
      { sandbox: createSandboxProvider() },
    );
    const provider = createProviderRegistry(selection.providers).resolve('twitter', 'profile')!;
    await collect(provider, request('twitter', 'profile', 'fakeuser', 1, { onSource }));
    const sent = fake.requests.filter((r) => r.path.startsWith('/2/')).length;
    expect(reports[0]?.quota).toEqual({
      unit: "requests left in the endpoint's 15-minute window",
      used: 0,
      remaining: 900 - sent,
      limit: null,
    });
  });

  it('the vendor: credits_remaining of its last answer; YouTube: search counts 100 units', async () => {
    const { reports, onSource } = reported();
    await collect(shorts({ PROVIDER_ORDER: 'vendor,official' }), request('youtube', 'shorts', '@fakechannel', 10, { onSource }));
    const last = fake.requests.filter((r) => r.path.startsWith(VENDOR)).at(-1)?.response?.body as { credits_remaining: number };
    expect(reports[0]?.quota).toEqual({ unit: 'credits', used: 0, remaining: last.credits_remaining, limit: null });

    const yt = reported();
    const selection = selectProviders(
      { PROVIDER_MODE: 'live', YOUTUBE_API_KEY: 'k', YOUTUBE_BASE_URL: `${fake.url}/youtube/v3` },
      { sandbox: createSandboxProvider() },
    );
    fake.reset();
    await collect(
      createProviderRegistry(selection.providers).resolve('youtube', 'search')!,
      request('youtube', 'search', 'cats', 5, { onSource: yt.onSource }),
    );
    const searches = fake.requests.filter((r) => r.path.endsWith('/search')).length;
    const others = fake.requests.filter((r) => r.path.startsWith(YOUTUBE) && !r.path.endsWith('/search')).length;
    expect(searches).toBeGreaterThan(0);
    expect(yt.reports[0]?.quota?.used).toBe(searches * 100 + others);
  });
});
