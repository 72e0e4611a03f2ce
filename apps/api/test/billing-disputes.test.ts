import { type FakeStripe, type StripeEvent, startFakeStripe } from '@sdx/fake-stripe';
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

type AuditEvent = components['schemas']['AuditEvent'];
type Payment = components['schemas']['Payment'];

/**
 * Stripe's edge cases (extensions-3.md 1): a `charge.refunded` or `charge.dispute.created` that
 * arrives before its payment was granted is kept and applied when the grant happens (a full one:
 * the payment ends `refunded`, nothing left granted); `charge.dispute.created` reverses like a
 * full refund and turns auto-recharge off; `charge.dispute.closed` with `status: won` grants
 * back what the dispute took. Each exactly once per event ID; each money change audited.
 */

const WEBHOOK = '/v1/billing/stripe/webhook';
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
  fake.setWebhookUrl(`${stack.url}${WEBHOOK}`);
  expect((await checkLedger(stack.runtime.db)).problems).toEqual([]);
});

function deliver(event: StripeEvent) {
  const payload = JSON.stringify(event);
  return stack.api.post(WEBHOOK, { raw: payload, headers: { 'Stripe-Signature': fake.sign(payload) } });
}

/** Runs `steps` with the fake's deliveries held back; answers the events they emitted. */
async function undelivered(steps: () => Promise<unknown>): Promise<StripeEvent[]> {
  const from = fake.events.length;
  fake.setWebhookUrl(null);
  try {
    await steps();
  } finally {
    fake.setWebhookUrl(`${stack.url}${WEBHOOK}`);
  }
  return fake.events.slice(from);
}

async function checkout(ws: SeededWorkspace): Promise<string> {
  const made = await stack.api.post('/v1/billing/checkout', { headers: ws.auth, body: { pack_id: 'pack_small' } });
  expect(made.status).toBe(201);
  return made.body.checkout_id as string;
}

async function buy(ws: SeededWorkspace): Promise<{ paymentId: string; intentId: string }> {
  const id = await checkout(ws);
  const events = await fake.payCheckoutSession(id, { card: { brand: 'visa', last4: '4242' } });
  await fake.settled();
  const payment = await stack.runtime.db
    .selectFrom('billing_payments')
    .select('id')
    .where('checkout_session_id', '=', id)
    .executeTakeFirstOrThrow();
  return {
    paymentId: payment.id,
    intentId: events.find((e) => e.type === 'checkout.session.completed')!.data.object.payment_intent as string,
  };
}

async function usage(ws: SeededWorkspace) {
  return (await stack.api.get('/v1/usage/current', { headers: ws.auth })).body as { purchased_credits: number; lifetime_purchased: number };
}

async function payment(ws: SeededWorkspace, id: string): Promise<Payment> {
  const list = await stack.api.get('/v1/billing/payments', { headers: ws.auth });
  return (list.body.data as Payment[]).find((p) => p.id === id)!;
}

async function audit(ws: SeededWorkspace, action: string): Promise<AuditEvent[]> {
  return ((await stack.api.get('/v1/audit-events', { headers: ws.auth })).body as AuditEvent[]).filter((e) => e.action === action);
}

/** A webhook taking every payment event: billing events are written where a webhook takes them. */
async function subscribe(ws: SeededWorkspace): Promise<void> {
  const hook = await stack.api.post('/v1/webhooks', {
    headers: ws.auth,
    body: { url: receiver.url, events: ['billing.payment_refunded', 'billing.payment_succeeded'] },
  });
  expect(hook.status).toBe(201);
}

/** The billing webhook of the workspace with that reason, once delivered. */
async function told(ws: SeededWorkspace, reason: string) {
  return eventually(
    () =>
      receiver.messages.map((m) => JSON.parse(m.body)).find((b) => b.workspace_id === ws.workspaceId && b.data?.reason === reason) ?? null,
  );
}

async function billingEvents(ws: SeededWorkspace) {
  return stack.runtime.db
    .selectFrom('webhook_events')
    .select(['type', 'subject_id'])
    .where('workspace_id', '=', ws.workspaceId)
    .where('type', 'like', 'billing.%')
    .orderBy('created_at')
    .execute();
}

