import { type FakeStripe, metadataOf, startFakeStripe } from '@sdx/fake-stripe';
import type { components } from '@sdx/contract';
import { queueAutoRecharges } from '@sdx/domain/testing';
import {
  checkLedger,
  eventually,
  type SeededWorkspace,
  signUpUser,
  startSmtpCatcher,
  startTestStack,
  startWebhookReceiver,
  type SmtpCatcher,
  type TestStack,
  type WebhookReceiver,
} from '@sdx/testing';

type AuditEvent = components['schemas']['AuditEvent'];

/**
 * Auto-recharge (extensions-2.md 1): enabling needs the card a checkout saved; a recharge queued
 * by admission or settlement (`queueAutoRecharges`, one in flight per workspace) becomes one
 * off-session PaymentIntent (Idempotency-Key: the payment ID), granted once when
 * payment_intent.succeeded arrives; a declined card fails the payment, turns auto-recharge off,
 * and sends billing.auto_recharge_failed once, as a webhook and a mail to owners and admins.
 */

let fake: FakeStripe;
let stack: TestStack;
let receiver: WebhookReceiver;
let smtp: SmtpCatcher;
beforeAll(async () => {
  fake = await startFakeStripe({ retryDelaysMs: [100, 300] });
  receiver = await startWebhookReceiver();
  smtp = await startSmtpCatcher();
  stack = await startTestStack({
    stripe: fake,
    withWorker: true,
    env: {
      WEBHOOK_ALLOW_HTTP: '1',
      WEBHOOK_ALLOW_PRIVATE_NETWORKS: '1',
      SMTP_URL: smtp.url,
      EMAIL_VERIFICATION: '0',
      APP_URL: 'http://console.test',
    },
  });
});
afterAll(async () => {
  await stack?.close();
  await fake?.close();
  await receiver?.close();
  await smtp?.close();
});
afterEach(async () => {
  expect((await checkLedger(stack.runtime.db)).problems).toEqual([]);
});

const PACK = { id: 'pack_10k', credits: 10000, amount: 1000, currency: 'usd' };

async function usage(ws: SeededWorkspace) {
  return (await stack.api.get('/v1/usage/current', { headers: ws.auth })).body as { purchased_credits: number; lifetime_purchased: number };
}

async function setAutoRecharge(ws: SeededWorkspace, enabled: boolean, packId = 'pack_10k') {
  return stack.api.put('/v1/billing/auto-recharge', { headers: ws.auth, body: { enabled, threshold_credits: 500, pack_id: packId } });
}

async function buyOnce(ws: SeededWorkspace): Promise<void> {
  const made = await stack.api.post('/v1/billing/checkout', { headers: ws.auth, body: { pack_id: 'pack_10k' } });
  await fake.payCheckoutSession(made.body.checkout_id, { card: { brand: 'visa', last4: '4242' } });
  await fake.settled();
}

async function queue(workspaceId: string): Promise<number> {
  return stack.runtime.db.transaction().execute((tx) => queueAutoRecharges(tx, new Date(), [{ workspaceId, pack: PACK }]));
}

async function recharges(workspaceId: string) {
  return stack.runtime.db
    .selectFrom('billing_payments')
    .selectAll()
    .where('workspace_id', '=', workspaceId)
    .where('kind', '=', 'auto_recharge')
    .orderBy('id')
    .execute();
}

function intentCalls(workspaceId: string) {
  return fake.calls.filter((c) => c.method === 'POST' && c.path === '/v1/payment_intents' && metadataOf(c).workspace_id === workspaceId);
}

it('enabling needs a saved card (409), an existing pack (422); after a checkout it is on, audited', async () => {
  const ws = await stack.workspace({ credits: 0 });
  const refused = await setAutoRecharge(ws, true);
  expect(refused.status).toBe(409);
  expect(refused.body.detail.error).toBe('payment_method_required');
  expect((await setAutoRecharge(ws, true, 'pack_nope')).status).toBe(422);
  const off = await setAutoRecharge(ws, false);
  expect(off.status).toBe(200);
  expect(off.body).toEqual({ enabled: false, threshold_credits: 500, pack_id: 'pack_10k', payment_method: null });
  await buyOnce(ws);
  const on = await setAutoRecharge(ws, true);
  expect(on.status).toBe(200);
  expect(on.body).toEqual({ enabled: true, threshold_credits: 500, pack_id: 'pack_10k', payment_method: { brand: 'visa', last4: '4242' } });
  expect((await stack.api.get('/v1/billing', { headers: ws.auth })).body.auto_recharge).toEqual(on.body);
  const audit = await stack.api.get('/v1/audit-events', { headers: ws.auth });
  const updates = (audit.body as AuditEvent[]).filter((e) => e.action === 'billing.auto_recharge_updated');
  expect(updates.map((e) => e.data.enabled)).toEqual([true, false]);
});

