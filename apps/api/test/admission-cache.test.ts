import { sql } from 'kysely';
import { eventually, type SeededWorkspace, startTestStack, type TestStack } from '@sdx/testing';

/**
 * Result cache and deduplication through HTTP with a real worker: identical requests (same
 * normalized target) reuse fresh results for free, Cache-Control: no-cache forces new work,
 * and a request identical to a running job returns that job without reserving again.
 */

let stack: TestStack;
beforeAll(async () => {
  stack = await startTestStack({ withWorker: true });
});
afterAll(async () => {
  await stack.close();
});

async function countReservations(workspaceId: string): Promise<number> {
  const row = await stack.runtime.db
    .selectFrom('credit_reservations')
    .select(sql<number>`count(*)::int`.as('n'))
    .where('workspace_id', '=', workspaceId)
    .executeTakeFirstOrThrow();
  return row.n;
}

async function waitForStatus(s: TestStack, ws: SeededWorkspace, jobId: string, status: string) {
  return eventually(async () => {
    const res = await s.api.get(`/v1/jobs/${jobId}`, { headers: ws.auth });
    return res.body.status === status ? res.body : undefined;
  }, 20_000);
}

describe('result cache', () => {
  it('answers an identical request after completion with a new, cached, free job carrying the same result', async () => {
    const ws = await stack.workspace({ credits: 100 });
    const body = { operation: 'posts', target: 'cacheduser', limit: 5 };
    const first = await stack.api.post('/v1/jobs', { headers: ws.auth, body });
    expect(first.status).toBe(202);
    const done = await waitForStatus(stack, ws, first.body.id, 'completed');
    expect(done.billed_credits).toBe(10);

    const hit = await stack.api.post('/v1/jobs', { headers: ws.auth, body });
    expect(hit.status).toBe(202);
    expect(hit.body.id).not.toBe(first.body.id);
    expect(hit.body).toMatchObject({ status: 'completed', cached: true, deduplicated: false, idempotent_replay: false, billed_credits: 0 });
    expect(hit.body.result_count).toBe(5);
    expect(hit.body.result).toEqual(done.result);
    const fetched = await stack.api.get(`/v1/jobs/${hit.body.id}`, { headers: ws.auth });
    expect(fetched.body).toMatchObject({ status: 'completed', cached: true, billed_credits: 0 });
    expect(fetched.body.result).toEqual(done.result);

    expect(await countReservations(ws.workspaceId)).toBe(1);
    const usage = await stack.api.get('/v1/usage/current', { headers: ws.auth });
    expect(usage.body).toMatchObject({ credits_used: 10, credits_reserved: 0, credits_remaining: 90 });
  });

  it('skips the cache with Cache-Control: no-cache', async () => {
    const ws = await stack.workspace({ credits: 100 });
    const body = { operation: 'profile', target: 'nocacheuser' };
    const first = await stack.api.post('/v1/jobs', { headers: ws.auth, body });
    await waitForStatus(stack, ws, first.body.id, 'completed');

    const fresh = await stack.api.post('/v1/jobs', { headers: { ...ws.auth, 'Cache-Control': 'no-cache' }, body });
    expect(fresh.status).toBe(202);
    expect(fresh.body.id).not.toBe(first.body.id);
    expect(fresh.body).toMatchObject({ status: 'queued', cached: false, deduplicated: false });
    expect(await countReservations(ws.workspaceId)).toBe(2);
    const done = await waitForStatus(stack, ws, fresh.body.id, 'completed');
    expect(done.billed_credits).toBe(1);
  });

  it('hits the cache for trivially different spellings of the same target', async () => {
    const ws = await stack.workspace({ credits: 100 });
    const first = await stack.api.post('/v1/jobs', { headers: ws.auth, body: { operation: 'profile', target: 'someuser' } });
    const done = await waitForStatus(stack, ws, first.body.id, 'completed');
    for (const spelling of ['@SomeUser ', '  SOMEUSER', 'https://www.instagram.com/SomeUser/']) {
      const hit = await stack.api.post('/v1/jobs', { headers: ws.auth, body: { operation: 'profile', target: spelling } });
      expect(hit.status).toBe(202);
      expect(hit.body).toMatchObject({ status: 'completed', cached: true, billed_credits: 0 });
      expect(hit.body.result).toEqual(done.result);
    }
    expect(await countReservations(ws.workspaceId)).toBe(1);
  });

  it('does not share results across workspaces', async () => {
    const a = await stack.workspace({ credits: 100 });
    const b = await stack.workspace({ credits: 100 });
    const body = { operation: 'profile', target: 'privatecache' };
    const first = await stack.api.post('/v1/jobs', { headers: a.auth, body });
    await waitForStatus(stack, a, first.body.id, 'completed');
    const other = await stack.api.post('/v1/jobs', { headers: b.auth, body });
    expect(other.body).toMatchObject({ status: 'queued', cached: false });
  });
});

