import {
  checkLedger,
  type SeededWorkspace,
  startTestStack,
  startWebhookReceiver,
  type TestStack,
  waitForJob,
  type WebhookReceiver,
} from '@sdx/testing';

/**
 * Spend caps (extensions-2.md 1): a key's and a workspace's `monthly_credit_cap` stop a
 * submission whose reservation would take the month's spend past it (402 spend_cap_reached),
 * checked by the admission planner under the balance lock; cached and deduplicated answers
 * reserve nothing and pass; quotes say what stops them (`blocked_by`); the month's spend is
 * kept where admission reads it and gives back what releases return; `billing.credits_low` and
 * `billing.spend_cap_reached` are sent once per crossing and once per scope and month. The
 * ledger invariants hold after each case.
 */

let stack: TestStack;
let receiver: WebhookReceiver;
beforeAll(async () => {
  receiver = await startWebhookReceiver();
  stack = await startTestStack({
    withWorker: true,
    workerConcurrency: 8,
    env: { WEBHOOK_ALLOW_HTTP: '1', WEBHOOK_ALLOW_PRIVATE_NETWORKS: '1', WEBHOOK_RETRY_SCHEDULE: '' },
  });
});
afterAll(async () => {
  await stack.close();
  await receiver.close();
});
afterEach(async () => {
  // Every case ends with the money exact: the ledger, the month's spend of workspaces and keys.
  await new Promise((resolve) => setTimeout(resolve, 200));
  expect((await checkLedger(stack.runtime.db)).problems).toEqual([]);
});

const fresh = { 'Cache-Control': 'no-cache' };

async function keyWithCap(ws: SeededWorkspace, cap: number | null, role = 'member'): Promise<{ id: string; auth: Record<string, string> }> {
  const made = await stack.api.post('/v1/keys', { headers: ws.auth, body: { name: 'capped', role, monthly_credit_cap: cap } });
  expect(made.status).toBe(201);
  expect(made.body.monthly_credit_cap).toBe(cap);
  expect(made.body.month_spent_credits).toBe(0);
  return { id: made.body.id, auth: { 'X-API-Key': made.body.api_key } };
}

async function keyView(ws: SeededWorkspace, keyId: string) {
  const keys = await stack.api.get('/v1/keys', { headers: ws.auth });
  return (keys.body as Array<{ id: string; monthly_credit_cap: number | null; month_spent_credits: number }>).find((k) => k.id === keyId)!;
}

const job = (auth: Record<string, string>, target: string, extra: Record<string, unknown> = {}) =>
  stack.api.post('/v1/jobs', { headers: { ...auth, ...fresh }, body: { operation: 'profile', target, ...extra } });