it('a queued recharge becomes one off-session PaymentIntent with the spec parameters, granted once on payment_intent.succeeded', async () => {
  const ws = await stack.workspace({ credits: 0 });
  await buyOnce(ws);
  expect((await setAutoRecharge(ws, true)).status).toBe(200);
  const customer = await stack.runtime.db
    .selectFrom('billing_customers')
    .selectAll()
    .where('workspace_id', '=', ws.workspaceId)
    .executeTakeFirstOrThrow();
  const before = fake.paymentIntentsCreated();

  expect(await queue(ws.workspaceId)).toBe(1);
  // One in flight per workspace.
  expect(await queue(ws.workspaceId)).toBe(0);
  const [pending] = await recharges(ws.workspaceId);
  await eventually(async () => (await usage(ws)).purchased_credits === 20000);
  await fake.settled();

  expect(fake.paymentIntentsCreated() - before).toBe(1);
  const [call] = intentCalls(ws.workspaceId);
  expect(call.idempotencyKey).toBe(pending.id);
  expect(call.params).toEqual({
    amount: 1000,
    currency: 'usd',
    customer: customer.stripe_customer_id,
    payment_method: customer.payment_method_id,
    confirm: true,
    off_session: true,
    metadata: { workspace_id: ws.workspaceId, pack_id: 'pack_10k', kind: 'auto_recharge', payment_id: pending.id },
  });
  const [paid] = await recharges(ws.workspaceId);
  expect(paid).toMatchObject({ status: 'paid', credits: 10000, payment_intent_id: expect.stringMatching(/^pi_/) });
  expect(await usage(ws)).toMatchObject({ purchased_credits: 20000, lifetime_purchased: 20000 });
  const list = await stack.api.get('/v1/billing/payments', { headers: ws.auth });
  expect(list.body.data[0]).toMatchObject({ id: paid.id, kind: 'auto_recharge', status: 'paid' });

  // The charger asked again after a crash (the PaymentIntent ID not stored): Stripe answers the
  // same PaymentIntent for the same Idempotency-Key, and nothing is granted twice.
  await stack.runtime.db
    .updateTable('billing_payments')
    .set({ status: 'pending', payment_intent_id: null, next_attempt_at: new Date(), locked_until: null })
    .where('id', '=', paid.id)
    .execute();
  const again = await eventually(async () => {
    const [row] = await recharges(ws.workspaceId);
    return row.payment_intent_id !== null ? row : null;
  });
  expect(again).toMatchObject({ payment_intent_id: paid.payment_intent_id, attempts: 2 });
  expect(intentCalls(ws.workspaceId).map((c) => c.idempotencyKey)).toEqual([pending.id, pending.id]);
  expect(fake.paymentIntentsCreated() - before).toBe(1);
  // (The row is put back as it was: Stripe sent its one payment_intent.succeeded already.)
  await stack.runtime.db.updateTable('billing_payments').set({ status: 'paid' }).where('id', '=', paid.id).execute();
  expect(await usage(ws)).toMatchObject({ purchased_credits: 20000 });
});

it('a declined card fails the recharge, turns auto-recharge off, and tells owners and admins once (webhook and mail)', async () => {
  const ws = await stack.workspace({ credits: 0, name: 'Recharge & co' });
  const hook = await stack.api.post('/v1/webhooks', {
    headers: ws.auth,
    body: { url: receiver.url, events: ['billing.auto_recharge_failed'] },
  });
  expect(hook.status).toBe(201);
  const owner = await signUpUser(stack);
  const admin = await signUpUser(stack);
  const viewer = await signUpUser(stack);
  const unverified = await signUpUser(stack);
  await stack.runtime.db.updateTable('users').set({ email_verified_at: null }).where('id', '=', unverified.userId).execute();
  await stack.runtime.db
    .insertInto('memberships')
    .values([
      { workspace_id: ws.workspaceId, user_id: owner.userId, role: 'owner' },
      { workspace_id: ws.workspaceId, user_id: admin.userId, role: 'admin' },
      { workspace_id: ws.workspaceId, user_id: viewer.userId, role: 'viewer' },
      { workspace_id: ws.workspaceId, user_id: unverified.userId, role: 'admin' },
    ])
    .execute();
  await buyOnce(ws);
  expect((await setAutoRecharge(ws, true)).status).toBe(200);
  const customer = await stack.runtime.db
    .selectFrom('billing_customers')
    .selectAll()
    .where('workspace_id', '=', ws.workspaceId)
    .executeTakeFirstOrThrow();
  fake.declinePaymentMethod(customer.payment_method_id!);

  expect(await queue(ws.workspaceId)).toBe(1);
  const failed = await eventually(async () => {
    const [row] = await recharges(ws.workspaceId);
    return row?.status === 'failed' ? row : null;
  });
  await fake.settled();
  expect(failed.failure_message).toMatch(/insufficient funds|declined/i);
  expect(failed.payment_intent_id).toMatch(/^pi_/);
  expect(intentCalls(ws.workspaceId)).toHaveLength(1);
  // Stripe's payment_intent.payment_failed arrived too, and was handled without a second event.
  expect(
    fake.events.some((e) => e.type === 'payment_intent.payment_failed' && metadataOf(e.data.object).workspace_id === ws.workspaceId),
  ).toBe(true);
  expect(fake.deliveries.filter((d) => d.status !== 200)).toEqual([]);

  const billing = await stack.api.get('/v1/billing', { headers: ws.auth });
  expect(billing.body.auto_recharge).toMatchObject({ enabled: false, payment_method: { brand: 'visa', last4: '4242' } });
  expect(await usage(ws)).toMatchObject({ purchased_credits: 10000 });
  const list = await stack.api.get('/v1/billing/payments', { headers: ws.auth });
  expect(list.body.data[0]).toMatchObject({ id: failed.id, kind: 'auto_recharge', status: 'failed', paid_at: null });

  const [message] = await receiver.received(1);
  const body = JSON.parse(message.body);
  expect(body).toMatchObject({
    type: 'billing.auto_recharge_failed',
    workspace_id: ws.workspaceId,
    data: { payment: { id: failed.id, status: 'failed' }, scope: null },
  });
  const events = await stack.runtime.db
    .selectFrom('webhook_events')
    .select('id')
    .where('workspace_id', '=', ws.workspaceId)
    .where('type', '=', 'billing.auto_recharge_failed')
    .execute();
  expect(events).toHaveLength(1);

  const failedMail = (to: string) => smtp.waitFor((m) => m.to === to && /Auto-recharge failed/.test(m.subject));
  const toOwner = await failedMail(owner.email);
  const toAdmin = await failedMail(admin.email);
  // The checkout before it was mailed to them too.
  expect(smtp.messages.some((m) => m.to === owner.email && /Payment received/.test(m.subject))).toBe(true);
  for (const mail of [toOwner, toAdmin]) {
    expect(mail.subject).toMatch(/Auto-recharge failed/);
    expect(mail.text).toContain('Recharge & co');
    expect(mail.text).toContain('http://console.test/console/billing');
  }
  await new Promise((resolve) => setTimeout(resolve, 500));
  const recipients = smtp.messages.filter((m) => /Auto-recharge failed/.test(m.subject)).map((m) => m.to);
  expect(recipients.sort()).toEqual([owner.email, admin.email].sort());

  // Off now: nothing more is queued.
  expect(await queue(ws.workspaceId)).toBe(0);
});

