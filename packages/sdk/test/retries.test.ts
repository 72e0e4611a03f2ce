import { ApiError, ConnectionError, type ScheduleRequest } from '@sdx/sdk';
import { countWorkspaceRows, type SeededWorkspace, type ServedStack, startServedStack, type TestStack } from '@sdx/testing';
import { backoff } from '../src/transport';
import { clientFor, startProxy } from './support';

/**
 * Safe retries through a loopback proxy that plays the network between the SDK and the real
 * service: it cuts connections after the service answered, or answers 429/503 itself.
 */

let stack: TestStack;
let served: ServedStack;
beforeAll(async () => {
  served = await startServedStack();
  stack = served.stack;
});
afterAll(async () => {
  await served.close();
});

let ws: SeededWorkspace;
beforeEach(async () => {
  ws = await stack.workspace({ credits: 10_000 });
});

const body = { platform: 'instagram', operation: 'posts', target: 'natgeo', limit: 10 } as const;

it('retries a create whose answer was lost with the same Idempotency-Key: exactly one job exists', async () => {
  const proxy = await startProxy(served.url, ({ method, path, count }) =>
    method === 'POST' && path === '/v1/jobs' && count === 1 ? 'drop-response' : 'pass',
  );
  try {
    const job = await clientFor(proxy.url, ws).jobs.create(body);
    const posts = proxy.seen.filter((r) => r.method === 'POST');
    expect(posts).toHaveLength(2);
    expect(posts[0].headers['idempotency-key']).toBeTruthy();
    expect(posts[1].headers['idempotency-key']).toBe(posts[0].headers['idempotency-key']);
    expect(job.idempotent_replay).toBe(true);
    expect(await countWorkspaceRows(stack, 'jobs', ws.workspaceId)).toBe(1);
  } finally {
    await proxy.close();
  }
});

it("keeps the caller's own Idempotency-Key on every attempt, for batches too", async () => {
  const proxy = await startProxy(served.url, ({ method, count }) => (method === 'POST' && count === 1 ? 'drop-response' : 'pass'));
  try {
    const client = clientFor(proxy.url, ws);
    const batch = await client.batches.create(
      { platform: 'instagram', operation: 'profile', targets: ['natgeo', 'nasa'] },
      { idempotencyKey: 'order-42' },
    );
    expect(proxy.seen.map((r) => r.headers['idempotency-key'])).toEqual(['order-42', 'order-42']);
    expect(batch.idempotent_replay).toBe(true);
    expect(await countWorkspaceRows(stack, 'batches', ws.workspaceId)).toBe(1);
    expect(await countWorkspaceRows(stack, 'jobs', ws.workspaceId)).toBe(2);
  } finally {
    await proxy.close();
  }
});

it('retries 429 and 503 answers, honouring Retry-After, until the service answers', async () => {
  const proxy = await startProxy(served.url, ({ count }) => {
    if (count === 1)
      return { status: 503, headers: { 'retry-after': '0' }, body: { detail: { error: 'service_unavailable', message: 'restarting' } } };
    if (count === 2)
      return { status: 429, headers: { 'retry-after': '0' }, body: { detail: { error: 'rate_limit_exceeded', message: 'slow down' } } };
    return 'pass';
  });
  try {
    const job = await clientFor(proxy.url, ws).jobs.create(body);
    expect(job.status).toBe('queued');
    expect(proxy.seen).toHaveLength(3);
    expect(new Set(proxy.seen.map((r) => r.headers['idempotency-key'])).size).toBe(1);
  } finally {
    await proxy.close();
  }
});

it('gives up after maxRetries and throws the last answer as a typed error', async () => {
  const proxy = await startProxy(served.url, () => ({
    status: 503,
    headers: { 'retry-after': '0' },
    body: { detail: { error: 'service_unavailable', message: 'down' } },
  }));
  try {
    const error = await clientFor(proxy.url, ws, { maxRetries: 3 })
      .account.get()
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ApiError);
    expect(error).toMatchObject({ status: 503, code: 'service_unavailable' });
    expect(proxy.seen).toHaveLength(4);
  } finally {
    await proxy.close();
  }
});

it('never resends a write without an Idempotency-Key whose answer was lost', async () => {
  const proxy = await startProxy(served.url, ({ method, count }) => (method === 'POST' && count === 1 ? 'drop-response' : 'pass'));
  try {
    const schedule = {
      name: 'Nightly',
      platform: 'instagram',
      operation: 'posts',
      targets: ['natgeo'],
      frequency: 'daily',
      timezone: 'UTC',
      starts_at: '2030-01-01T00:00:00Z',
    } satisfies ScheduleRequest;
    const error = await clientFor(proxy.url, ws)
      .schedules.create(schedule)
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ConnectionError);
    expect(proxy.seen).toHaveLength(1);
    const listed = await clientFor(served.url, ws).schedules.list();
    expect(listed.data).toHaveLength(1);
  } finally {
    await proxy.close();
  }
});

it('retries a write without a key only when the service wrote nothing (429, 503 rate_limiter_unavailable)', async () => {
  let failNext: string | null = 'rate_limiter_unavailable';
  const proxy = await startProxy(served.url, () => {
    const error = failNext;
    failNext = null;
    return error === null ? 'pass' : { status: 503, headers: { 'retry-after': '0' }, body: { detail: { error, message: 'temporary' } } };
  });
  try {
    const client = clientFor(proxy.url, ws);
    const key = await client.keys.create({ name: 'ci' });
    expect(key.api_key).toMatch(/^sdx_live_/);
    expect(proxy.seen).toHaveLength(2);

    failNext = 'service_unavailable';
    await expect(client.keys.create({ name: 'ci' })).rejects.toMatchObject({ status: 503, code: 'service_unavailable' });
    expect(proxy.seen).toHaveLength(3);
  } finally {
    await proxy.close();
  }
});

it('backs off exponentially with full jitter, never below Retry-After', () => {
  const policy = { maxRetries: 5, baseDelayMs: 100, maxDelayMs: 1000, maxRetryAfterMs: 60_000 };
  expect([0, 1, 2, 3, 4].map((attempt) => backoff(policy, attempt, null, () => 1))).toEqual([100, 200, 400, 800, 1000]);
  expect(backoff(policy, 3, null, () => 0)).toBe(0);
  expect(backoff(policy, 0, 2, () => 0.5)).toBe(2000);
  expect(backoff(policy, 4, 0.5, () => 1)).toBe(1000);
});