describe('a key with a monthly cap', () => {
  it('admits up to its cap exactly, then answers 402 spend_cap_reached; the quote says so first', async () => {
    const ws = await stack.workspace({ credits: 1000 });
    const key = await keyWithCap(ws, 10);
    for (let i = 0; i < 10; i += 1) expect((await job(key.auth, `cap_key_${i}`)).status).toBe(202);
    const quoted = await stack.api.post('/v1/quotes', { headers: key.auth, body: { operation: 'profile', target: 'cap_key_next' } });
    expect(quoted.body).toMatchObject({ affordable: false, blocked_by: 'spend_cap_reached', max_credits: 1 });
    const refused = await job(key.auth, 'cap_key_next');
    expect(refused.status).toBe(402);
    expect(refused.body.detail).toMatchObject({ error: 'spend_cap_reached', scope: 'key', cap: 10, spent: 10, required: 1 });
    // Where the cap is changed, in the message.
    expect(refused.body.detail.message).toContain('"Spend caps" on the console\'s Billing page');
    expect(refused.body.detail.message).toMatch(/PATCH \/v1\/keys\/key_\S+ \(monthly_credit_cap\)/);
    // The workspace's own key has no cap: it goes on.
    expect((await job(ws.auth, 'cap_key_owner')).status).toBe(202);
    expect(
      (await stack.api.post('/v1/quotes', { headers: ws.auth, body: { operation: 'profile', target: 'x_other' } })).body.blocked_by,
    ).toBeNull();
    expect((await keyView(ws, key.id)).month_spent_credits).toBe(10);
    const billing = await stack.api.get('/v1/billing', { headers: ws.auth });
    expect(billing.body.month_spent_credits).toBe(11);
    expect((await stack.api.get('/v1/account', { headers: ws.auth })).body.credits.month_spent_credits).toBe(11);
  });

  it('lets a cached repeat and a deduplicated twin pass a reached cap, at no cost', async () => {
    const ws = await stack.workspace({ credits: 1000 });
    const key = await keyWithCap(ws, 2);
    const first = await stack.api.post('/v1/jobs', { headers: key.auth, body: { operation: 'profile', target: 'cap_cached' } });
    await waitForJob(stack, key.auth, first.body.id, (j) => j.status === 'completed');
    const slow = await stack.api.post('/v1/jobs', {
      headers: key.auth,
      body: { operation: 'profile', target: 'sandbox_slow_3000_cap_twin' },
    });
    expect(slow.status).toBe(202);
    expect((await job(key.auth, 'cap_past')).status).toBe(402);
    const cached = await stack.api.post('/v1/jobs', { headers: key.auth, body: { operation: 'profile', target: 'cap_cached' } });
    expect([200, 202]).toContain(cached.status);
    expect(cached.body).toMatchObject({ cached: true, billed_credits: 0 });
    const twin = await stack.api.post('/v1/jobs', {
      headers: key.auth,
      body: { operation: 'profile', target: 'sandbox_slow_3000_cap_twin' },
    });
    expect(twin.status).toBe(202);
    expect(twin.body.id).toBe(slow.body.id);
    expect(
      (await stack.api.post('/v1/quotes', { headers: key.auth, body: { operation: 'profile', target: 'cap_cached' } })).body,
    ).toMatchObject({
      affordable: true,
      blocked_by: null,
      max_credits: 0,
    });
    await waitForJob(stack, key.auth, slow.body.id, (j) => j.status === 'completed');
  });

  it('gives back to the month what a cancellation releases, and a PATCH moves or lifts the cap at once', async () => {
    const ws = await stack.workspace({ credits: 1000 });
    const key = await keyWithCap(ws, 5);
    const slow = await stack.api.post('/v1/jobs', {
      headers: key.auth,
      body: { operation: 'profile', target: 'sandbox_slow_20000_cap_cancel' },
    });
    expect((await keyView(ws, key.id)).month_spent_credits).toBe(1);
    expect((await stack.api.post(`/v1/jobs/${slow.body.id}/cancel`, { headers: key.auth })).status).toBe(200);
    await waitForJob(stack, key.auth, slow.body.id, (j) => j.status === 'cancelled');
    expect((await keyView(ws, key.id)).month_spent_credits).toBe(0);

    // A batch is all or nothing against the cap: 6 targets do not fit in 5.
    const batch = await stack.api.post('/v1/batches', {
      headers: { ...key.auth, ...fresh },
      body: { operation: 'profile', targets: ['b1', 'b2', 'b3', 'b4', 'b5', 'b6'] },
    });
    expect(batch.status).toBe(402);
    expect(batch.body.detail).toMatchObject({ error: 'spend_cap_reached', scope: 'key', cap: 5, spent: 0, required: 6 });

    const raised = await stack.api.patch(`/v1/keys/${key.id}`, { headers: ws.auth, body: { monthly_credit_cap: 6 } });
    expect(raised.status).toBe(200);
    expect(raised.body).toMatchObject({ id: key.id, monthly_credit_cap: 6, month_spent_credits: 0 });
    expect(
      (
        await stack.api.post('/v1/batches', {
          headers: { ...key.auth, ...fresh },
          body: { operation: 'profile', targets: ['b1', 'b2', 'b3', 'b4', 'b5', 'b6'] },
        })
      ).status,
    ).toBe(202);
    expect((await job(key.auth, 'cap_after_batch')).status).toBe(402);
    const lifted = await stack.api.patch(`/v1/keys/${key.id}`, { headers: ws.auth, body: { monthly_credit_cap: null, name: 'uncapped' } });
    expect(lifted.body).toMatchObject({ monthly_credit_cap: null, name: 'uncapped', month_spent_credits: 6 });
    expect((await job(key.auth, 'cap_after_batch')).status).toBe(202);

    const audit = await stack.api.get('/v1/audit-events', { headers: ws.auth });
    expect((audit.body as Array<{ action: string }>).filter((e) => e.action === 'api_key.updated')).toHaveLength(2);
  });

  it('counts the spend of a key without a cap, so a cap set later stops its very next request', async () => {
    // The admission skips reading an uncapped key's spend (nothing to check): the spend must
    // still be counted, and a cap set afterwards must hold from the next request on.
    const ws = await stack.workspace({ credits: 1000 });
    const key = await keyWithCap(ws, null);
    for (const target of ['uncapped_1', 'uncapped_2', 'uncapped_3']) expect((await job(key.auth, target)).status).toBe(202);
    expect((await keyView(ws, key.id)).month_spent_credits).toBe(3);
    const capped = await stack.api.patch(`/v1/keys/${key.id}`, { headers: ws.auth, body: { monthly_credit_cap: 3 } });
    expect(capped.status).toBe(200);
    expect(capped.body).toMatchObject({ monthly_credit_cap: 3, month_spent_credits: 3 });
    const refused = await job(key.auth, 'uncapped_4');
    expect(refused.status).toBe(402);
    expect(refused.body.detail).toMatchObject({ error: 'spend_cap_reached', scope: 'key', cap: 3, spent: 3, required: 1, key_id: key.id });
    expect((await keyView(ws, key.id)).month_spent_credits).toBe(3);
  });

  it('refuses a PATCH by a member, of an unknown or revoked key, and of an empty or unknown field', async () => {
    const ws = await stack.workspace({ credits: 10 });
    const key = await keyWithCap(ws, 1);
    expect((await stack.api.patch(`/v1/keys/${key.id}`, { headers: key.auth, body: { monthly_credit_cap: 100 } })).status).toBe(403);
    expect((await stack.api.patch('/v1/keys/key_unknown', { headers: ws.auth, body: { monthly_credit_cap: 1 } })).status).toBe(404);
    expect((await stack.api.patch(`/v1/keys/${key.id}`, { headers: ws.auth, body: {} })).status).toBe(422);
    expect((await stack.api.patch(`/v1/keys/${key.id}`, { headers: ws.auth, body: { monthly_credit_cap: -1 } })).status).toBe(422);
    expect((await stack.api.patch(`/v1/keys/${key.id}`, { headers: ws.auth, body: { cap: 1 } })).status).toBe(422);
    expect((await stack.api.delete(`/v1/keys/${key.id}`, { headers: ws.auth })).status).toBe(204);
    expect((await stack.api.patch(`/v1/keys/${key.id}`, { headers: ws.auth, body: { monthly_credit_cap: 1 } })).status).toBe(404);
  });
});

