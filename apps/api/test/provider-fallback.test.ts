import { startFakeUpstream } from '@sdx/fake-upstream';
import { createSandboxProvider, selectProviders } from '@sdx/providers';
import { eventually, startTestStack, type TestStack } from '@sdx/testing';

/**
 * Issue 38, item 3, end to end: YouTube shorts with both sources configured (the official
 * channel-shorts playlist and the vendor) through the fakes; the worker's attempt falls over
 * from a refused official key to the vendor, bills once, and the job shows its attempt's sources.
 */
let fake: Awaited<ReturnType<typeof startFakeUpstream>>;
let stack: TestStack;

beforeAll(async () => {
  fake = await startFakeUpstream();
  const selection = selectProviders(
    {
      PROVIDER_MODE: 'live',
      YOUTUBE_API_KEY: 'dummy-youtube-key',
      YOUTUBE_BASE_URL: `${fake.url}/youtube/v3`,
      YOUTUBE_SHORTS_PLAYLIST: '1',
      SCRAPECREATORS_API_KEY: 'dummy-vendor-key',
      SCRAPECREATORS_BASE_URL: `${fake.url}/scrapecreators`,
    },
    { sandbox: createSandboxProvider() },
  );
  stack = await startTestStack({ providers: selection.providers, withWorker: true });
});
afterAll(async () => {
  await stack.close();
  await fake.close();
});
beforeEach(() => fake.reset());

async function finished(ws: { auth: Record<string, string> }, id: string) {
  return eventually(async () => {
    const res = await stack.api.get(`/v1/jobs/${id}`, { headers: ws.auth });
    return ['completed', 'failed'].includes(res.body.status) ? res : undefined;
  }, 15_000);
}

it('a refused official key falls over to the vendor: items from the vendor, billed once, the attempt names both sources', async () => {
  const ws = await stack.workspace({ credits: 1000 });
  fake.misbehave({ path: '/youtube/v3/', kind: 'token_invalid', times: 1 });
  const created = await stack.api.post('/v1/jobs', {
    headers: ws.auth,
    body: { platform: 'youtube', operation: 'shorts', target: '@fakechannel', limit: 20 },
  });
  expect(created.status).toBe(202);
  const done = await finished(ws, created.body.id);
  expect(done.body.status).toBe('completed');
  expect(done.body.attempts).toBe(1);
  expect(done.body.result_count).toBe(20);
  const items = done.body.result as Array<{ source: string }>;
  expect(new Set(items.map((i) => i.source))).toEqual(new Set(['vendor']));
  expect(done.body.attempt_sources).toEqual([
    expect.objectContaining({
      attempt: 1,
      source: 'official',
      provider: 'youtube-data-api',
      outcome: 'failed',
      error_code: 'upstream_auth',
    }),
    expect.objectContaining({ attempt: 1, source: 'vendor', provider: 'scrapecreators', outcome: 'served', error_code: null }),
  ]);
  // One settlement, at the delivered count: what the usage shows is what the job billed.
  expect(done.body.billed_credits).toBeGreaterThan(0);
  const usage = await stack.api.get('/v1/usage/current', { headers: ws.auth });
  expect(usage.body).toMatchObject({ credits_used: done.body.billed_credits, credits_reserved: 0 });
  const ledger = await stack.runtime.services.db
    .selectFrom('credit_ledger')
    .select(['entry_type', 'credits'])
    .where('job_id', '=', created.body.id)
    .execute();
  const settled = ledger.filter((e) => e.entry_type === 'settle');
  expect(settled.reduce((sum, e) => sum + Math.abs(e.credits), 0)).toBe(done.body.billed_credits);
  expect(ledger.filter((e) => e.entry_type === 'reserve')).toHaveLength(1);
});

it("both sources refuse: the job fails with the last source's error, naming both, and nothing is charged", async () => {
  const ws = await stack.workspace({ credits: 1000 });
  fake.misbehave({ path: '/youtube/v3/', kind: 'token_invalid', times: 1 });
  fake.misbehave({ path: '/scrapecreators/', kind: 'token_invalid', times: 1 });
  const created = await stack.api.post('/v1/jobs', {
    headers: ws.auth,
    body: { platform: 'youtube', operation: 'shorts', target: '@fakechannel', limit: 20 },
  });
  const done = await finished(ws, created.body.id);
  expect(done.body.status).toBe('failed');
  expect(done.body.error).toMatchObject({
    code: 'upstream_auth',
    source: 'vendor',
    sources_tried: ['official', 'vendor'],
    retryable: false,
  });
  expect(done.body.attempt_sources.map((s: { source: string; outcome: string }) => `${s.source}:${s.outcome}`)).toEqual([
    'official:failed',
    'vendor:failed',
  ]);
  const usage = await stack.api.get('/v1/usage/current', { headers: ws.auth });
  expect(usage.body).toMatchObject({ credits_used: 0, credits_reserved: 0, credits_remaining: 1000 });
});

it('a job the first source serves names that source alone', async () => {
  const ws = await stack.workspace({ credits: 1000 });
  const created = await stack.api.post('/v1/jobs', {
    headers: ws.auth,
    body: { platform: 'youtube', operation: 'shorts', target: '@fakechannel', limit: 5 },
  });
  const done = await finished(ws, created.body.id);
  expect(done.body.status).toBe('completed');
  expect(done.body.attempt_sources).toEqual([expect.objectContaining({ attempt: 1, source: 'official', outcome: 'served' })]);
  expect(fake.requests.some((r) => r.path.startsWith('/scrapecreators/'))).toBe(false);
});

it("GET /v1/platforms lists each platform's live sources with their health, as the attempts left it", async () => {
  const res = await stack.api.get('/v1/platforms');
  expect(res.status).toBe(200);
  const youtube = (
    res.body as Array<{ platform: string; sources?: Array<{ provider: string; source: string } & Record<string, unknown>> }>
  ).find((p) => p.platform === 'youtube');
  expect(youtube?.sources?.map((s) => `${s.provider}:${s.source}`)).toEqual(['youtube-data-api:official', 'scrapecreators:vendor']);
  const official = youtube?.sources?.[0];
  const vendor = youtube?.sources?.[1];
  expect(official).toMatchObject({
    status: 'up',
    auth_failures: 0,
    quota: { unit: 'units a day', remaining: expect.any(Number), used_today: expect.any(Number) },
  });
  expect(typeof official?.last_success_at).toBe('string');
  expect(official?.error_rate_15m).toBeGreaterThan(0);
  expect(vendor).toMatchObject({ status: 'up', quota: { unit: 'credits', remaining: expect.any(Number), used_today: null } });
  expect(vendor?.attempts_15m).toBeGreaterThanOrEqual(2);
});