describe('deduplication', () => {
  it('returns the running job for an identical request and reserves nothing new', async () => {
    const ws = await stack.workspace({ credits: 100 });
    const body = { operation: 'profile', target: 'sandbox_slow_1500_dedup' };
    const first = await stack.api.post('/v1/jobs', { headers: ws.auth, body });
    expect(first.status).toBe(202);
    await waitForStatus(stack, ws, first.body.id, 'running');

    const usageBefore = (await stack.api.get('/v1/usage/current', { headers: ws.auth })).body;
    const again = await stack.api.post('/v1/jobs', { headers: ws.auth, body: { ...body, target: ' SANDBOX_SLOW_1500_DEDUP' } });
    expect(again.status).toBe(202);
    expect(again.body.id).toBe(first.body.id);
    expect(again.body).toMatchObject({ status: 'running', deduplicated: true, cached: false, idempotent_replay: false });
    expect(await countReservations(ws.workspaceId)).toBe(1);
    const usageAfter = (await stack.api.get('/v1/usage/current', { headers: ws.auth })).body;
    expect(usageAfter.credits_reserved).toBe(usageBefore.credits_reserved);

    // Once it has finished, the same request is a cache hit instead.
    await waitForStatus(stack, ws, first.body.id, 'completed');
    const later = await stack.api.post('/v1/jobs', { headers: ws.auth, body });
    expect(later.body).toMatchObject({ status: 'completed', cached: true, deduplicated: false });
  });

  it('deduplicates a queued job as well, and an Idempotency-Key then points at it', async () => {
    const ws = await stack.workspace({ credits: 100 });
    const body = { operation: 'profile', target: 'sandbox_slow_1500_queued' };
    const [a, b] = await Promise.all([
      stack.api.post('/v1/jobs', { headers: ws.auth, body }),
      stack.api.post('/v1/jobs', { headers: { ...ws.auth, 'Idempotency-Key': 'dedup-key' }, body }),
    ]);
    expect(a.body.id).toBe(b.body.id);
    expect([a.body.deduplicated, b.body.deduplicated].sort()).toEqual([false, true]);
    const replay = await stack.api.post('/v1/jobs', { headers: { ...ws.auth, 'Idempotency-Key': 'dedup-key' }, body });
    expect(replay.body.id).toBe(a.body.id);
    expect(replay.body.idempotent_replay).toBe(true);
    expect(await countReservations(ws.workspaceId)).toBe(1);
  });
});

describe('CACHE_TTL_SECONDS', () => {
  let short: TestStack;
  beforeAll(async () => {
    short = await startTestStack({ withWorker: true, env: { CACHE_TTL_SECONDS: '3' } });
  });
  afterAll(async () => {
    await short.close();
  });

  it('reuses results only while they are younger than the TTL', async () => {
    const ws = await short.workspace({ credits: 100 });
    const body = { operation: 'profile', target: 'ttluser' };
    const first = await short.api.post('/v1/jobs', { headers: ws.auth, body });
    const done = await waitForStatus(short, ws, first.body.id, 'completed');
    const hit = await short.api.post('/v1/jobs', { headers: ws.auth, body });
    expect(hit.body).toMatchObject({ status: 'completed', cached: true });
    await new Promise((resolve) => setTimeout(resolve, Math.max(0, Date.parse(done.finished_at) + 3100 - Date.now())));
    const stale = await short.api.post('/v1/jobs', { headers: ws.auth, body });
    expect(stale.body).toMatchObject({ status: 'queued', cached: false });
  });
});