it('a workspace with auto-recharge on but no card left fails the recharge the same way', async () => {
  const ws = await stack.workspace({ credits: 0 });
  await buyOnce(ws);
  expect((await setAutoRecharge(ws, true)).status).toBe(200);
  await stack.runtime.db
    .updateTable('billing_customers')
    .set({ payment_method_id: null })
    .where('workspace_id', '=', ws.workspaceId)
    .execute();
  expect(await queue(ws.workspaceId)).toBe(1);
  const failed = await eventually(async () => {
    const [row] = await recharges(ws.workspaceId);
    return row?.status === 'failed' ? row : null;
  });
  expect(failed.failure_message).toMatch(/No saved card/);
  expect(intentCalls(ws.workspaceId)).toHaveLength(0);
  expect((await stack.api.get('/v1/billing', { headers: ws.auth })).body.auto_recharge.enabled).toBe(false);
});

describe('Stripe unreachable', () => {
  let down: TestStack;
  beforeAll(async () => {
    // Port 9 (discard) on loopback refuses connections.
    down = await startTestStack({
      env: { STRIPE_SECRET_KEY: 'sk_test_down', STRIPE_WEBHOOK_SECRET: 'whsec_down', STRIPE_API_BASE: 'http://127.0.0.1:9' },
    });
  });
  afterAll(async () => {
    await down?.close();
  });

  it('a recharge is tried again later with backoff, and a checkout answers 503 billing_unavailable', async () => {
    const ws = await down.workspace({ credits: 0 });
    await down.runtime.db
      .updateTable('workspaces')
      .set({ auto_recharge_enabled: true, auto_recharge_threshold: 10, auto_recharge_pack_id: 'pack_10k' })
      .where('id', '=', ws.workspaceId)
      .execute();
    await down.runtime.db
      .insertInto('billing_customers')
      .values({
        workspace_id: ws.workspaceId,
        stripe_customer_id: 'cus_down',
        payment_method_id: 'pm_down',
        card_brand: 'visa',
        card_last4: '4242',
      })
      .execute();
    const queued = await down.runtime.db
      .transaction()
      .execute((tx) => queueAutoRecharges(tx, new Date(), [{ workspaceId: ws.workspaceId, pack: PACK }]));
    expect(queued).toBe(1);
    const retried = await eventually(async () => {
      const row = await down.runtime.db
        .selectFrom('billing_payments')
        .selectAll()
        .where('workspace_id', '=', ws.workspaceId)
        .executeTakeFirstOrThrow();
      return row.attempts === 1 && row.locked_until === null ? row : null;
    }, 30_000);
    expect(retried).toMatchObject({ status: 'pending', payment_intent_id: null });
    expect(retried.next_attempt_at!.getTime()).toBeGreaterThan(Date.now());
    const checkout = await down.api.post('/v1/billing/checkout', { headers: ws.auth, body: { pack_id: 'pack_10k' } });
    expect(checkout.status).toBe(503);
    expect(checkout.body.detail.error).toBe('billing_unavailable');
  }, 60_000);
});