describe('a refund or dispute before the grant', () => {
  it('a full refund delivered before checkout.session.completed is kept, then applied at the grant: refunded, nothing granted, once', async () => {
    const ws = await stack.workspace({ credits: 0 });
    await subscribe(ws);
    const id = await checkout(ws);
    const events = await undelivered(async () => {
      const paid = await fake.payCheckoutSession(id);
      await fake.refund(paid.find((e) => e.type === 'checkout.session.completed')!.data.object.payment_intent as string);
    });
    const refund = events.find((e) => e.type === 'charge.refunded')!;
    const completed = events.find((e) => e.type === 'checkout.session.completed')!;
    expect((await deliver(refund)).body).toEqual({ received: true, outcome: 'handled' });
    expect(await usage(ws)).toMatchObject({ purchased_credits: 0, lifetime_purchased: 0 });
    const [row] = await stack.runtime.db.selectFrom('billing_payments').selectAll().where('checkout_session_id', '=', id).execute();
    expect(row.status).toBe('pending');

    expect((await deliver(completed)).body).toEqual({ received: true, outcome: 'handled' });
    expect(await payment(ws, row.id)).toMatchObject({ status: 'refunded', refunded_credits: 100, refund_shortfall_credits: 0 });
    expect((await usage(ws)).purchased_credits).toBe(0);
    // The other events of the payment, and every repeat, change nothing more.
    for (const event of [...events, refund, completed]) expect((await deliver(event)).status).toBe(200);
    expect((await deliver(refund)).body.outcome).toBe('duplicate');
    expect(await payment(ws, row.id)).toMatchObject({ status: 'refunded', refunded_credits: 100 });
    expect((await usage(ws)).purchased_credits).toBe(0);
    // No "payment received" for a payment that left nothing granted; the refund is told and audited.
    expect((await billingEvents(ws)).map((e) => e.type)).toEqual(['billing.payment_refunded']);
    expect(await audit(ws, 'billing.payment_refunded')).toHaveLength(1);
  });

  it('a partial refund before the grant leaves the rest granted', async () => {
    const ws = await stack.workspace({ credits: 0 });
    await subscribe(ws);
    const id = await checkout(ws);
    const events = await undelivered(async () => {
      const paid = await fake.payCheckoutSession(id);
      await fake.refund(paid.find((e) => e.type === 'checkout.session.completed')!.data.object.payment_intent as string, 250);
    });
    await deliver(events.find((e) => e.type === 'charge.refunded')!);
    await deliver(events.find((e) => e.type === 'checkout.session.completed')!);
    const row = await stack.runtime.db
      .selectFrom('billing_payments')
      .select('id')
      .where('checkout_session_id', '=', id)
      .executeTakeFirstOrThrow();
    expect(await payment(ws, row.id)).toMatchObject({ status: 'partially_refunded', refunded_credits: 25 });
    expect((await usage(ws)).purchased_credits).toBe(75);
    expect((await billingEvents(ws)).map((e) => e.type)).toEqual(['billing.payment_succeeded', 'billing.payment_refunded']);
  });

  it('a dispute before the grant: the grant leaves nothing, the payment is refunded and disputed; a won close grants the pack back', async () => {
    const ws = await stack.workspace({ credits: 0 });
    const id = await checkout(ws);
    let disputeId = '';
    const events = await undelivered(async () => {
      const paid = await fake.payCheckoutSession(id);
      const created = await fake.dispute(paid.find((e) => e.type === 'checkout.session.completed')!.data.object.payment_intent as string);
      disputeId = created.data.object.id as string;
    });
    await deliver(events.find((e) => e.type === 'charge.dispute.created')!);
    await deliver(events.find((e) => e.type === 'checkout.session.completed')!);
    const row = await stack.runtime.db
      .selectFrom('billing_payments')
      .select('id')
      .where('checkout_session_id', '=', id)
      .executeTakeFirstOrThrow();
    expect(await payment(ws, row.id)).toMatchObject({ status: 'refunded', dispute_status: 'open', disputed_credits: 100 });
    expect((await usage(ws)).purchased_credits).toBe(0);

    await fake.closeDispute(disputeId, 'won');
    await fake.settled();
    expect(await payment(ws, row.id)).toMatchObject({ status: 'paid', dispute_status: 'won', refunded_credits: 0 });
    expect((await usage(ws)).purchased_credits).toBe(100);
  });
});

