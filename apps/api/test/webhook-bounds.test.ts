import type { LookupAddress } from 'node:dns';
import { startTestStack, type TestStack } from '@sdx/testing';

/**
 * The bounds on webhooks (extensions-2.md 2), over HTTP, each at its limit and one past it:
 * MAX_WEBHOOKS_PER_WORKSPACE webhooks per workspace (422 webhook_limit_reached with `limit`,
 * also when the creations race), 10 test sends a minute per webhook and 60 redeliveries a
 * minute per webhook (429 rate_limit_exceeded with Retry-After and retry_after), each counted
 * per webhook and workspace.
 */
const resolver = (): Promise<LookupAddress[]> => Promise.resolve([{ address: '93.184.216.34', family: 4 }]);

let stack: TestStack;
beforeAll(async () => {
  stack = await startTestStack({ webhookResolver: resolver, env: { MAX_WEBHOOKS_PER_WORKSPACE: '3', WEBHOOK_RETRY_SCHEDULE: '' } });
});
afterAll(async () => {
  await stack.close();
});

const body = { url: 'https://hooks.example.com/in', events: ['webhook.test'] };

describe('webhooks per workspace', () => {
  it('takes MAX_WEBHOOKS_PER_WORKSPACE webhooks, refuses one more with 422 webhook_limit_reached, and takes one again after a deletion', async () => {
    const ws = await stack.workspace();
    const made = [];
    for (let i = 0; i < 3; i++) {
      const res = await stack.api.post('/v1/webhooks', { headers: ws.auth, body });
      expect(res.status).toBe(201);
      made.push(res.body.id as string);
    }
    const past = await stack.api.post('/v1/webhooks', { headers: ws.auth, body });
    expect(past.status).toBe(422);
    expect(past.body.detail).toEqual({ error: 'webhook_limit_reached', message: expect.stringContaining('3 webhooks'), limit: 3 });
    // Another workspace has its own count.
    const other = await stack.workspace();
    expect((await stack.api.post('/v1/webhooks', { headers: other.auth, body })).status).toBe(201);
    expect((await stack.api.delete(`/v1/webhooks/${made[0]}`, { headers: ws.auth })).status).toBe(204);
    expect((await stack.api.post('/v1/webhooks', { headers: ws.auth, body })).status).toBe(201);
    expect((await stack.api.post('/v1/webhooks', { headers: ws.auth, body })).status).toBe(422);
  });

  it('lets no race of creations past the bound', async () => {
    const ws = await stack.workspace();
    const answers = await Promise.all(Array.from({ length: 8 }, () => stack.api.post('/v1/webhooks', { headers: ws.auth, body })));
    expect(answers.map((r) => r.status).sort()).toEqual([201, 201, 201, 422, 422, 422, 422, 422]);
    const stored = await stack.runtime.db.selectFrom('webhooks').select('id').where('workspace_id', '=', ws.workspaceId).execute();
    expect(stored).toHaveLength(3);
  });
});

describe('test sends and redeliveries', () => {
  it('takes 10 test sends a minute per webhook, then answers 429 rate_limit_exceeded with Retry-After; another webhook has its own count', async () => {
    const ws = await stack.workspace();
    const hook = await stack.api.post('/v1/webhooks', { headers: ws.auth, body });
    for (let i = 0; i < 10; i++) expect((await stack.api.post(`/v1/webhooks/${hook.body.id}/test`, { headers: ws.auth })).status).toBe(202);
    const past = await stack.api.post(`/v1/webhooks/${hook.body.id}/test`, { headers: ws.auth });
    expect(past.status).toBe(429);
    expect(past.body.detail).toMatchObject({ error: 'rate_limit_exceeded', retry_after: expect.any(Number) });
    expect(past.body.detail.retry_after).toBeGreaterThanOrEqual(1);
    expect(past.body.detail.retry_after).toBeLessThanOrEqual(60);
    expect(Number(past.headers['retry-after'])).toBe(past.body.detail.retry_after);
    // The refused send wrote nothing.
    const deliveries = await stack.runtime.db
      .selectFrom('webhook_deliveries')
      .select('id')
      .where('webhook_id', '=', hook.body.id)
      .execute();
    expect(deliveries).toHaveLength(10);
    const second = await stack.api.post('/v1/webhooks', { headers: ws.auth, body });
    expect((await stack.api.post(`/v1/webhooks/${second.body.id}/test`, { headers: ws.auth })).status).toBe(202);
  });

  it("spends nothing of a webhook's allowance on calls from another workspace naming it", async () => {
    const ws = await stack.workspace();
    const intruder = await stack.workspace();
    const hook = await stack.api.post('/v1/webhooks', { headers: ws.auth, body });
    for (let i = 0; i < 11; i++) {
      const res = await stack.api.post(`/v1/webhooks/${hook.body.id}/test`, { headers: intruder.auth });
      expect([res.status, res.body.detail.error]).toEqual(i < 10 ? [404, 'webhook_not_found'] : [429, 'rate_limit_exceeded']);
    }
    expect((await stack.api.post(`/v1/webhooks/${hook.body.id}/test`, { headers: ws.auth })).status).toBe(202);
  });

  it('takes 60 redeliveries a minute per webhook, then answers 429 rate_limit_exceeded with Retry-After', async () => {
    // Room in the workspace's own request rate for the 64 requests of this test.
    const ws = await stack.workspace({ rateLimitPerMinute: 1000 });
    const hook = await stack.api.post('/v1/webhooks', { headers: ws.auth, body });
    const test = await stack.api.post(`/v1/webhooks/${hook.body.id}/test`, { headers: ws.auth });
    const path = `/v1/webhooks/${hook.body.id}/deliveries/${test.body.id}/redeliver`;
    for (let i = 0; i < 60; i++) expect((await stack.api.post(path, { headers: ws.auth })).status).toBe(202);
    const past = await stack.api.post(path, { headers: ws.auth });
    expect(past.status).toBe(429);
    expect(past.body.detail).toMatchObject({ error: 'rate_limit_exceeded', retry_after: expect.any(Number) });
    expect(past.headers['retry-after']).toBe(String(past.body.detail.retry_after));
    const deliveries = await stack.runtime.db
      .selectFrom('webhook_deliveries')
      .select('id')
      .where('webhook_id', '=', hook.body.id)
      .execute();
    expect(deliveries).toHaveLength(61);
    // Test sends are counted apart from redeliveries.
    expect((await stack.api.post(`/v1/webhooks/${hook.body.id}/test`, { headers: ws.auth })).status).toBe(202);
  });
});
