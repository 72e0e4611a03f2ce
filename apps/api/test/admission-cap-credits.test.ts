import { startTestStack, type TestStack, countWorkspaceRows } from '@sdx/testing';

/**
 * The active-job cap and the credit reservation under concurrent submissions: both are checked
 * and taken under the workspace's balance lock, so no race admits more than fits.
 */

let stack: TestStack;
beforeAll(async () => {
  stack = await startTestStack();
});
afterAll(async () => {
  await stack.close();
});

const countRows = (table: 'jobs' | 'credit_reservations', workspaceId: string) => countWorkspaceRows(stack, table, workspaceId);

describe('active-job cap', () => {
  it('accepts exactly 5 of 30 concurrent slow jobs against a cap of 5', async () => {
    const ws = await stack.workspace({ maxActiveJobs: 5, credits: 1000 });
    const responses = await Promise.all(
      Array.from({ length: 30 }, (_, i) =>
        stack.api.post('/v1/jobs', { headers: ws.auth, body: { operation: 'profile', target: `sandbox_slow_5000_cap${i}` } }),
      ),
    );
    const accepted = responses.filter((r) => r.status === 202);
    const limited = responses.filter((r) => r.status === 429);
    expect(accepted).toHaveLength(5);
    expect(limited).toHaveLength(25);
    for (const r of accepted) expect(r.body.status).toBe('queued');
    for (const r of limited) {
      expect(r.body.detail.error).toBe('concurrent_job_limit_exceeded');
      expect(r.body.detail.active).toBe(5);
      expect(r.body.detail.limit).toBe(5);
      // Authenticated responses, refusals included, carry the rate-limit headers.
      expect(r.headers['ratelimit-limit']).toBeDefined();
    }
    expect(new Set(accepted.map((r) => r.body.id)).size).toBe(5);
    expect(await countRows('jobs', ws.workspaceId)).toBe(5);
    expect(await countRows('credit_reservations', ws.workspaceId)).toBe(5);
    const usage = await stack.api.get('/v1/usage/current', { headers: ws.auth });
    expect(usage.body.credits_reserved).toBe(5);
  });

  it('frees a slot when an active job is cancelled', async () => {
    const ws = await stack.workspace({ maxActiveJobs: 1 });
    const first = await stack.api.post('/v1/jobs', { headers: ws.auth, body: { operation: 'profile', target: 'sandbox_slow_5000_slot1' } });
    expect(first.status).toBe(202);
    const blocked = await stack.api.post('/v1/jobs', {
      headers: ws.auth,
      body: { operation: 'profile', target: 'sandbox_slow_5000_slot2' },
    });
    expect(blocked.status).toBe(429);
    expect(blocked.body.detail).toMatchObject({ error: 'concurrent_job_limit_exceeded', active: 1, limit: 1 });
    await stack.api.post(`/v1/jobs/${first.body.id}/cancel`, { headers: ws.auth });
    const admitted = await stack.api.post('/v1/jobs', {
      headers: ws.auth,
      body: { operation: 'profile', target: 'sandbox_slow_5000_slot2' },
    });
    expect(admitted.status).toBe(202);
  });
});

describe('credits under concurrency', () => {
  it('accepts exactly 5 of 20 concurrent submissions against credits for 5, never overdrawing', async () => {
    const ws = await stack.workspace({ credits: 5 });
    const responses = await Promise.all(
      Array.from({ length: 20 }, (_, i) =>
        stack.api.post('/v1/jobs', { headers: ws.auth, body: { operation: 'profile', target: `credituser${i}` } }),
      ),
    );
    const accepted = responses.filter((r) => r.status === 202);
    const refused = responses.filter((r) => r.status === 402);
    expect(accepted).toHaveLength(5);
    expect(refused).toHaveLength(15);
    for (const r of refused) {
      expect(r.body.detail.error).toBe('insufficient_credits');
      expect(r.body.detail.available).toBe(0);
      expect(r.body.detail.required).toBe(1);
    }
    expect(await countRows('jobs', ws.workspaceId)).toBe(5);
    expect(await countRows('credit_reservations', ws.workspaceId)).toBe(5);

    const usage = (await stack.api.get('/v1/usage/current', { headers: ws.auth })).body;
    expect(usage.credits_remaining).toBe(0);
    expect(usage.credits_reserved).toBe(5);
    expect(usage.credits_used + usage.credits_reserved + usage.credits_remaining).toBe(usage.credit_limit);
    const balance = await stack.runtime.db
      .selectFrom('credit_balances')
      .selectAll()
      .where('workspace_id', '=', ws.workspaceId)
      .executeTakeFirstOrThrow();
    expect(balance.plan_used + balance.plan_reserved).toBeLessThanOrEqual(5);
    expect(balance.purchased_balance - balance.purchased_reserved).toBeGreaterThanOrEqual(0);
  });
});
