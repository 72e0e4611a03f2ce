import { type FakeStripe, metadataOf, startFakeStripe } from '@sdx/fake-stripe';
import type { components } from '@sdx/contract';
import { createApiKey } from '@sdx/domain/testing';
import {
  checkLedger,
  eventually,
  type SeededWorkspace,
  startTestStack,
  startWebhookReceiver,
  type TestStack,
  waitForJob,
  type WebhookReceiver,
} from '@sdx/testing';

type AuditEvent = components['schemas']['AuditEvent'];
type Payment = components['schemas']['Payment'];

/**
 * Auto-recharge bounded (extensions-3.md 1): a charge only after a settlement that spent credits
 * leaves the available credits below the threshold, never on a reservation; the threshold must
 * be below the pack's credits (422 invalid_threshold); at most AUTO_RECHARGE_MAX_PER_MONTH
 * charges per workspace and UTC month, then auto-recharge turns itself off and sends
 * billing.auto_recharge_failed with reason monthly_limit. Through HTTP against the fake Stripe,
 * with real jobs (posts cost 2 credits each) in workspaces without a plan allowance.
 */

let fake: FakeStripe;
let stack: TestStack;
let receiver: WebhookReceiver;
beforeAll(async () => {
  fake = await startFakeStripe({ retryDelaysMs: [100, 300] });
  receiver = await startWebhookReceiver();
  stack = await startTestStack({
    stripe: fake,
    withWorker: true,
    env: {
      CREDIT_PACKS: JSON.stringify([{ id: 'pack_small', credits: 100, amount: 1000, currency: 'usd' }]),
      AUTO_RECHARGE_MAX_PER_MONTH: '2',
      WEBHOOK_ALLOW_HTTP: '1',
      WEBHOOK_ALLOW_PRIVATE_NETWORKS: '1',
    },
  });
});
afterAll(async () => {
  await stack?.close();
  await fake?.close();
  await receiver?.close();
});
afterEach(async () => {
  expect((await checkLedger(stack.runtime.db)).problems).toEqual([]);
});

async function buy(ws: SeededWorkspace): Promise<void> {
  const made = await stack.api.post('/v1/billing/checkout', { headers: ws.auth, body: { pack_id: 'pack_small' } });
  expect(made.status).toBe(201);
  await fake.payCheckoutSession(made.body.checkout_id, { card: { brand: 'visa', last4: '4242' } });
  await fake.settled();
}

async function usage(ws: SeededWorkspace) {
  return (await stack.api.get('/v1/usage/current', { headers: ws.auth })).body as { purchased_credits: number; credits_reserved: number };
}

function intentCalls(workspaceId: string) {
  return fake.calls.filter((c) => c.method === 'POST' && c.path === '/v1/payment_intents' && metadataOf(c).workspace_id === workspaceId);
}

async function recharges(ws: SeededWorkspace): Promise<Payment[]> {
  const list = await stack.api.get('/v1/billing/payments', { headers: ws.auth });
  return (list.body.data as Payment[]).filter((p) => p.kind === 'auto_recharge');
}

async function submit(auth: Record<string, string>, target: string, limit: number): Promise<string> {
  const res = await stack.api.post('/v1/jobs', {
    headers: { ...auth, 'Cache-Control': 'no-cache' },
    body: { operation: 'posts', target, limit },
  });
  expect(res.status).toBe(202);
  return res.body.id as string;
}

/** A workspace with 100 purchased credits, a saved card and auto-recharge on below 50. */
async function armed(): Promise<SeededWorkspace> {
  const ws = await stack.workspace({ credits: 0 });
  await buy(ws);
  const on = await stack.api.put('/v1/billing/auto-recharge', {
    headers: ws.auth,
    body: { enabled: true, threshold_credits: 50, pack_id: 'pack_small' },
  });
  expect(on.status).toBe(200);
  expect(await usage(ws)).toMatchObject({ purchased_credits: 100 });
  return ws;
}

it("the review's loop: a member key reserves below the threshold and cancels, again and again: 0 charges, 0 credits used", async () => {
  const ws = await armed();
  const member = { 'X-API-Key': (await createApiKey(stack.runtime.db, ws.workspaceId, 'agent', { role: 'member' })).api_key };
  for (let round = 0; round < 3; round += 1) {
    // 30 posts reserve 60 credits: 40 available, below the threshold of 50.
    const job = await submit(member, `loop_${round}_sandbox_slow_20000`, 30);
    expect((await usage(ws)).credits_reserved).toBe(60);
    const cancelled = await stack.api.post(`/v1/jobs/${job}/cancel`, { headers: member });
    expect(cancelled.status).toBeLessThan(300);
    await waitForJob(stack, member, job, (j) => j.status === 'cancelled');
    await eventually(async () => (await usage(ws)).credits_reserved === 0);
  }
  // A job that delivers nothing settles at 0 credits: nothing spent, nothing charged either.
  const empty = await submit(member, 'loop_sandbox_empty', 30);
  await waitForJob(stack, member, empty, (j) => j.status === 'completed');
  await new Promise((resolve) => setTimeout(resolve, 1500)); // the charger polls every second
  expect(intentCalls(ws.workspaceId)).toHaveLength(0);
  expect(await recharges(ws)).toEqual([]);
  expect(await usage(ws)).toMatchObject({ purchased_credits: 100, credits_reserved: 0 });
  expect((await stack.api.get('/v1/billing', { headers: ws.auth })).body.auto_recharge.enabled).toBe(true);

  // The positive control: a settlement that spends 60 credits leaves 40, and one recharge follows.
  const spend = await submit(member, 'loop_sandbox_count_30', 30);
  await waitForJob(stack, member, spend, (j) => j.status === 'completed');
  await eventually(async () => (await usage(ws)).purchased_credits === 140);
  await fake.settled();
  expect(intentCalls(ws.workspaceId)).toHaveLength(1);
  expect((await recharges(ws)).map((p) => p.status)).toEqual(['paid']);
}, 90_000);