describe('the workspace cap and the billing alerts', () => {
  it('stops every key and session at the workspace cap, and tells its webhooks once per scope', async () => {
    const ws = await stack.workspace({ credits: 1000 });
    const hook = await stack.api.post('/v1/webhooks', {
      headers: ws.auth,
      body: { url: receiver.url, events: ['billing.spend_cap_reached', 'billing.credits_low'] },
    });
    expect(hook.status).toBe(201);
    const limits = await stack.api.put('/v1/billing/limits', {
      headers: ws.auth,
      body: { monthly_credit_cap: 3, low_credits_threshold: 998 },
    });
    expect(limits.status).toBe(200);
    expect(limits.body).toEqual({ monthly_credit_cap: 3, low_credits_threshold: 998 });
    const key = await keyWithCap(ws, 100);
    for (let i = 0; i < 3; i += 1) expect((await job(i % 2 ? key.auth : ws.auth, `ws_cap_${i}`)).status).toBe(202);
    for (const auth of [ws.auth, key.auth, ws.auth]) {
      const refused = await job(auth, 'ws_cap_past');
      expect(refused.status).toBe(402);
      expect(refused.body.detail).toMatchObject({ error: 'spend_cap_reached', scope: 'workspace', cap: 3, spent: 3 });
      expect(refused.body.detail.message).toContain('PUT /v1/billing/limits (monthly_credit_cap)');
    }
    expect(
      (await stack.api.post('/v1/quotes', { headers: key.auth, body: { operation: 'profile', target: 'ws_cap_past' } })).body.blocked_by,
    ).toBe('spend_cap_reached');

    // One credits_low (1000 → 997 crossed 998 once) and one spend_cap_reached (three refusals).
    const messages = await receiver.received(2, 15_000);
    await new Promise((resolve) => setTimeout(resolve, 500));
    const events = receiver.messages
      .map((m) => JSON.parse(m.body) as { type: string; workspace_id: string; data: Record<string, unknown> })
      .filter((e) => e.workspace_id === ws.workspaceId);
    expect(messages.length).toBeGreaterThanOrEqual(2);
    expect(events.map((e) => e.type).sort()).toEqual(['billing.credits_low', 'billing.spend_cap_reached']);
    expect(events.find((e) => e.type === 'billing.spend_cap_reached')!.data).toMatchObject({
      scope: 'workspace',
      cap: 3,
      spent: 3,
      key_id: null,
    });
    expect(events.find((e) => e.type === 'billing.credits_low')!.data).toMatchObject({
      low_credits_threshold: 998,
      available_credits: 997,
    });

    // Lifting the cap lets work through again.
    expect(
      (await stack.api.put('/v1/billing/limits', { headers: ws.auth, body: { monthly_credit_cap: null, low_credits_threshold: null } }))
        .status,
    ).toBe(200);
    expect((await job(ws.auth, 'ws_cap_past')).status).toBe(202);
  });

  it('counts only the current month: a reservation settled for less gives the difference back', async () => {
    const ws = await stack.workspace({ credits: 100_000 });
    const quoted = await stack.api.post('/v1/quotes', {
      headers: ws.auth,
      body: { platform: 'twitter', operation: 'followers', target: 'spend_settle', limit: 300 },
    });
    const made = await stack.api.post('/v1/jobs', {
      headers: ws.auth,
      body: { platform: 'twitter', operation: 'followers', target: 'spend_settle', limit: 300 },
    });
    expect(made.status).toBe(202);
    expect((await stack.api.get('/v1/billing', { headers: ws.auth })).body.month_spent_credits).toBe(quoted.body.max_credits);
    const done = await waitForJob(stack, ws.auth, made.body.id, (j) => j.status === 'completed');
    expect((await stack.api.get('/v1/billing', { headers: ws.auth })).body.month_spent_credits).toBe(done.billed_credits);
  });
});
