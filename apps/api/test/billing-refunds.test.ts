import { type FakeStripe, startFakeStripe } from '@sdx/fake-stripe';
import type { components } from '@sdx/contract';
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

type Payment = components['schemas']['Payment'];
type BillingWebhookEvent = components['schemas']['BillingWebhookEvent'];

/**
 * Refunds (extensions-2.md 1 and 6): `charge.refunded` reverses floor(credits × amount_refunded
 * / amount) less what earlier refunds reversed, taken from the purchased credits that are
 * neither spent nor reserved (never below 0); the rest is the payment's
 * refund_shortfall_credits; lifetime_purchased is unchanged; `billing.payment_refunded` is sent.
 * Credits are spent by running real jobs in a workspace without a plan allowance.
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

async function buy(ws: SeededWorkspace): Promise<{ paymentId: string; intentId: string }> {
  const made = await stack.api.post('/v1/billing/checkout', { headers: ws.auth, body: { pack_id: 'pack_small' } });
  expect(made.status).toBe(201);
  const events = await fake.payCheckoutSession(made.body.checkout_id);
  await fake.settled();
  const completed = events.find((e) => e.type === 'checkout.session.completed')!;
  const payment = await stack.runtime.db
    .selectFrom('billing_payments')
    .select('id')
    .where('checkout_session_id', '=', made.body.checkout_id)
    .executeTakeFirstOrThrow();
  return { paymentId: payment.id, intentId: completed.data.object.payment_intent as string };
}

async function usage(ws: SeededWorkspace) {
  return (await stack.api.get('/v1/usage/current', { headers: ws.auth })).body as {
    purchased_credits: number;
    lifetime_purchased: number;
    credits_reserved: number;
  };
}

async function payment(ws: SeededWorkspace, id: string) {
  const list = await stack.api.get('/v1/billing/payments', { headers: ws.auth });
  return (list.body.data as Payment[]).find((p) => p.id === id)!;
}

async function submit(ws: SeededWorkspace, target: string, limit: number) {
  const res = await stack.api.post('/v1/jobs', {
    headers: { ...ws.auth, 'Cache-Control': 'no-cache' },
    body: { operation: 'posts', target, limit },
  });
  expect(res.status).toBe(202);
  return res.body.id as string;
}

it('a partial then a full refund after spending: what is left is removed, the rest is the shortfall; lifetime unchanged; events sent', async () => {
  const ws = await stack.workspace({ credits: 0 });
  const hook = await stack.api.post('/v1/webhooks', {
    headers: ws.auth,
    body: { url: receiver.url, events: ['billing.payment_refunded', 'billing.payment_succeeded'] },
  });
  expect(hook.status).toBe(201);
  const { paymentId, intentId } = await buy(ws);
  expect(await usage(ws)).toMatchObject({ purchased_credits: 100, lifetime_purchased: 100 });

  // 30 posts at 2 credits: 60 purchased credits spent.
  const job = await submit(ws, 'refund_sandbox_count_30', 40);
  await waitForJob(stack, ws.auth, job, (j) => j.status === 'completed');
  expect(await usage(ws)).toMatchObject({ purchased_credits: 40, lifetime_purchased: 100 });

  // Half refunded: 50 to reverse, 40 left to remove.
  await fake.refund(intentId, 500);
  await fake.settled();
  expect(await usage(ws)).toMatchObject({ purchased_credits: 0, lifetime_purchased: 100 });
  expect(await payment(ws, paymentId)).toMatchObject({ status: 'partially_refunded', refunded_credits: 50, refund_shortfall_credits: 10 });

  // The rest refunded (cumulative 1000): 50 more to reverse, nothing left to remove.
  await fake.refund(intentId);
  await fake.settled();
  expect(await usage(ws)).toMatchObject({ purchased_credits: 0, lifetime_purchased: 100 });
  expect(await payment(ws, paymentId)).toMatchObject({ status: 'refunded', refunded_credits: 100, refund_shortfall_credits: 60 });

  const refunds = await stack.runtime.db
    .selectFrom('credit_ledger')
    .selectAll()
    .where('workspace_id', '=', ws.workspaceId)
    .where('entry_type', '=', 'refund')
    .execute();
  expect(refunds.map((r) => [r.credits, r.purchased_credits, r.payment_id])).toEqual([[-40, -40, paymentId]]);
  expect(fake.deliveries.filter((d) => d.status !== 200)).toEqual([]);

  const messages = await receiver.received(3);
  const bodies = messages.map((m) => JSON.parse(m.body) as BillingWebhookEvent);
  expect(bodies.map((b) => b.type)).toEqual(['billing.payment_succeeded', 'billing.payment_refunded', 'billing.payment_refunded']);
  expect(bodies[0].data).toMatchObject({ payment: { id: paymentId, status: 'paid' }, available_credits: 100, scope: null });
  expect(bodies[1].data.payment).toMatchObject({
    id: paymentId,
    status: 'partially_refunded',
    refunded_credits: 50,
    refund_shortfall_credits: 10,
  });
  expect(bodies[2].data).toMatchObject({
    payment: { status: 'refunded', refunded_credits: 100, refund_shortfall_credits: 60 },
    available_credits: 0,
  });
  expect(bodies.every((b) => b.workspace_id === ws.workspaceId)).toBe(true);
}, 60_000);

it('a refund never takes purchased credits reserved by a running job; the job still settles', async () => {
  const ws = await stack.workspace({ credits: 0 });
  const { paymentId, intentId } = await buy(ws);
  // Reserves 80 (40 posts at most) while it runs slowly, then delivers 10 (20 credits).
  const job = await submit(ws, 'held_sandbox_count_10_sandbox_slow_2500', 40);
  await eventually(async () => (await usage(ws)).credits_reserved === 80);
  await fake.refund(intentId);
  await fake.settled();
  expect(await payment(ws, paymentId)).toMatchObject({ status: 'refunded', refunded_credits: 100, refund_shortfall_credits: 80 });
  expect(await usage(ws)).toMatchObject({ purchased_credits: 80, credits_reserved: 80, lifetime_purchased: 100 });
  await waitForJob(stack, ws.auth, job, (j) => j.status === 'completed');
  const after = await usage(ws);
  expect(after).toMatchObject({ purchased_credits: 60, credits_reserved: 0 });
}, 60_000);

it('a repeated or out-of-order refund event changes nothing', async () => {
  const ws = await stack.workspace({ credits: 0 });
  const { paymentId, intentId } = await buy(ws);
  const first = await fake.refund(intentId, 300);
  await fake.settled();
  expect(await payment(ws, paymentId)).toMatchObject({ status: 'partially_refunded', refunded_credits: 30, refund_shortfall_credits: 0 });
  expect(await usage(ws)).toMatchObject({ purchased_credits: 70 });
  // The same charge state told again under a new event ID (Stripe sends charge.refunded per refund).
  const again = fake.buildEvent('charge.refunded', first.data.object);
  const payload = JSON.stringify(again);
  const res = await stack.api.post('/v1/billing/stripe/webhook', { raw: payload, headers: { 'Stripe-Signature': fake.sign(payload) } });
  expect(res.body).toEqual({ received: true, outcome: 'handled' });
  expect(await usage(ws)).toMatchObject({ purchased_credits: 70 });
  expect(await payment(ws, paymentId)).toMatchObject({ refunded_credits: 30 });
});