describe('disputes of a granted payment', () => {
  it('created: reversed like a full refund (spent credits are the shortfall), auto-recharge off, event and audit; won: granted back once', async () => {
    const ws = await stack.workspace({ credits: 0 });
    const hook = await stack.api.post('/v1/webhooks', {
      headers: ws.auth,
      body: { url: receiver.url, events: ['billing.payment_refunded', 'billing.payment_succeeded'] },
    });
    expect(hook.status).toBe(201);
    const { paymentId, intentId } = await buy(ws);
    expect(
      (
        await stack.api.put('/v1/billing/auto-recharge', {
          headers: ws.auth,
          body: { enabled: true, threshold_credits: 10, pack_id: 'pack_small' },
        })
      ).status,
    ).toBe(200);
    // 20 posts at 2 credits: 40 spent, 60 left.
    const job = await stack.api.post('/v1/jobs', {
      headers: { ...ws.auth, 'Cache-Control': 'no-cache' },
      body: { operation: 'posts', target: 'dispute_sandbox_count_20', limit: 20 },
    });
    await waitForJob(stack, ws.auth, job.body.id, (j) => j.status === 'completed');
    expect((await usage(ws)).purchased_credits).toBe(60);

    const created = await fake.dispute(intentId);
    await fake.settled();
    expect(await payment(ws, paymentId)).toMatchObject({
      status: 'refunded',
      dispute_status: 'open',
      disputed_credits: 60,
      refunded_credits: 100,
      refund_shortfall_credits: 40,
    });
    expect(await usage(ws)).toMatchObject({ purchased_credits: 0, lifetime_purchased: 100 });
    expect((await stack.api.get('/v1/billing', { headers: ws.auth })).body.auto_recharge.enabled).toBe(false);
    expect(await audit(ws, 'billing.payment_disputed')).toMatchObject([
      { actor: { type: 'system' }, target_id: paymentId, data: { disputed_credits: 60, shortfall_credits: 40 } },
    ]);
    expect(await audit(ws, 'billing.auto_recharge_disabled')).toMatchObject([{ data: { reason: 'dispute', payment_id: paymentId } }]);
    const disputed = await told(ws, 'dispute');
    expect(disputed).toMatchObject({
      type: 'billing.payment_refunded',
      data: { payment: { id: paymentId, dispute_status: 'open' }, available_credits: 0 },
    });
    // The same event again, or under a new ID: nothing more is taken.
    expect((await deliver(created)).body.outcome).toBe('duplicate');
    await deliver(fake.buildEvent('charge.dispute.created', created.data.object));
    expect(await payment(ws, paymentId)).toMatchObject({ disputed_credits: 60, refund_shortfall_credits: 40 });

    const closed = await fake.closeDispute(created.data.object.id as string, 'won');
    await fake.settled();
    expect(await payment(ws, paymentId)).toMatchObject({
      status: 'paid',
      dispute_status: 'won',
      disputed_credits: 60,
      refunded_credits: 0,
      refund_shortfall_credits: 0,
    });
    expect(await usage(ws)).toMatchObject({ purchased_credits: 60, lifetime_purchased: 100 });
    expect(await audit(ws, 'billing.dispute_closed')).toMatchObject([{ data: { status: 'won', credits_granted_back: 60 } }]);
    expect((await deliver(closed)).body.outcome).toBe('duplicate');
    await deliver(fake.buildEvent('charge.dispute.closed', closed.data.object));
    expect((await usage(ws)).purchased_credits).toBe(60);
    const won = await told(ws, 'dispute_won');
    expect(won).toMatchObject({ type: 'billing.payment_succeeded', data: { available_credits: 60 } });
    // Auto-recharge stays off until an admin turns it on again.
    expect((await stack.api.get('/v1/billing', { headers: ws.auth })).body.auto_recharge.enabled).toBe(false);
  }, 60_000);

  it('lost: nothing comes back; a refund during the dispute takes nothing more', async () => {
    const ws = await stack.workspace({ credits: 0 });
    await subscribe(ws);
    const { paymentId, intentId } = await buy(ws);
    const created = await fake.dispute(intentId);
    await fake.settled();
    expect((await usage(ws)).purchased_credits).toBe(0);
    // A charge.refunded told while the dispute stands (crafted: Stripe refuses refunds of disputed charges).
    const charge = await stack.runtime.db
      .selectFrom('billing_payments')
      .select('amount')
      .where('id', '=', paymentId)
      .executeTakeFirstOrThrow();
    await deliver(
      fake.buildEvent('charge.refunded', {
        id: created.data.object.charge,
        object: 'charge',
        payment_intent: intentId,
        amount: charge.amount,
        amount_refunded: 500,
        currency: 'usd',
      }),
    );
    await fake.closeDispute(created.data.object.id as string, 'lost');
    await fake.settled();
    expect(await payment(ws, paymentId)).toMatchObject({
      status: 'refunded',
      dispute_status: 'lost',
      disputed_credits: 100,
      refunded_credits: 100,
    });
    expect(await usage(ws)).toMatchObject({ purchased_credits: 0, lifetime_purchased: 100 });
    expect(await audit(ws, 'billing.dispute_closed')).toMatchObject([{ data: { status: 'lost', credits_granted_back: 0 } }]);
    // Succeeded, then the dispute; the refund during it and the lost close tell nothing.
    expect((await billingEvents(ws)).map((e) => e.type)).toEqual(['billing.payment_succeeded', 'billing.payment_refunded']);
  });
});
