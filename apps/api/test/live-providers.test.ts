import { startFakeUpstream } from '@sdx/fake-upstream';
import { createSandboxProvider, selectProviders } from '@sdx/providers';
import { eventually, startTestStack, type TestStack } from '@sdx/testing';

/** End to end through HTTP with the YouTube and X adapters in live mode against the fake upstream. */
let fake: Awaited<ReturnType<typeof startFakeUpstream>>;
let stack: TestStack;

beforeAll(async () => {
  fake = await startFakeUpstream();
  const selection = selectProviders(
    {
      PROVIDER_MODE: 'live',
      YOUTUBE_API_KEY: 'dummy-youtube-key',
      YOUTUBE_BASE_URL: `${fake.url}/youtube/v3`,
      X_BEARER_TOKEN: 'dummy-x-token',
      X_BASE_URL: fake.url,
    },
    { sandbox: createSandboxProvider() },
  );
  expect(selection.mode).toBe('live');
  stack = await startTestStack({ providers: selection.providers, withWorker: true });
});
afterAll(async () => {
  await stack.close();
  await fake.close();
});

it('lists only the operations the configured upstreams serve', async () => {
  const res = await stack.api.get('/v1/platforms');
  expect(res.status).toBe(200);
  const byPlatform = Object.fromEntries(
    res.body.map((p: { platform: string; operations: { operation: string }[] }) => [p.platform, p.operations.map((o) => o.operation)]),
  );
  expect(Object.keys(byPlatform).sort()).toEqual(['twitter', 'youtube']);
  expect(byPlatform.youtube).toEqual(['profile', 'posts', 'video', 'comments', 'search', 'trending', 'playlist', 'playlist_items']);
  expect(byPlatform.twitter).toEqual(['profile', 'followers', 'following', 'posts', 'post', 'search']);
});

it('refuses operations no enabled provider serves', async () => {
  const ws = await stack.workspace();
  const res = await stack.api.post('/v1/jobs', {
    headers: ws.auth,
    body: { platform: 'instagram', operation: 'profile', target: 'natgeo' },
  });
  expect(res.status).toBe(422);
  expect(res.body.detail.error).toBe('unsupported_operation');
  const shorts = await stack.api.post('/v1/jobs', {
    headers: ws.auth,
    body: { platform: 'youtube', operation: 'shorts', target: '@fakechannel' },
  });
  expect(shorts.body.detail.error).toBe('unsupported_operation');
});

it('completes youtube posts from the upstream with normalized items and exact billing', async () => {
  const ws = await stack.workspace({ credits: 1000 });
  const created = await stack.api.post('/v1/jobs', {
    headers: ws.auth,
    body: { platform: 'youtube', operation: 'posts', target: '@fakechannel', limit: 120 },
  });
  expect(created.status).toBe(202);
  const done = await eventually(async () => {
    const res = await stack.api.get(`/v1/jobs/${created.body.id}`, { headers: ws.auth });
    return ['completed', 'failed'].includes(res.body.status) ? res : undefined;
  });
  expect(done.body.status).toBe('completed');
  expect(done.body.result_count).toBe(120);
  expect(done.body.billed_credits).toBe(120);
  const items = done.body.result as Array<Record<string, unknown>>;
  expect(new Set(items.map((i) => i.id)).size).toBe(120);
  for (const item of items) {
    expect(item).toMatchObject({ kind: 'video', platform: 'youtube' });
    expect(typeof item.id).toBe('string');
  }
  const usage = await stack.api.get('/v1/usage/current', { headers: ws.auth });
  expect(usage.body).toMatchObject({ credits_used: 120, credits_reserved: 0 });
});

it('fails a missing channel with target_not_found and releases the reservation', async () => {
  const ws = await stack.workspace({ credits: 1000 });
  const created = await stack.api.post('/v1/jobs', {
    headers: ws.auth,
    body: { platform: 'youtube', operation: 'profile', target: '@nobody_here_at_all' },
  });
  const done = await eventually(async () => {
    const res = await stack.api.get(`/v1/jobs/${created.body.id}`, { headers: ws.auth });
    return ['completed', 'failed'].includes(res.body.status) ? res : undefined;
  });
  expect(done.body.status).toBe('failed');
  expect(done.body.error.code).toBe('target_not_found');
  const usage = await stack.api.get('/v1/usage/current', { headers: ws.auth });
  expect(usage.body).toMatchObject({ credits_used: 0, credits_reserved: 0, credits_remaining: 1000 });
});

it('delays the retry until the rate-limit reset the upstream announced, then completes', async () => {
  const ws = await stack.workspace({ credits: 1000 });
  fake.misbehave({ path: '/2/', kind: 'rate_limit', times: 1, resetInSeconds: 3 });
  const before = Date.now();
  const created = await stack.api.post('/v1/jobs', {
    headers: ws.auth,
    body: { platform: 'twitter', operation: 'profile', target: 'fakeuser' },
  });
  const retrying = await eventually(async () => {
    const res = await stack.api.get(`/v1/jobs/${created.body.id}`, { headers: ws.auth });
    return res.body.status === 'queued' && res.body.attempts === 1 && res.body.next_attempt_at ? res : undefined;
  });
  // The backoff base in tests is 50 ms: the 3 s wait comes from x-rate-limit-reset.
  expect(new Date(retrying.body.next_attempt_at).getTime() - before).toBeGreaterThanOrEqual(2000);
  expect(retrying.body.progress_stage).toBe('retrying');
  const usage = await stack.api.get('/v1/usage/current', { headers: ws.auth });
  expect(usage.body.credits_reserved).toBe(1);
  const done = await eventually(async () => {
    const res = await stack.api.get(`/v1/jobs/${created.body.id}`, { headers: ws.auth });
    return res.body.status === 'completed' ? res : undefined;
  }, 15_000);
  expect(done.body.attempts).toBe(2);
  expect(Date.now() - before).toBeGreaterThanOrEqual(2000);
});