it("threshold_credits at or above the pack's credits is 422 invalid_threshold, nothing changed; below it is accepted", async () => {
  const ws = await armed();
  for (const threshold of [100, 5000]) {
    const refused = await stack.api.put('/v1/billing/auto-recharge', {
      headers: ws.auth,
      body: { enabled: true, threshold_credits: threshold, pack_id: 'pack_small' },
    });
    expect(refused.status).toBe(422);
    expect(refused.body.detail.error).toBe('invalid_threshold');
    // Turning it off does not make an unsafe threshold acceptable either.
    const off = await stack.api.put('/v1/billing/auto-recharge', {
      headers: ws.auth,
      body: { enabled: false, threshold_credits: threshold, pack_id: 'pack_small' },
    });
    expect(off.status).toBe(422);
  }
  expect((await stack.api.get('/v1/billing', { headers: ws.auth })).body.auto_recharge).toMatchObject({
    enabled: true,
    threshold_credits: 50,
  });
  const ok = await stack.api.put('/v1/billing/auto-recharge', {
    headers: ws.auth,
    body: { enabled: true, threshold_credits: 99, pack_id: 'pack_small' },
  });
  expect(ok.status).toBe(200);
  expect(ok.body).toMatchObject({ enabled: true, threshold_credits: 99 });
});

it('past AUTO_RECHARGE_MAX_PER_MONTH (2) charges, the next one due is not charged: auto-recharge turns off, billing.auto_recharge_failed with reason monthly_limit, audited', async () => {
  const ws = await armed();
  const hook = await stack.api.post('/v1/webhooks', {
    headers: ws.auth,
    body: { url: receiver.url, events: ['billing.auto_recharge_failed'] },
  });
  expect(hook.status).toBe(201);
  // 100 → spend 60 → 40: charge 1 → 140; spend 100 → 40: charge 2 → 140; spend 100 → 40: the limit.
  const spends = [
    { count: 30, after: 140 },
    { count: 50, after: 140 },
  ];
  for (const [i, step] of spends.entries()) {
    const job = await submit(ws.auth, `limit_${i}_sandbox_count_${step.count}`, step.count);
    await waitForJob(stack, ws.auth, job, (j) => j.status === 'completed');
    await eventually(async () => (await usage(ws)).purchased_credits === step.after);
    await fake.settled();
  }
  expect(intentCalls(ws.workspaceId)).toHaveLength(2);
  const third = await submit(ws.auth, 'limit_2_sandbox_count_50', 50);
  await waitForJob(stack, ws.auth, third, (j) => j.status === 'completed');
  const failed = await eventually(async () => (await recharges(ws)).find((p) => p.status === 'failed') ?? null);
  await fake.settled();
  expect(intentCalls(ws.workspaceId)).toHaveLength(2);
  expect(await usage(ws)).toMatchObject({ purchased_credits: 40 });
  expect((await stack.api.get('/v1/billing', { headers: ws.auth })).body.auto_recharge.enabled).toBe(false);

  const [message] = await receiver.received(1);
  const body = JSON.parse(message.body);
  expect(body).toMatchObject({
    type: 'billing.auto_recharge_failed',
    workspace_id: ws.workspaceId,
    data: { reason: 'monthly_limit', payment: { id: failed.id, status: 'failed' } },
  });
  expect(body.data.message).toMatch(/AUTO_RECHARGE_MAX_PER_MONTH/);
  const audit = (await stack.api.get('/v1/audit-events', { headers: ws.auth })).body as AuditEvent[];
  expect(audit.find((e) => e.action === 'billing.auto_recharge_disabled')).toMatchObject({
    actor: { type: 'system' },
    data: { reason: 'monthly_limit', payment_id: failed.id },
  });

  // Off: a further settlement below the threshold charges nothing.
  const more = await submit(ws.auth, 'limit_3_sandbox_count_5', 5);
  await waitForJob(stack, ws.auth, more, (j) => j.status === 'completed');
  await new Promise((resolve) => setTimeout(resolve, 1500));
  expect(intentCalls(ws.workspaceId)).toHaveLength(2);
  expect((await recharges(ws)).length).toBe(3);
}, 120_000);
